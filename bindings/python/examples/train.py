"""A trainer rank of the demo: reads its ring through the Python binding and takes a
small model step per batch (logistic regression on the features; torch if installed,
numpy otherwise). Prints its throughput and, with --json, one JSON line for a summary.

    python train.py --job demo --rank 0
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

import shmloader


class NumpyModel:
    """Logistic regression over the features and a hashed-categorical embedding sum."""

    def __init__(self, features: int, buckets: int, lr: float = 0.05) -> None:
        rng = np.random.default_rng(0)
        self.w = rng.normal(0, 0.01, features).astype(np.float32)
        self.emb = np.zeros(buckets, np.float32)
        self.lr = lr

    def step(self, x: np.ndarray, cats: np.ndarray, y: np.ndarray) -> float:
        logit = x @ self.w + self.emb[cats].sum(axis=1)
        p = 1.0 / (1.0 + np.exp(-logit))
        grad = (p - y) / len(y)
        self.w -= self.lr * (x.T @ grad)
        np.add.at(self.emb, cats, -self.lr * grad[:, None])
        return float(-np.mean(y * np.log(p + 1e-7) + (1 - y) * np.log(1 - p + 1e-7)))


class TorchModel:
    def __init__(self, features: int, buckets: int) -> None:
        import torch

        self.torch = torch
        self.lin = torch.nn.Linear(features, 1)
        self.emb = torch.nn.EmbeddingBag(buckets, 1, mode="sum")
        params = list(self.lin.parameters()) + list(self.emb.parameters())
        self.opt = torch.optim.SGD(params, lr=0.05)

    def step(self, x: np.ndarray, cats: np.ndarray, y: np.ndarray) -> float:
        t = self.torch
        xt = t.from_numpy(x)  # a view of the ring slot: no copy
        logit = self.lin(xt).squeeze(1) + self.emb(t.from_numpy(cats)).squeeze(1)
        loss = t.nn.functional.binary_cross_entropy_with_logits(logit, t.from_numpy(y))
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return float(loss)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--job", default="demo")
    ap.add_argument("--rank", type=int, default=0)
    ap.add_argument("--dir", default=None, help="segment directory (default /dev/shm)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for serve")
    ap.add_argument("--numpy", action="store_true", help="use numpy even if torch is installed")
    ap.add_argument("--json", action="store_true", help="print a JSON summary line at the end")
    args = ap.parse_args()

    loader = shmloader.attach(job=args.job, rank=args.rank, timeout=args.timeout, dir=args.dir)
    model: NumpyModel | TorchModel | None = None
    rows = nbytes = batches = 0
    waited = 0.0
    loss = float("nan")
    start = time.perf_counter()
    first_batch = None
    epochs: list[dict] = []  # per epoch: batches, rows, seconds (from its first batch's arrival)
    with loader:
        epoch = 0
        while not loader.ended:
            t0 = time.perf_counter()
            epoch_start, epoch_rows, epoch_batches = None, rows, batches
            for batch in loader.epoch():
                now = time.perf_counter()
                if first_batch is None:
                    first_batch = now - start  # start-up, not a stall
                else:
                    waited += now - t0
                if epoch_start is None:
                    epoch_start = t0 if epochs else now
                x, cats, y = batch["features"], batch["cats"], batch["label"]
                if model is None:
                    buckets = 100_000
                    try:
                        if args.numpy:
                            raise ImportError
                        model = TorchModel(x.shape[1], buckets)
                    except ImportError:
                        model = NumpyModel(x.shape[1], buckets)
                loss = model.step(x, cats, y)
                rows += batch.rows
                nbytes += sum(a.nbytes for a in batch.values())
                batches += 1
                t0 = time.perf_counter()
            if not loader.ended:
                secs = time.perf_counter() - (epoch_start or time.perf_counter())
                n, nb = rows - epoch_rows, batches - epoch_batches
                epochs.append({"batches": nb, "rows": n, "seconds": round(secs, 3)})
                print(
                    f"rank {args.rank}: epoch {epoch} done, {nb} batches, {n:,} rows, "
                    f"{n / secs if secs > 0 else 0:,.0f} rows/s, loss {loss:.4f}",
                    flush=True,
                )
                epoch += 1
    elapsed = time.perf_counter() - start - (first_batch or 0.0)
    summary = {
        "rank": args.rank,
        "batches": batches,
        "rows": rows,
        "seconds": round(elapsed, 3),
        "rows_per_s": round(rows / elapsed) if elapsed > 0 else 0,
        "mb_per_s": round(nbytes / elapsed / 1e6, 1) if elapsed > 0 else 0,
        "wait_pct": round(100 * waited / elapsed, 1) if elapsed > 0 else 0,
        "first_batch_s": round(first_batch or 0.0, 3),
        "loss": round(loss, 4),
        "model": type(model).__name__,
        "epochs": epochs,
    }
    print(
        f"rank {args.rank}: in all {batches} batches, {rows:,} rows in {elapsed:.1f} s: "
        f"{summary['rows_per_s']:,} rows/s, {summary['mb_per_s']} MB/s, "
        f"waited for data {summary['wait_pct']}% of the time, first batch after "
        f"{summary['first_batch_s']} s, loss {loss:.4f} ({summary['model']})",
        flush=True,
    )
    if args.json:
        print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
