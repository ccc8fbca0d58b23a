"""DistributedDataParallel under torchrun: two trainer processes on gloo, each reading its
own ring (the rank from $LOCAL_RANK, as torchrun sets it), training one model. Every row of
every epoch reaches exactly one rank, both ranks take the same number of steps (no rank
hangs the allreduce), and a second run gives the same loss curves bit for bit."""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

import numpy as np
import servekit
from test_training import OUTPUTS, TRAINER

TORCHRUN = Path(sys.executable).parent / "torchrun"


def run_ddp(group: servekit.Group, tmp: Path, cfg: Path, name: str) -> list[dict]:
    job = "ddp-" + uuid.uuid4().hex[:12]
    serve = group.serve(cfg, job)
    out = tmp / f"{name}-{{rank}}.json"
    child = group.run([str(TORCHRUN), "--standalone", "--nproc-per-node", "2", str(TRAINER),
                       "--ddp", "--job", job, "--dir", str(group.shm_dir), "--out", str(out)],
                      timeout=180)  # fmt: skip
    assert child.rc == 0, child.describe()
    assert serve.wait(timeout=30) == 0, serve.describe()
    return [json.loads((tmp / f"{name}-{r}.json").read_text()) for r in range(2)]


def test_ddp_under_torchrun(group, gen_dataset: Path, tmp_path: Path) -> None:
    cfg = servekit.write_config(tmp_path / "ddp.yaml", dataset=str(gen_dataset), batch_size=500,
                                seed=5, epochs=2, ranks=2, outputs=OUTPUTS)  # fmt: skip
    first = run_ddp(group, tmp_path, cfg, "a")
    assert [r["rank"] for r in first] == [0, 1]
    steps = [len(r["losses"]) for r in first]
    assert steps == [40, 40], f"ranks took {steps} steps: unequal counts hang an allreduce"
    for epoch in range(2):
        ids = np.concatenate([s[2] for r in first for s in r["seen"] if s[0] == epoch])
        assert np.array_equal(np.sort(ids), np.arange(servekit.GEN_ROWS)), (
            f"epoch {epoch}: the ranks did not receive every row exactly once"
        )
    again = run_ddp(group, tmp_path, cfg, "b")
    for r in range(2):
        assert again[r]["losses"] == first[r]["losses"], f"rank {r}: another loss curve"
        assert again[r]["seen"] == first[r]["seen"]
    assert np.isfinite([float.fromhex(x) for x in first[0]["losses"]]).all()
