"""The C example (bindings/c/examples/checksum.c, built as build/bin/shml-checksum) against
a real `shmloader serve`: what it prints is what the job serves.

Two serve runs of one config and seed, at the same time, under two job names: the
example reads both ranks of the first, serveconsume.py (the Python binding) both ranks of
the second. Batches are byte-identical for the same config and seed, so per rank and
epoch the example's batch and row counts and every tensor's CRC-32 and byte count must
equal zlib.crc32 over the arrays the Python binding received; its schema lines must give
each tensor's dtype and per-row shape. The example runs as a user would run it: the
release build, with no LD_LIBRARY_PATH (its rpath finds build/lib/libshmloader.so).
"""

from __future__ import annotations

import os
import re
import subprocess
import uuid
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import servekit

EXAMPLE = servekit.REPO / "build" / "bin" / "shml-checksum"
RANKS = 2
EPOCHS = 2
BATCH = 500  # 20000 rows: 40 global batches, 20 steps per rank and epoch

OUTPUTS = {
    "features": {"columns": ["f000..f007"], "transforms": [{"fill_null": 0}]},
    "half": {"columns": ["f000..f003"], "dtype": "bfloat16", "transforms": [{"fill_null": 0}]},
    "cats": {"columns": "c0*", "transforms": [{"hash_bucket": 1000}]},
    "seq": {"columns": "seq", "transforms": [{"pad": 6}]},
    "label": "label",
    "id": "id",
}

SCHEMA_RE = re.compile(r"^  (\S+)\s+(\S+)\s+\[([0-9, ]*)\]\s+(\d+) bytes per row$")
EPOCH_RE = re.compile(r"^epoch (\d+): (\d+) batches, (\d+) rows, [0-9.]+ s$")
TENSOR_RE = re.compile(r"^  (\S+)\s+crc32 ([0-9a-f]{8})\s+(\d+) bytes$")
TOTAL_RE = re.compile(r"^total: (\d+) epochs, (\d+) batches, (\d+) rows, ")


def parse(stdout: str) -> dict[str, Any]:
    """The example's output: schema (name -> (dtype, row shape, row bytes)), per epoch
    (batches, rows, {name: (crc, bytes)}), and the totals line."""
    out: dict[str, Any] = {"schema": {}, "epochs": {}, "total": None}
    section = None
    epoch: dict[str, Any] | None = None
    for line in stdout.splitlines():
        if line == "schema:":
            section = "schema"
        elif m := EPOCH_RE.match(line):
            section = "epoch"
            epoch = {"batches": int(m[2]), "rows": int(m[3]), "tensors": {}}
            out["epochs"][int(m[1])] = epoch
        elif section == "schema" and (m := SCHEMA_RE.match(line)):
            shape = tuple(int(d) for d in m[3].split(",")) if m[3] else ()
            out["schema"][m[1]] = (m[2], shape, int(m[4]))
        elif section == "epoch" and epoch is not None and (m := TENSOR_RE.match(line)):
            epoch["tensors"][m[1]] = (m[2], int(m[3]))
        elif m := TOTAL_RE.match(line):
            out["total"] = tuple(int(g) for g in m.groups())
    return out


def reference(res: servekit.Result) -> dict[int, dict[str, Any]]:
    """Per epoch, what the example should print, from the Python binding's arrays."""
    epochs: dict[int, dict[str, Any]] = {}
    for e in sorted({b["epoch"] for b in res.batches}):
        batches = [b for b in res.batches if b["epoch"] == e]
        tensors = {}
        for name in res.tensors:
            arr = np.ascontiguousarray(res.epoch_rows(e, name))
            tensors[name] = (f"{zlib.crc32(arr.tobytes()):08x}", arr.nbytes)
        epochs[e] = {"batches": len(batches), "rows": sum(b["rows"] for b in batches),
                     "tensors": tensors}  # fmt: skip
    return epochs


def start_example(group: servekit.Group, job: str, rank: int) -> servekit.Child:
    if not (EXAMPLE.is_file() and os.access(EXAMPLE, os.X_OK)):
        pytest.fail(f"{EXAMPLE} not found: run `make build` from {servekit.REPO}", pytrace=False)
    env = {k: v for k, v in group.env.items() if k != "LD_LIBRARY_PATH"}
    argv = [str(EXAMPLE), job, str(rank), "--dir", str(group.shm_dir), "--timeout", "20"]
    out = group.tmp / f"example-{job}-r{rank}.stdout"
    err = group.tmp / f"example-{job}-r{rank}.stderr"
    with open(out, "wb") as o, open(err, "wb") as e:
        popen = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=o, stderr=e, env=env)
    child = servekit.Child(popen, f"shml-checksum {job} {rank}", out, err)
    group.children.append(child)
    return child


def test_c_example_checksums_equal_the_python_bindings(group, gen_dataset: Path):
    cfg = servekit.write_config(
        group.tmp / "example.yaml", dataset=str(gen_dataset), batch_size=BATCH, seed=11,
        epochs=EPOCHS, ranks=RANKS, shuffle={"row_groups": True, "window": 3},
        outputs=OUTPUTS,
    )  # fmt: skip
    c_job, py_job = (f"cex-{uuid.uuid4().hex[:12]}" for _ in range(2))
    examples = [start_example(group, c_job, r) for r in range(RANKS)]
    pys = [group.consume(py_job, r, f"py-r{r}", "--keep", "all") for r in range(RANKS)]
    serves = [group.serve(cfg, job, "--drain-timeout", "20s", quiet=True)
              for job in (c_job, py_job)]  # fmt: skip

    results = servekit.wait_all(pys, timeout=60)
    for ex in examples:
        rc = ex.wait(timeout=60)
        assert rc == 0 and ex.stderr == "", ex.describe()
    for serve in serves:
        assert serve.wait(timeout=30) == 0, serve.describe()
        servekit.assert_no_panic(serve.stderr)

    for rank, (ex, res) in enumerate(zip(examples, results, strict=True)):
        assert res.end == "stream_end", f"python rank {rank}: {res.end}"
        got = parse(ex.stdout)
        assert re.search(rf"^job {c_job} rank {rank} of {RANKS} ", ex.stdout, re.M), ex.stdout

        # Schema: every tensor, with the Python binding's dtype and per-row shape.
        want_schema = {
            name: (res.meta["dtypes"][name], arr.shape[1:], arr[:1].nbytes)
            for name, arr in res.tensors.items()
        }
        assert got["schema"] == want_schema, ex.stdout
        assert set(want_schema) == set(OUTPUTS) | {"seq_len"}

        # Per epoch: counts and every tensor's CRC-32 and bytes.
        want = reference(res)
        assert sorted(want) == list(range(EPOCHS))
        assert got["epochs"] == want, (
            f"rank {rank}: the example's epochs differ from the Python binding's\n"
            f"example:\n{ex.stdout}\npython: {want}"
        )
        steps = 40 // RANKS
        assert all(e["batches"] == steps and e["rows"] == steps * BATCH for e in want.values())
        assert got["total"] == (EPOCHS, EPOCHS * steps, EPOCHS * steps * BATCH), ex.stdout
