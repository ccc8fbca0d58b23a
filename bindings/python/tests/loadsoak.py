"""Load held: the most ranks a host has (16 rings) with small batches, endless epochs and
the cache on, for a given time; the driver of test_load.py (a short run in `make test`)
and of `make soak` (10 minutes).

Sixteen loadtrainer.py processes read a `shmloader serve`; every few seconds the driver
samples the resident memory (VmRSS), open files (/proc/PID/fd) and mappings
(/proc/PID/maps) of serve and of every trainer. At the end serve is stopped with SIGTERM.
Checked:
- every epoch that all ranks finished delivered every row of the dataset exactly once:
  the ranks' rows add up to the dataset's and their sums of splitmix64(id) to the
  dataset's; no rank saw an id twice in an epoch or a step out of order;
- after the warm-up, RSS, open files and mappings of each process stay flat: the
  largest value of the last third of the samples is within a small tolerance of the
  largest of the first third (RSS_TOLERANCE, none for open files, MAPS_TOLERANCE);
- serve exits 0 on SIGTERM and every trainer sees the producer gone, and nothing is left
  in the shared-memory dir.
The wait figures (each trainer's share of time waiting, next()'s p50, p99 and maximum) are
returned with the samples.
"""

from __future__ import annotations

import json
import shutil
import signal
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import servekit
from harness import Failure, drive, driver_parser, generate, proc_sample, wait_end
from loadtrainer import id_sum

TRAINER = servekit.TESTS / "loadtrainer.py"
RANKS = 16
BATCH = 32
ROWS = RANKS * BATCH * 128  # 128 steps per rank and epoch, nothing dropped
ROW_GROUP_ROWS = 2048
MIB = 1 << 20
RSS_TOLERANCE = (4 * MIB, 0.03)  # bytes, or a share of the first third's largest
MAPS_TOLERANCE = 4  # Go's heap may map an arena more


def flat(samples: list[dict[str, float]], name: str) -> list[str]:
    """What grew between the first and the last third of the samples."""
    if len(samples) < 6:
        return [f"{name}: only {len(samples)} samples"]
    third = len(samples) // 3
    first, last = samples[:third], samples[-third:]
    grew = []
    for key, tol in (("rss", None), ("fds", 0), ("maps", MAPS_TOLERANCE)):
        a, b = max(s[key] for s in first), max(s[key] for s in last)
        allowed = max(RSS_TOLERANCE[0], RSS_TOLERANCE[1] * a) if tol is None else tol
        if b - a > allowed:
            grew.append(f"{name}: {key} grew from {a} to {b} (allowed {allowed:.0f})")
    return grew


def expected(data: Path) -> tuple[int, int]:
    import pyarrow.parquet as pq

    ids = pq.read_table(data, columns=["id"])["id"].to_numpy()
    return len(ids), id_sum(ids)


def run(bin: Path, work: Path, seconds: float, sample_s: float, warmup_s: float) -> dict[str, Any]:
    data = work / "data"
    if not data.exists():
        generate(bin, data, "--rows", str(ROWS), "--files", "4", "--row-group-rows",
                 str(ROW_GROUP_ROWS), "--features", "8", "--categoricals", "2", "--strings", "1",
                 "--seed", "5", "--quiet", timeout=300)  # fmt: skip
    rows, want_sum = expected(data)
    cfg = servekit.write_config(
        work / "load.yaml", dataset=str(data), batch_size=BATCH, seed=3, epochs=0, ranks=RANKS,
        ring_depth=8, shuffle={"row_groups": True, "window": 2}, progress="10s",
        outputs={"x": {"columns": ["f000..f007"], "transforms": [{"fill_null": 0}]},
                 "cats": {"columns": "c0*", "transforms": [{"hash_bucket": 1000}]}, "id": "id"},
    )  # fmt: skip
    shm = Path(tempfile.mkdtemp(prefix="shmloader-load-", dir="/dev/shm"))
    job = "load-" + uuid.uuid4().hex[:10]
    logs = work / "logs"
    shutil.rmtree(logs, ignore_errors=True)
    logs.mkdir(parents=True)
    samples: dict[str, list[dict[str, float]]] = {}
    try:
        with servekit.Group(bin, shm, logs) as g:
            serve = g.serve(cfg, job, "--cache-dir", str(work / "cache"), "--metrics", "off")
            trainers = [g.python(f"load-r{r}", TRAINER, "--job", job, "--rank", str(r), "--dir",
                                 str(shm), "--out", str(logs / f"r{r}.jsonl"),
                                 "--steps", str(ROWS // BATCH // RANKS))
                        for r in range(RANKS)]  # fmt: skip
            procs = {"serve": serve, **{f"trainer {r}": t for r, t in enumerate(trainers)}}
            summary = None
            started = time.monotonic()
            next_sample = started + warmup_s
            while time.monotonic() - started < seconds:
                dead = [n for n, c in procs.items() if not c.running()]
                if dead:
                    raise Failure(f"{dead} ended during the run\n"
                                  + "\n".join(procs[n].describe() for n in dead))  # fmt: skip
                if summary is None and "steps per rank" in serve.stderr:
                    summary = serve.summary()
                    if summary["dropped"] != 0:
                        raise Failure(f"the plan drops rows: {serve.stderr}")
                if time.monotonic() >= next_sample:
                    t = time.monotonic() - started
                    for name, c in procs.items():
                        s = proc_sample(c.popen.pid)
                        if s is not None:
                            samples.setdefault(name, []).append({"t": round(t, 1), **s})
                    next_sample += sample_s
                time.sleep(0.05)
            serve.signal(signal.SIGTERM)
            wait_end(serve, trainers, "on SIGTERM")
            left = servekit.segments(shm)
            if left:
                raise Failure(f"left in the shared-memory dir after serve's end: {left}")
    finally:
        shutil.rmtree(shm, ignore_errors=True)
    return check(logs, rows, want_sum, samples, serve.stderr, seconds)


def check(logs: Path, rows: int, want_sum: int, samples: dict[str, list[dict[str, float]]],
          serve_stderr: str, seconds: float) -> dict[str, Any]:  # fmt: skip
    ends, epochs = [], []
    for r in range(RANKS):
        end = json.loads((logs / f"r{r}.jsonl.end").read_text())
        if end.get("end") != "gone" or end["errors"]:
            raise Failure(f"rank {r}: {end.get('end')} {end['errors'][:5]}")
        ends.append(end)
        epochs.append([json.loads(ln) for ln in (logs / f"r{r}.jsonl").read_text().splitlines()])
    complete = min(len(e) for e in epochs)
    if complete < 2:
        raise Failure(f"only {complete} epochs finished by every rank in {seconds} s")
    batches = 0
    for e in range(complete):
        lines = [epochs[r][e] for r in range(RANKS)]
        got_rows = sum(ln["rows"] for ln in lines)
        got_sum = sum(ln["id_sum"] for ln in lines) % (1 << 64)
        dups = sum(ln["duplicates"] for ln in lines)
        if (got_rows, got_sum, dups) != (rows, want_sum, 0):
            raise Failure(f"epoch {e}: {got_rows} rows (want {rows}), id sum {got_sum:#x} "
                          f"(want {want_sum:#x}), {dups} ids seen twice by one rank")  # fmt: skip
        batches += sum(ln["batches"] for ln in lines)
    grew = [g for name, s in samples.items() for g in flat(s, name)]
    if grew:
        raise Failure("not flat under load:\n" + "\n".join(grew))
    trainers = [s for n, s in samples.items() if n != "serve"]
    stall = sorted(e["stall"] for e in ends)
    return {
        "seconds": seconds,
        "ranks": RANKS,
        "batch_rows": BATCH,
        "epochs_checked": complete,
        "batches_checked": batches,
        "rows_checked": complete * rows,
        "lost": 0,
        "repeated": 0,
        "batches_per_s": sum(e["batches"] for e in ends) / seconds,
        "stall_median": stall[len(stall) // 2],
        "stall_max": stall[-1],
        "wait_p50_s_max": max(e["wait_p50_s"] for e in ends),
        "wait_p99_s_max": max(e["wait_p99_s"] for e in ends),
        "wait_max_s": max(e["wait_max_s"] for e in ends),
        "serve": span(samples["serve"]),
        "trainer_max": {k: max(span(s)[k] for s in trainers) for k in span(trainers[0])},
        "samples": len(samples["serve"]),
        "serve_status_last": [ln for ln in serve_stderr.splitlines() if "rows/s" in ln][-1:],
    }


def span(samples: list[dict[str, float]]) -> dict[str, float]:
    """First and last-third figures of one process: what flat() compared."""
    third = max(1, len(samples) // 3)
    return {"rss_first": max(s["rss"] for s in samples[:third]),
            "rss_last": max(s["rss"] for s in samples[-third:]),
            "hwm": samples[-1]["hwm"],
            "fds_first": max(s["fds"] for s in samples[:third]),
            "fds_last": max(s["fds"] for s in samples[-third:]),
            "maps_first": max(s["maps"] for s in samples[:third]),
            "maps_last": max(s["maps"] for s in samples[-third:])}  # fmt: skip


def main() -> None:
    p = driver_parser(__doc__, work="a new temp dir, removed after a pass")
    p.add_argument("--seconds", type=float, default=600)
    p.add_argument("--sample", type=float, default=5.0, help="seconds between samples")
    p.add_argument("--warmup", type=float, default=30.0, help="seconds before the first sample")
    args = p.parse_args()
    drive(
        "load soak", args, lambda work: run(args.bin, work, args.seconds, args.sample, args.warmup)
    )


if __name__ == "__main__":
    main()
