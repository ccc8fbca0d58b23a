"""A real PyTorch training loop (trainer.py: an MLP with an embedding, on the CPU) reads
real `shmloader serve` processes through shmloader.torch. Its loss curve is a function of
the batches alone, so equal curves mean the same bytes in the same order: across runs,
serve worker counts, the DataLoader or the loader directly, and a resume from a
checkpoint taken mid-epoch by a trainer that then exits."""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

import servekit

TRAINER = Path(__file__).resolve().parent / "trainer.py"
OUTPUTS = {
    "x": {
        "columns": ["f000..f007"],
        "transforms": [{"fill_null": 0}, {"clip": {"min": -5, "max": 5}}],
    },
    "cats": {"columns": ["c00..c02"], "transforms": [{"hash_bucket": {"buckets": 1000}}]},
    "label": "label",
    "id": "id",
}


def config(tmp: Path, dataset: Path, name: str, **keys: object) -> Path:
    keys = {"dataset": str(dataset), "batch_size": 500, "seed": 11, "epochs": 2, "ranks": 1,
            "shuffle": {"row_groups": True, "window": 4}, "outputs": OUTPUTS, **keys}  # fmt: skip
    return servekit.write_config(tmp / f"{name}.yaml", **keys)


def train(group: servekit.Group, tmp: Path, cfg: Path, name: str, *flags: str,
          serve_flags: tuple[str, ...] = ()) -> dict:  # fmt: skip
    """Serve cfg and train one epoch loop to the end; the trainer's result."""
    job = "tr-" + uuid.uuid4().hex[:12]
    serve = group.serve(cfg, job, *serve_flags)
    out = tmp / f"{name}.json"
    child = group.run([sys.executable, str(TRAINER), "--job", job, "--dir", str(group.shm_dir),
                       "--out", str(out), *flags], timeout=120)  # fmt: skip
    assert child.rc == 0, child.describe()
    assert serve.wait(timeout=30) == 0, serve.describe()
    return json.loads(out.read_text())


def test_loss_curves_are_bitwise_reproducible(group, gen_dataset: Path, tmp_path: Path) -> None:
    cfg = config(tmp_path, gen_dataset, "a")
    first = train(group, tmp_path, cfg, "first")
    assert len(first["losses"]) == 2 * 40 and first["batches"] == 80
    again = train(group, tmp_path, cfg, "again")
    assert again["losses"] == first["losses"], "same seed, same config: another loss curve"
    one = train(group, tmp_path, cfg, "workers1", serve_flags=("--workers", "1"))
    three = train(group, tmp_path, cfg, "workers3", serve_flags=("--workers", "3"))
    assert one["losses"] == first["losses"] and three["losses"] == first["losses"], (
        "serve's worker count changed the batches"
    )
    via_dl = train(group, tmp_path, cfg, "dataloader", "--dataloader")
    assert via_dl["losses"] == first["losses"], "DataLoader(Dataset) changed the batches"
    other = train(group, tmp_path, config(tmp_path, gen_dataset, "b", seed=12), "seed12")
    assert other["losses"] != first["losses"], "another seed gave the same loss curve"


def test_a_resumed_run_continues_the_same_curve(group, gen_dataset: Path, tmp_path: Path) -> None:
    cfg = config(tmp_path, gen_dataset, "r")
    whole = train(group, tmp_path, cfg, "whole")
    job = "rs-" + uuid.uuid4().hex[:12]
    serve = group.serve(cfg, job)
    ckpt, out = tmp_path / "ckpt.pt", tmp_path / "resumed.json"
    base = [
        sys.executable,
        str(TRAINER),
        "--job",
        job,
        "--dir",
        str(group.shm_dir),
        "--out",
        str(out),
    ]
    stop = group.run([*base, "--stop-after", "57", "--ckpt", str(ckpt)], timeout=120)  # mid epoch 1
    assert stop.rc == 0, stop.describe()
    assert serve.running(), "serve ended while a trainer could still come back"
    resumed = group.run([*base, "--resume", str(ckpt)], timeout=120)  # a new process
    assert resumed.rc == 0, resumed.describe()
    assert serve.wait(timeout=30) == 0, serve.describe()
    got = json.loads(out.read_text())
    assert got["losses"] == whole["losses"], "the resumed run's loss curve differs"
