"""Shared memory runs out: serve on a tmpfs too small for its rings fails at start with
what to change, leaving nothing; and a tmpfs that fills after start (another process
writing to it) costs no process a SIGBUS and no batch, since every segment's pages were
allocated when it was made. Each case runs shmfull.py in its own mount namespace with a
tmpfs of the size it needs (unshare; without root, in a user namespace too)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import servekit

SHMFULL = Path(__file__).resolve().parent / "shmfull.py"
OUTPUTS = {"id": "id", "x": {"columns": ["f000..f007"], "transforms": [{"fill_null": 0}]}}


def in_namespace(shmloader_bin: Path, tmp: Path, config: Path, size: str, mode: str) -> dict:
    unshare = ["unshare", "--mount", "--propagation", "private"]
    if os.geteuid() != 0:
        unshare = ["unshare", "--user", "--map-root-user", "--mount"]
    (tmp / "mnt").mkdir()
    (tmp / "logs").mkdir()
    proc = subprocess.run(
        [
            *unshare,
            sys.executable,
            str(SHMFULL),
            "--bin",
            str(shmloader_bin),
            "--config",
            str(config),
            "--dir",
            str(tmp / "mnt"),
            "--tmp",
            str(tmp / "logs"),
            "--size",
            size,
            mode,
        ],
        capture_output=True,
        text=True,
        timeout=240,
        env=servekit.child_env(),
    )
    assert proc.returncode == 0, (
        f"shmfull.py {mode}: rc {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_serve_fails_at_start_on_a_tmpfs_too_small_for_its_rings(
    shmloader_bin, gen_dataset, tmp_path
):
    cfg = servekit.write_config(tmp_path / "c.yaml", dataset=str(gen_dataset), batch_size=1000,
                                ranks=2, ring_depth=8, outputs=OUTPUTS)  # fmt: skip
    out = in_namespace(shmloader_bin, tmp_path, cfg, "64k", "start")
    err = out["stderr"]
    assert out["serve_rc"] == 1, out
    servekit.assert_no_panic(err)
    for word in (
        "--shm-size",
        "SHMLOADER_SHM_DIR",
        "ring depth or batch size",
        str(tmp_path / "mnt"),
    ):
        assert word in err, f"the error does not say {word!r}:\n{err}"
    assert out["left"] == [], f"a failed start left {out['left']} in the tmpfs"


def test_a_tmpfs_that_fills_after_start_costs_no_sigbus_and_no_batch(
    shmloader_bin, gen_dataset, tmp_path
):
    # A deep ring of small slots: when the tmpfs fills, serve has written only some of its
    # slots (the trainers read slowly), so a slot page allocated on first write instead
    # of at creation would be a SIGBUS.
    cfg = servekit.write_config(tmp_path / "c.yaml", dataset=str(gen_dataset), batch_size=100,
                                ranks=2, ring_depth=64, outputs=OUTPUTS)  # fmt: skip
    out = in_namespace(shmloader_bin, tmp_path, cfg, "4m", "fill")
    assert out["filled"] > 0 and out["free_after_fill"] == 0, out
    sigbus = -int(signal.SIGBUS)
    assert sigbus not in out["consumer_rc"] and out["serve_rc"] != sigbus, out
    assert out["consumer_rc"] == [0, 0] and out["serve_rc"] == 0, out["stderr"]
    ids = np.concatenate([np.asarray(i, dtype=np.int64) for i in out["ids"]])
    assert len(ids) == servekit.GEN_ROWS and len(np.unique(ids)) == servekit.GEN_ROWS, (
        f"{len(ids)} rows, {len(np.unique(ids))} distinct, of {servekit.GEN_ROWS}"
    )
    assert sorted(out["serve_results"]) == ["0", "1"], out["stderr"]
    assert out["left"] == [], f"serve left {out['left']} in the tmpfs"
