"""Memory bound: serve's peak RSS stays within what its start-up line promises (rings +
windows of decoded rows) plus the runtime's share, a bound that does not depend on the
dataset's size; a trainer's peak does not grow with it either. The driver of `make
soak`'s memory section (and, on smaller datasets, of test_memory.py in `make test`).

For each scale S it generates S × ROWS rows with `shmloader gen` (the demo's columns;
generated once into the work dir, never committed), serves one epoch of them with the
demo's config (bindings/python/examples/demo.yaml, cache off, as by default; 8
partitions, what the automatic count gives the demo's dataset and larger ones) to its two
ranks, read by loadtrainer.py --no-ids, and samples every SAMPLE_S the resident memory of
serve and the trainers: VmRSS split into anonymous, shared-memory (the rings) and file
pages, and at the end the peak, VmHWM.

Checked for every scale: serve's peak <= rings + windows (from its `memory:` line) +
BASE + PER_WORKER per decode worker, a bound the same for every scale; serve's RSS flat
within the run of the largest (its last third's largest sample within FLAT of its middle
third's, after the windows filled: nothing accumulates as the run goes through the
dataset); every trainer's peak at the
largest scale within GROWTH of its peak at the smallest. Serve's peak itself rises with
the dataset until all its windows are in use (a small dataset never fills them), then
stays under the bound.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import servekit
from harness import Failure, drive, driver_parser, generate, proc_sample, wait_end

TRAINER = servekit.TESTS / "loadtrainer.py"
DEMO_CONFIG = servekit.REPO / "bindings/python/examples/demo.yaml"
DEMO_ROWS = 1_000_000  # `shmloader gen`'s default, what `make demo` serves
DEMO_FILES = 8  # the same
RANKS = 2
MIB = 1 << 20
# Beyond rings and windows: the Go heap (footers, plan, each decode worker's chunk and
# page buffers), which the collector lets grow to twice what is live (docs/serving.md, "Memory").
BASE = 128 * MIB
PER_WORKER = 96 * MIB  # for row groups like the demo's: 16,384 rows, about 8 MB compressed
FLAT = (16 * MIB, 0.05)  # bytes or share: what "flat" allows within a run
GROWTH = (16 * MIB, 0.10)  # the same between the trainers' peaks at two sizes
SAMPLE_S = 0.2

WORKERS_RE = re.compile(r"^serve: job .*, (?P<workers>\d+) workers, ", re.M)
MEMORY_RE = re.compile(
    r"^serve: memory: rings (?P<rings>[\d.]+ [KMG]iB) \+ at most (?P<n>\d+) windows of "
    r"(?P<rgs>\d+) row groups × (?P<rows>\d+) rows × (?P<per_row>\d+) B = "
    r"(?P<windows>[\d.]+ [KMG]iB) of decoded rows", re.M)  # fmt: skip


def size_bytes(text: str) -> int:
    n, unit = text.split()
    return int(float(n) * {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[unit])


def dataset(bin: Path, work: Path, rows: int, row_group_rows: int | None) -> Path:
    """rows of the demo's columns in files of the demo's shape (DEMO_ROWS / DEMO_FILES rows
    each): a larger dataset is more files, as real ones grow."""
    data = work / f"data-{rows}"
    if not (data / ".complete").exists():
        flags = ["--files", str(max(1, round(rows * DEMO_FILES / DEMO_ROWS)))]
        if row_group_rows:
            flags += ["--row-group-rows", str(row_group_rows)]
        t0 = time.monotonic()
        generate(bin, data, "--rows", str(rows), "--overwrite", "--quiet", *flags, timeout=3600)
        (data / ".complete").touch()
        print(f"generated {rows:,} rows in {time.monotonic() - t0:.0f} s", file=sys.stderr)
    return data


def serve_once(bin: Path, work: Path, data: Path, name: str, sample_s: float = SAMPLE_S
               ) -> dict[str, Any]:  # fmt: skip
    shm = Path(tempfile.mkdtemp(prefix="shmloader-mem-", dir="/dev/shm"))
    job = "mem-" + uuid.uuid4().hex[:10]
    logs = work / name
    shutil.rmtree(logs, ignore_errors=True)
    logs.mkdir(parents=True)
    peaks: dict[str, dict[str, int]] = {}
    series: list[int] = []  # serve's RSS at every sample
    try:
        with servekit.Group(bin, shm, logs) as g:
            serve = g.serve(DEMO_CONFIG, job, "--dataset", str(data), "--epochs", "1",
                            "--ranks", str(RANKS), "--partitions", "8", "--metrics", "off",
                            "--cache-dir", "",
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
                    if pname == "serve":
                        series.append(s["rss"])
                time.sleep(sample_s)
            seconds = time.monotonic() - started
            wait_end(serve, trainers, "at the end of the epoch")
            for r in range(RANKS):
                end = json.loads((logs / f"r{r}.jsonl.end").read_text())
                if end.get("end") != "stream_end" or end["errors"]:
                    raise Failure(f"rank {r}: {end.get('end')} {end['errors'][:5]}")
    finally:
        shutil.rmtree(shm, ignore_errors=True)
    m, w = MEMORY_RE.search(serve.stderr), WORKERS_RE.search(serve.stderr)
    if not m or not w:
        raise Failure(f"no memory or job line in serve's start-up summary:\n{serve.stderr}")
    rings, windows, workers = size_bytes(m["rings"]), size_bytes(m["windows"]), int(w["workers"])
    third = max(1, len(series) // 3)
    return {"rows": servekit.Serve.summary(serve)["node_rows"], "seconds": seconds,
            "rings": rings, "windows": windows, "workers": workers,
            "runtime": BASE + PER_WORKER * workers,
            "bound": rings + windows + BASE + PER_WORKER * workers, "peaks": peaks,
            "rss_middle_third": max(series[third:-third] or series),
            "rss_last_third": max(series[-third:]),
            "samples": len(series)}  # fmt: skip


def run(bin: Path, work: Path, scales: list[float], rows: int = DEMO_ROWS,
        row_group_rows: int | None = None,
        sample_s: float = SAMPLE_S) -> dict[str, Any]:  # fmt: skip
    results = {}
    for scale in scales:
        data = dataset(bin, work, int(rows * scale), row_group_rows)
        res = serve_once(bin, work, data, f"x{scale:g}", sample_s)
        results[f"{scale:g}"] = res
        hwm = res["peaks"]["serve"]["hwm"]
        if hwm > res["bound"]:
            raise Failure(f"×{scale:g}: serve's peak RSS {hwm / MIB:.0f} MiB is over its bound "
                          f"{res['bound'] / MIB:.0f} MiB (rings {res['rings'] / MIB:.0f} + windows "
                          f"{res['windows'] / MIB:.0f} + runtime "
                          f"{res['runtime'] / MIB:.0f})")  # fmt: skip
    lo, hi = results[f"{min(scales):g}"], results[f"{max(scales):g}"]
    a, b = hi["rss_middle_third"], hi["rss_last_third"]
    if hi["samples"] < 6 or b - a > max(FLAT[0], FLAT[1] * a):
        raise Failure(f"serve's RSS grew during the run of {hi['rows']:,} rows: {a / MIB:.0f} "
                      f"MiB at most in its middle third, {b / MIB:.0f} MiB in its last "
                      f"({hi['samples']} samples)")  # fmt: skip
    if lo["bound"] != hi["bound"]:
        raise Failure(f"serve's bound depends on the dataset: {lo['bound']} and {hi['bound']}")
    for pname, p in hi["peaks"].items():
        if pname == "serve":
            continue
        a, b = lo["peaks"][pname]["hwm"], p["hwm"]
        if b - a > max(GROWTH[0], GROWTH[1] * a):
            raise Failure(f"{pname}'s peak RSS grew with the dataset: {a / MIB:.0f} MiB for "
                          f"{lo['rows']:,} rows, {b / MIB:.0f} MiB for {hi['rows']:,}")  # fmt: skip
    return {"scales": results, "base": BASE, "per_worker": PER_WORKER}


def main() -> None:
    p = driver_parser(__doc__, work="build/membound, where the datasets stay")
    p.add_argument("--scales", default="1,10", help="dataset sizes, in demo datasets")
    args = p.parse_args()
    scales = [float(s) for s in args.scales.split(",")]
    drive("memory bound", args, lambda work: run(args.bin, work, scales),
          work=servekit.REPO / "build" / "membound")  # fmt: skip


if __name__ == "__main__":
    main()
