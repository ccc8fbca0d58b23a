"""A real PyTorch training loop over shmloader, for the torch tests: an MLP with a
categorical embedding trains on the synthetic dataset on the CPU and writes its loss
curve (exact, as float.hex) to --out.

    python trainer.py --job J --out losses.json [--dataloader] [--stop-after N --ckpt F]
                      [--resume F] [--ddp]

The model is seeded and single-threaded, so the loss curve is a function of the batches
alone: equal curves mean equal batches in equal order.
--ddp: run under torchrun (one process per rank; rank from $LOCAL_RANK); gradients are
averaged with DistributedDataParallel over gloo.
"""

from __future__ import annotations

import argparse
import json
import sys

import torch
import torch.distributed as dist

import shmloader.torch as slt


class MLP(torch.nn.Module):
    def __init__(self, features: int, buckets: int) -> None:
        super().__init__()
        self.emb = torch.nn.EmbeddingBag(buckets, 8, mode="sum")
        self.net = torch.nn.Sequential(
            torch.nn.Linear(features + 8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1)
        )

    def forward(self, x: torch.Tensor, cats: torch.Tensor) -> torch.Tensor:
        return self.net(torch.cat([x, self.emb(cats)], dim=1)).squeeze(1)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--job", required=True)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--out", required=True, help="result file; {rank} is replaced")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--dataloader", action="store_true", help="through DataLoader(Dataset)")
    ap.add_argument("--stop-after", type=int, default=0, help="checkpoint after N steps, exit")
    ap.add_argument("--ckpt", default=None)
    ap.add_argument("--resume", default=None)
    ap.add_argument("--ddp", action="store_true")
    args = ap.parse_args()

    torch.manual_seed(0)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    if args.ddp:
        dist.init_process_group("gloo")
    model: torch.nn.Module = MLP(features=8, buckets=1000)
    if args.ddp:
        model = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    ds = slt.Dataset(args.job, dir=args.dir, timeout=60, batch_timeout=60)
    source = torch.utils.data.DataLoader(ds, batch_size=None) if args.dataloader else ds
    losses: list[str] = []
    start_epoch = 0
    if args.resume:
        ckpt = torch.load(args.resume, weights_only=False)
        model.load_state_dict(ckpt["model"])
        opt.load_state_dict(ckpt["opt"])
        ds.load_state_dict(ckpt["loader"])
        losses = ckpt["losses"]
        start_epoch = ckpt["loader"]["epoch"]
    assert len(ds) > 0 and len(source) == len(ds)

    seen: list[list[object]] = []  # (epoch, step, ids) of every batch
    for epoch in range(start_epoch, args.epochs):
        ds.set_epoch(epoch)
        for batch in source:
            logit = model(batch["x"], batch["cats"])
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logit, batch["label"])
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(float(loss).hex())
            seen.append([batch.epoch, batch.step, batch["id"].tolist()])
            if args.stop_after and len(losses) == args.stop_after:
                state = ds.state_dict()
                torch.save({"model": model.state_dict(), "opt": opt.state_dict(),
                            "loader": state, "losses": losses}, args.ckpt)  # fmt: skip
                ds.close()
                return 0
    stats = ds.loader.stats()
    ds.close()
    with open(args.out.format(rank=ds.rank), "w") as f:
        json.dump({"losses": losses, "seen": seen, "rank": ds.rank,
                   "stall": stats.stall, "batches": stats.batches}, f)  # fmt: skip
    if args.ddp:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
