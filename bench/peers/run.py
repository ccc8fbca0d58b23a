"""Side-by-side benchmark: shmloader against Petastorm, the PyTorch DataLoader and the
physical ceilings, on the same work (bench/peers/work.py, bench/peers/bench.yaml).

    make bench                       # builds, installs .venv-bench, runs this, then report.py
    .venv-bench/bin/python bench/peers/run.py --rows 1000000 --rounds 3 --step-ms 6

Each round runs every contender one after the other on the same dataset, in the same
order: the ceilings (raw arrow-go decoding of the same columns by bench/rawdecode on 2
goroutines, pyarrow's decoding of the same columns on 2 threads for reference, and a
memcpy of the same tensor bytes), then shmloader serve (cold, no cache), shmloader
filling its cache and shmloader warm (a new serve process reading every row group from
that cache, as a later epoch does), shmloader epoch 2 (one serve of two epochs on a fresh
cache: epoch 0 fills it, epoch 1 is measured: its time, the consumers' CPU and serve's
from the first batch of epoch 1 on), the PyTorch DataLoader, Petastorm cold (no cache), Petastorm filling its local-disk cache and
Petastorm warm (reading that cache), each with 2 consumer processes (bench/peers/consume.py)
that read every byte; then the same contenders again with a simulated step time per batch,
for the data stall. Before the rounds, the DataLoader's num_workers (1-4 worker processes per
rank; num_workers=0, loading inside the trainer, is run as a contender of its own) and
Petastorm's workers_count are tuned on this machine (each candidate run once, the fastest kept) unless
given.

Each run starts its consumer processes first and waits until their imports (numpy,
pyarrow, torch) are done; then it starts the producer, if any, and lets the consumers
start their loaders. That moment is the run's start. For every run it records: rows/s
and MB/s of tensors over the epoch (from the start to the last batch), the time to the
first batch (from the start to the moment every rank has one), CPU
seconds of every process (getrusage via wait4: the producer, the consumers, the
DataLoader workers), the peak RSS of every process (its VmHWM, sampled from /proc), the
run's memory with shared pages counted once (the largest sampled sum of PSS), the data
stall %, and the consumers' checksums, which must agree across contenders (same rows,
same per-position bit sums).

Writes the records as JSON (--out, default bench/results/peers.json); report.py turns them
into the RESULTS.md table and the plots.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import work  # noqa: E402
from procs import Proc, Sampler, run_procs, tail  # noqa: E402

CONSUME = os.path.join(HERE, "consume.py")
CONFIG = os.path.join(HERE, "bench.yaml")
RANKS = 2


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


# ---------------------------------------------------------------------------------------
# Contenders.


class WrongData(Exception):
    """A contender delivered other rows or bytes than shmloader's reference run."""


@dataclass
class Bench:
    args: argparse.Namespace
    dataset: str
    logdir: str
    shm_dir: str
    python: str = sys.executable
    records: list[dict[str, Any]] = field(default_factory=list)
    failures: list[dict[str, Any]] = field(default_factory=list)  # runs that delivered wrong data
    reference: dict[str, Any] | None = None  # rows and sums of the first shmloader run
    seq: int = 0

    def consumer(self, loader: str, rank: int, step_ms: float, extra: list[str]) -> Proc:
        cmd = [self.python, CONSUME, "--loader", loader, "--rank", str(rank), "--ranks", str(RANKS),
               "--step-ms", str(step_ms), "--gate", "{gate}", "--seed", "1", *extra]
        return Proc("consumer", cmd)

    def run(self, contender: str, round_: int, step_ms: float, workers: int | None = None,
            cache: str | None = None) -> dict[str, Any] | None:
        """One run; a run that delivers wrong data (a rank with no batch, other rows or
        other bytes than shmloader's) is recorded in self.failures and run again, up to
        3 times in all; then the contender gets no record for this run (None)."""
        for attempt in range(3):
            try:
                rec = self._run(contender, round_, step_ms, workers, cache)
            except WrongData as exc:
                self.failures.append({"contender": contender, "round": round_, "step_ms": step_ms,
                                      "what": str(exc)})
                log(f"WARNING {exc}; running it again")
                continue
            self.records.append(rec)
            log(describe(rec))
            return rec
        log(f"WARNING {contender}: wrong data in 3 runs in a row; no figure for this run")
        return None

    def _run(self, contender: str, round_: int, step_ms: float, workers: int | None,
             cache: str | None) -> dict[str, Any]:
        self.seq += 1
        name = f"{self.seq:03d}-{contender}"
        procs: list[Proc] = []
        if contender.startswith("shmloader"):
            job = f"bench{os.getpid()}-{self.seq}"
            serve = [self.args.bin, "serve", "--config", CONFIG, "--dataset", self.dataset, "--job", job,
                     "--quiet", "--dir", self.shm_dir, "--workers", str(os.cpu_count() or 1)]
            if cache:  # "shmloader fill" writes it, "shmloader warm" reads every row group from it
                serve += ["--cache-dir", cache]
            extra = ["--job", job]
            if contender == "shmloader epoch 2":  # two epochs, the second measured
                serve += ["--epochs", "2"]
                extra += ["--from-epoch", "1"]
            procs.append(Proc("producer", serve))
            env = dict(os.environ, SHMLOADER_SHM_DIR=self.shm_dir)
        else:
            loader = "petastorm" if contender.startswith("petastorm") else "torch"
            extra = ["--dataset", self.dataset, "--workers", str(workers),
                     "--row-group-rows", str(self.args.row_group_rows)]
            if cache:
                extra += ["--cache", cache]
            env = None
        procs += [self.consumer("shmloader" if contender.startswith("shmloader") else loader, r, step_ms, extra)
                  for r in range(RANKS)]
        t0, sampler = run_procs(procs, self.logdir, name, env)
        ranks = [json.loads(p.output.strip().splitlines()[-1]) for p in procs if p.role == "consumer"]
        for r, p in zip(ranks, (p for p in procs if p.role == "consumer")):
            if not r["batches"]:
                raise WrongData(f"{name}: rank {r['rank']} got no batch and its loader ended without "
                                f"an error (see {p.out_path[:-4]}.err)")
        rec = summarize(contender, round_, step_ms, t0, procs, ranks, sampler, workers)
        self.check(rec)
        return rec

    def check(self, rec: dict[str, Any]) -> None:
        """Every contender must deliver the rows and sums of the first shmloader run."""
        got = {"rows": rec["rows"], "sums": rec["sums"]}
        if self.reference is None:
            self.reference = got
            rec["checksum"] = "reference"
            return
        ref = self.reference
        bad = []
        if got["rows"] != ref["rows"]:
            bad.append(f"rows {got['rows']} != {ref['rows']}")
        for k, v in ref["sums"].items():
            if got["sums"].get(k) != v:
                bad.append(f"{k} sum {got['sums'].get(k)} != {v}")
        if bad:
            raise WrongData(f"{rec['contender']}: delivered other data than shmloader: " + "; ".join(bad))
        rec["checksum"] = "ok"

    def raw(self, round_: int, contender: str = "raw arrow-go decode") -> dict[str, Any]:
        """A decode ceiling: bench/rawdecode (arrow-go), or pyarrow_decode.py (pyarrow, the
        DataLoader's decoder), reading the same columns of every row group on one worker
        per core."""
        self.seq += 1
        workers = str(os.cpu_count() or 1)
        if contender == "raw arrow-go decode":
            cmd = [self.args.rawdecode, "--config", CONFIG, "--dataset", self.dataset, "--workers", workers]
        else:
            cmd = [self.python, os.path.join(HERE, "pyarrow_decode.py"), self.dataset, "--workers", workers]
        p = Proc("raw", cmd)
        _, sampler = run_procs([p], self.logdir, f"{self.seq:03d}-raw")
        # "NAME: N rows, C columns, G row groups, W workers: S s, R rows/s, M MB/s of Arrow
        # buffers[, C CPU s]" (pyarrow_decode.py adds its CPU without the interpreter's start)
        words = p.output.strip().splitlines()[-1].replace(",", "").split()
        rows, rate = int(words[1]), float(words[words.index("rows/s") - 1])
        cpu = float(words[words.index("CPU") - 1]) if "CPU" in words else p.cpu
        rec = {"contender": contender, "round": round_, "step_ms": 0.0, "rows": rows,
               "seconds": rows / rate, "rows_per_s": rate,
               "mb_per_s": float(words[words.index("MB/s") - 1]), "ttfb": None, "stall_pct": None,
               "cpu": {"producer": cpu}, "rss_kib": {"producer": p.rss_kib},
               "cpu_per_mrow": cpu / rows * 1e6, "rss_total_kib": sampler.pss_total or p.rss_kib}
        self.records.append(rec)
        log(describe(rec))
        return rec

    def memcpy(self, round_: int, rows: int, row_bytes: int) -> dict[str, Any]:
        """A memcpy of the same tensor bytes on one core: batch after batch, read in turn
        from a 256 MiB source (not cache-resident) into 8 rotating batch buffers (a ring's
        worth of destinations); the epoch's bytes, repeated until it took 1 s or more."""
        n = 1024
        size = n * row_bytes
        src = np.random.default_rng(0).integers(0, 255, 256 << 20, dtype=np.uint8)
        dsts = [np.ones(size, np.uint8) for _ in range(8)]
        per = len(src) // size
        batches = -(-rows // n)
        done = 0
        c0, t0 = time.process_time(), time.perf_counter()
        while done < batches or time.perf_counter() - t0 < 1.0:
            k = done % per
            np.copyto(dsts[done % 8], src[k * size : (k + 1) * size])
            done += 1
        secs, cpu = time.perf_counter() - t0, time.process_time() - c0
        batches = done
        rec = {"contender": "memcpy", "round": round_, "step_ms": 0.0, "rows": batches * n, "seconds": secs,
               "rows_per_s": batches * n / secs, "mb_per_s": batches * size / secs / 1e6,
               "ttfb": None, "stall_pct": None, "cpu": {"producer": cpu}, "rss_kib": {},
               "cpu_per_mrow": cpu / (batches * n) * 1e6, "rss_total_kib": None}
        self.records.append(rec)
        log(describe(rec))
        return rec


def summarize(contender: str, round_: int, step_ms: float, t0: float, procs: list[Proc],
              ranks: list[dict[str, Any]], sampler: Sampler, workers: int | None) -> dict[str, Any]:
    rows = sum(r["rows"] for r in ranks)
    nbytes = sum(r["bytes"] for r in ranks)
    first = min(r["first"] for r in ranks)
    last = max(r["last"] for r in ranks)
    secs = max(last - first, 1e-9)
    producer = [p for p in procs if p.role == "producer"]
    consumers = [p for p in procs if p.role == "consumer"]
    consumer_pids = {r["pid"] for r in ranks}
    roots = set(sampler.roots)
    worker_rss = [v for pid, v in sampler.peak.items() if pid not in consumer_pids and pid not in roots]
    measured = [r["producer_cpu"] for r in ranks if r.get("producer_cpu") is not None]
    if measured:  # --from-epoch: serve's CPU over the measured epochs, and their start
        t0 = min(r["t0"] for r in ranks)
    cpu = {
        "producer": max(measured) if measured else sum(p.cpu for p in producer),
        # The consumers' CPU from the start of their loader: the interpreter and the
        # imports (numpy, pyarrow, torch) cost the same whatever the loader.
        "consumers": sum(r["cpu_self"] - r["cpu_ready"] for r in ranks),
        "workers": sum(r["cpu_children"] for r in ranks),
    }
    rss = {
        "producer": max((p.rss_kib for p in producer), default=0),
        "consumer": max(r["rss_self_kib"] for r in ranks),
        "consumer_ready": max(r["rss_ready_kib"] for r in ranks),
        "worker": max(worker_rss, default=0),
        "workers": len(worker_rss),
        # every process's peak, by role
        "every": {"producer": [p.rss_kib for p in producer], "consumer": [r["rss_self_kib"] for r in ranks],
                  "worker": sorted(worker_rss)},
    }
    # The run's memory: the largest sum of every process's PSS seen (shared pages, the
    # ring's or those a forked worker shares with its parent, counted once).
    total_rss = sampler.pss_total
    waited = sum(r["waited"] for r in ranks)
    stepped = sum(r["stepped"] for r in ranks)
    sums: dict[str, int] = {}
    for r in ranks:
        for k, v in r["sums"].items():
            sums[k] = (sums.get(k, 0) + int(v)) % 2**64
    return {
        "contender": contender, "round": round_, "step_ms": step_ms, "workers": workers,
        # The epoch's rate: from the start (imports done, loader starting) to the last batch.
        "rows": rows, "bytes": nbytes, "seconds": last - t0,
        "rows_per_s": rows / (last - t0), "mb_per_s": nbytes / (last - t0) / 1e6,
        "steady_rows_per_s": rows / secs,  # from the first batch on
        "ttfb": max(r["first"] for r in ranks) - t0,
        "stall_pct": 100 * waited / (waited + stepped) if step_ms else None,
        "cpu": cpu, "cpu_per_mrow": sum(cpu.values()) / rows * 1e6,
        "rss_kib": rss, "rss_total_kib": total_rss, "sums": sums,
        "consumers": len(consumers),
    }


def describe(rec: dict[str, Any]) -> str:
    s = f"round {rec['round']} {rec['contender']:<20}"
    if rec.get("workers") is not None:
        s += f" workers={rec['workers']}"
    if rec["step_ms"]:
        s += f" step {rec['step_ms']:g} ms: stall {rec['stall_pct']:.1f}%, {rec['rows_per_s']:,.0f} rows/s"
    else:
        s += f" {rec['rows_per_s']:,.0f} rows/s {rec['mb_per_s']:,.1f} MB/s"
    if rec.get("ttfb") is not None:
        s += f", first batch {rec['ttfb']:.2f} s"
    s += f", {rec['cpu_per_mrow']:.2f} CPU s/1M rows"
    if rec.get("rss_total_kib"):
        s += f", memory {rec['rss_total_kib'] / 1024:,.0f} MiB in all (PSS)"
    if rec.get("checksum") not in (None, "ok", "reference"):
        s += f" [{rec['checksum']}]"
    return s


# ---------------------------------------------------------------------------------------


def ensure_dataset(args: argparse.Namespace) -> str:
    path = os.path.join(args.data_root, f"rows-{args.rows}-rg{args.row_group_rows}")
    if not os.path.exists(os.path.join(path, ".complete")):
        files = max(1, round(args.rows / 125_000))
        log(f"generating {args.rows:,} rows in {files} files into {path} (once)")
        subprocess.run([args.bin, "gen", "--out", path, "--rows", str(args.rows), "--files", str(files),
                        "--row-group-rows", str(args.row_group_rows), "--overwrite", "--quiet"], check=True)
        open(os.path.join(path, ".complete"), "w").close()
    return path


def tune(bench: Bench, contender: str, candidates: list[int]) -> int:
    best, best_rate = candidates[0], -1.0
    for w in candidates:
        rec = bench.run(contender, 0, 0.0, workers=w)
        if rec is not None and rec["rows_per_s"] > best_rate:
            best, best_rate = w, rec["rows_per_s"]
    log(f"tuned {contender}: {best} workers per rank")
    return best


def machine() -> dict[str, Any]:
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "")
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    import petastorm
    import pyarrow
    import torch

    try:
        go = subprocess.run([os.environ.get("GO", "go"), "env", "GOVERSION"], capture_output=True,
                            text=True, timeout=60).stdout.strip()
    except OSError:
        go = "unknown"
    return {"cpus": os.cpu_count(), "cpu_model": model, "memory_gib": round(mem / 2**30, 1),
            "kernel": platform.release(), "python": platform.python_version(), "go": go,
            "numpy": np.__version__, "pyarrow": pyarrow.__version__, "torch": torch.__version__,
            "petastorm": petastorm.__version__}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=int(os.environ.get("ROWS", 2_000_000)),
                    help="dataset rows (generated once under --data-root)")
    ap.add_argument("--rounds", type=int, default=int(os.environ.get("ROUNDS", 3)))
    ap.add_argument("--step-ms", type=float, default=float(os.environ.get("STEP_MS", 6)),
                    help="simulated step time per batch for the data-stall runs")
    ap.add_argument("--torch-workers", default=os.environ.get("TORCH_WORKERS", "auto"),
                    help="DataLoader worker processes per rank, or auto: the fastest of 1..4 (num_workers=0, "
                    "loading inside the trainer, runs as its own contender)")
    ap.add_argument("--petastorm-workers", default=os.environ.get("PETASTORM_WORKERS", "auto"),
                    help="Petastorm workers_count per rank, or auto: the fastest of 1, 2, 4, 8")
    ap.add_argument("--only", default=os.environ.get("ONLY", ""),
                    help="comma-separated subset: raw,memcpy,shmloader,shmloader-warm,torch,petastorm,petastorm-warm")
    ap.add_argument("--row-group-rows", type=int, default=16384)
    ap.add_argument("--data-root", default=os.path.join(REPO, "build", "bench-data"))
    ap.add_argument("--bin", default=os.environ.get("SHMLOADER_BIN", os.path.join(REPO, "build", "bin", "shmloader")))
    ap.add_argument("--rawdecode", default=os.path.join(REPO, "build", "bin", "rawdecode"))
    ap.add_argument("--out", default=os.path.join(REPO, "bench", "results", "peers.json"))
    args = ap.parse_args()
    # SIGTERM as SIGINT: unwind, so that every finally kills its processes and removes
    # the segment, cache and log directories.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.rows < RANKS * 1024 or args.rounds < 1 or args.step_ms <= 0:
        ap.error("--rows must be at least 2048, --rounds at least 1 and --step-ms above 0")
    want = set(filter(None, args.only.split(","))) or {"raw", "memcpy", "shmloader", "shmloader-warm", "torch",
                                                        "petastorm", "petastorm-warm"}

    log(f"hash_bucket in numpy checked against {work.check_hash_vectors()} vectors of producer/transform/testdata")
    dataset = ensure_dataset(args)
    logdir = tempfile.mkdtemp(prefix="shmloader-bench-")
    shm_dir = tempfile.mkdtemp(prefix="shmloader-bench-", dir="/dev/shm")
    cache_root = tempfile.mkdtemp(prefix="bench-caches-", dir=os.path.join(REPO, "build"))
    bench = Bench(args, dataset, logdir, shm_dir)
    host = machine()
    started = time.monotonic()
    try:
        # Every contender reads the files from the page cache: one untimed pass first.
        subprocess.run([args.rawdecode, "--config", CONFIG, "--dataset", dataset], check=True,
                       stdout=subprocess.DEVNULL)
        if "shmloader" in want:  # the checksum reference, untimed
            bench.run("shmloader", 0, 0.0)
        tw = pw = 0
        if "torch" in want:
            tw = tune(bench, "torch", [1, 2, 3, 4]) if args.torch_workers == "auto" else int(args.torch_workers)
        if want & {"petastorm", "petastorm-warm"}:
            pw = tune(bench, "petastorm", [1, 2, 4, 8]) if args.petastorm_workers == "auto" else int(args.petastorm_workers)
        tuning = list(bench.records)
        bench.records.clear()
        for rnd in range(1, args.rounds + 1):
            log(f"== round {rnd} of {args.rounds}")
            row_bytes = 0
            if "raw" in want:
                bench.raw(rnd)
                bench.raw(rnd, "raw pyarrow decode")
            cache = tempfile.mkdtemp(dir=cache_root)  # Petastorm's, filled once per round
            scache = tempfile.mkdtemp(dir=cache_root)  # shmloader's, likewise (on local disk)
            # The contenders' order turns with each round, so none always runs first.
            groups = ["shmloader", "torch", "petastorm"]
            k = (rnd - 1) % len(groups)
            for step in (0.0, args.step_ms):
                for g in groups[k:] + groups[:k]:
                    if g == "shmloader" and "shmloader" in want:
                        rec = bench.run("shmloader", rnd, step)
                        if rec is not None:
                            row_bytes = rec["bytes"] // rec["rows"]
                    if g == "shmloader" and "shmloader-warm" in want:
                        # Like Petastorm's: a run fills the cache, then a new serve process
                        # reads every row group from it (and checks each entry's checksum once).
                        if not step:
                            bench.run("shmloader fill", rnd, step, cache=scache)
                        bench.run("shmloader warm", rnd, step, cache=scache)
                        # As a training job sees it: one serve, epoch 0 fills a fresh cache,
                        # epoch 1 (measured) reads it.
                        fresh = tempfile.mkdtemp(dir=cache_root)
                        bench.run("shmloader epoch 2", rnd, step, cache=fresh)
                        shutil.rmtree(fresh, ignore_errors=True)
                    if g == "torch" and "torch" in want:
                        bench.run("torch", rnd, step, workers=tw)
                        bench.run("torch in-process", rnd, step, workers=0)
                    if g == "petastorm" and "petastorm" in want:
                        bench.run("petastorm", rnd, step, workers=pw)
                    if g == "petastorm" and "petastorm-warm" in want:
                        if not step:
                            bench.run("petastorm fill", rnd, step, workers=pw, cache=cache)
                        bench.run("petastorm warm", rnd, step, workers=pw, cache=cache)
            shutil.rmtree(cache, ignore_errors=True)
            shutil.rmtree(scache, ignore_errors=True)
            if "memcpy" in want:
                bench.memcpy(rnd, args.rows, row_bytes or 652)
    finally:
        shutil.rmtree(shm_dir, ignore_errors=True)
        shutil.rmtree(cache_root, ignore_errors=True)
    result = {
        "command": "make bench ROWS=%d ROUNDS=%d STEP_MS=%g" % (args.rows, args.rounds, args.step_ms),
        "date": time.strftime("%Y-%m-%d"), "rows": args.rows, "rounds": args.rounds, "step_ms": args.step_ms,
        "torch_workers": tw, "petastorm_workers": pw, "machine": host,
        "minutes": round((time.monotonic() - started) / 60, 1),
        "dataset": {"path": os.path.relpath(dataset, REPO), "bytes": sum(
            os.path.getsize(os.path.join(dataset, f)) for f in os.listdir(dataset) if f.endswith(".parquet"))},
        "tuning": tuning, "records": bench.records, "failures": bench.failures,
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    for f in bench.failures:
        log(f"wrong data (run again): round {f['round']} {f['what']}")
    if bench.failures:
        log(f"wrote {args.out} ({result['minutes']} min); logs kept in {logdir}")
    else:
        shutil.rmtree(logdir, ignore_errors=True)
        log(f"wrote {args.out} ({result['minutes']} min)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
