"""Memory bound: serve's peak RSS stays within what its start-up line promises (rings +
windows of decoded rows + a constant) and does not grow with the dataset; a trainer's
does not either. The driver of `make soak`'s memory section (and, on small datasets, of
test_memory.py in `make test`).

For each scale S it generates S × ROWS rows with `shmloader gen` (the demo's columns;
generated once into the work dir, never committed), serves one epoch of them with the
demo's config (bindings/python/examples/demo.yaml, cache off, as by default) to its two
ranks, read by loadtrainer.py --no-ids, and samples every SAMPLE_S the resident memory of
serve and the trainers: VmRSS split into anonymous, shared-memory (the rings) and file
pages, and at the end the peak, VmHWM.

Checked for every scale: serve's peak <= rings + windows (from its `memory:` line) +
CONSTANT; then the largest scale's peaks against the smallest's: serve's and every
trainer's within GROWTH of it.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import servekit
from loadsoak import proc_sample

TRAINER = servekit.TESTS / "loadtrainer.py"
DEMO_CONFIG = servekit.REPO / "bindings/python/examples/demo.yaml"
DEMO_ROWS = 1_000_000  # `shmloader gen`'s default, what `make demo` serves
RANKS = 2
MIB = 1 << 20
CONSTANT = 128 * MIB  # the Go runtime, footers and plan, decode buffers (README)
GROWTH = (16 * MIB, 0.10)  # bytes or share: what "does not grow" allows
SAMPLE_S = 0.2

MEMORY_RE = re.compile(
    r"^serve: memory: rings (?P<rings>[\d.]+ [KMG]iB) \+ at most (?P<n>\d+) windows of "
    r"(?P<rgs>\d+) row groups × (?P<rows>\d+) rows × (?P<per_row>\d+) B = "
    r"(?P<windows>[\d.]+ [KMG]iB) of decoded rows", re.M)  # fmt: skip


class Failure(AssertionError):
    pass


def size_bytes(text: str) -> int:
    n, unit = text.split()
    return int(float(n) * {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[unit])


def dataset(bin: Path, work: Path, rows: int, row_group_rows: int | None) -> Path:
    data = work / f"data-{rows}"
    if not (data / ".complete").exists():
        flags = ["--row-group-rows", str(row_group_rows)] if row_group_rows else []
        t0 = time.monotonic()
        out = subprocess.run([str(bin), "gen", "--out", str(data), "--rows", str(rows),
                              "--overwrite", "--quiet", *flags],
                             capture_output=True, text=True, timeout=3600)  # fmt: skip
        if out.returncode != 0:
            raise RuntimeError(f"shmloader gen failed: {out.stderr}")
        (data / ".complete").touch()
        print(f"generated {rows:,} rows in {time.monotonic() - t0:.0f} s", file=sys.stderr)
    return data


def serve_once(bin: Path, work: Path, data: Path, name: str) -> dict[str, Any]:
    shm = Path(tempfile.mkdtemp(prefix="shmloader-mem-", dir="/dev/shm"))
    job = "mem-" + uuid.uuid4().hex[:10]
    logs = work / name
    shutil.rmtree(logs, ignore_errors=True)
    logs.mkdir(parents=True)
    peaks: dict[str, dict[str, int]] = {}
    try:
        with servekit.Group(bin, shm, logs) as g:
            serve = g.serve(DEMO_CONFIG, job, "--dataset", str(data), "--epochs", "1",
                            "--ranks", str(RANKS), "--metrics", "off", "--cache-dir", "",
                            "--drain-timeout", "60s")  # fmt: skip
            deadline = time.monotonic() + 60
            while "steps per rank" not in serve.stderr:
                if not serve.running() or time.monotonic() > deadline:
                    raise Failure(f"serve did not start\n{serve.describe()}")
                time.sleep(0.05)
            steps = serve.summary()["steps"]
            trainers = [g.python(f"mem-r{r}", TRAINER, "--job", job, "--rank", str(r),
                                 "--dir", str(shm), "--out", str(logs / f"r{r}.jsonl"),
                                 "--steps", str(steps), "--no-ids")
                        for r in range(RANKS)]  # fmt: skip
            procs = {"serve": serve, **{f"trainer {r}": t for r, t in enumerate(trainers)}}
            started = time.monotonic()
            while serve.running():
                if time.monotonic() - started > 3600:
                    raise Failure(f"serve still running after an hour\n{serve.describe()}")
                for pname, c in procs.items():
                    s = proc_sample(c.popen.pid)
                    if s is None:
                        continue
                    p = peaks.setdefault(pname, {})
                    for k, v in s.items():
                        p[k] = max(p.get(k, 0), v)
                time.sleep(SAMPLE_S)
            seconds = time.monotonic() - started
            rc = serve.wait(10)
            servekit.assert_no_panic(serve.stderr)
            if rc != 0:
                raise Failure(f"serve exited {rc}\n{serve.describe()}")
            for t in trainers:
                t.wait(30)
            for r in range(RANKS):
                end = json.loads((logs / f"r{r}.jsonl.end").read_text())
                if end.get("end") != "stream_end" or end["errors"]:
                    raise Failure(f"rank {r}: {end.get('end')} {end['errors'][:5]}")
    finally:
        shutil.rmtree(shm, ignore_errors=True)
    m = MEMORY_RE.search(serve.stderr)
    if not m:
        raise Failure(f"no memory line in serve's start-up summary:\n{serve.stderr}")
    rings, windows = size_bytes(m["rings"]), size_bytes(m["windows"])
    return {"rows": servekit.Serve.summary(serve)["node_rows"], "seconds": seconds,
            "rings": rings, "windows": windows, "bound": rings + windows + CONSTANT,
            "peaks": peaks}  # fmt: skip


def run(bin: Path, work: Path, scales: list[float], rows: int = DEMO_ROWS,
        row_group_rows: int | None = None) -> dict[str, Any]:  # fmt: skip
    results = {}
    for scale in scales:
        data = dataset(bin, work, int(rows * scale), row_group_rows)
        res = serve_once(bin, work, data, f"x{scale:g}")
        results[f"{scale:g}"] = res
        hwm = res["peaks"]["serve"]["hwm"]
        if hwm > res["bound"]:
            raise Failure(f"×{scale:g}: serve's peak RSS {hwm / MIB:.0f} MiB is over its bound "
                          f"{res['bound'] / MIB:.0f} MiB (rings {res['rings'] / MIB:.0f} + windows "
                          f"{res['windows'] / MIB:.0f} + {CONSTANT / MIB:.0f})")  # fmt: skip
    lo, hi = results[f"{min(scales):g}"], results[f"{max(scales):g}"]
    for pname, p in hi["peaks"].items():
        a, b = lo["peaks"][pname]["hwm"], p["hwm"]
        allowed = max(GROWTH[0], GROWTH[1] * a)
        if b - a > allowed:
            raise Failure(f"{pname}'s peak RSS grew with the dataset: {a / MIB:.0f} MiB for "
                          f"{lo['rows']:,} rows, {b / MIB:.0f} MiB for {hi['rows']:,}")  # fmt: skip
    return {"scales": results, "constant": CONSTANT, "growth_allowed": GROWTH}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scales", default="1,10", help="dataset sizes, in demo datasets")
    p.add_argument("--work", help="work dir, where the datasets stay (default: build/membound)")
    p.add_argument("--json", help="write the figures here")
    p.add_argument("--bin", default=str(servekit.REPO / "build/bin/shmloader"))
    args = p.parse_args()
    work = Path(args.work or servekit.REPO / "build" / "membound")
    work.mkdir(parents=True, exist_ok=True)
    try:
        figs = run(Path(args.bin), work, [float(s) for s in args.scales.split(",")])
    except Failure as exc:
        print(f"memory bound FAILED: {exc}", file=sys.stderr)
        sys.exit(1)
    print(json.dumps(figs, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(figs, indent=1))


if __name__ == "__main__":
    main()
