"""One trainer rank of the side-by-side benchmark, for any contender.

    python consume.py --loader shmloader --job J --rank 0 --t0 T
    python consume.py --loader petastorm --dataset DIR --rank 0 --ranks 2 --workers 4 [--cache DIR]
    python consume.py --loader torch --dataset DIR --rank 0 --ranks 2 --workers 2

With --gate, the rank signals once its imports are done and starts its loader when the
harness says go, so that every contender is timed from the same start with the same
imports behind it. Every contender's batches go through the same consumer (work.Touch reads and sums every
byte of every tensor). With --step-ms S the rank also sleeps S ms per batch, a simulated
GPU step that leaves the CPU to the loader, and the time spent waiting for the next batch
is its data stall. Prints one JSON line: rows, bytes, batches, the CLOCK_MONOTONIC times
of the start (imports done), the first and the last batch, seconds waited and stepped
after the first batch, the sums, this process's own and its children's (DataLoader
workers') CPU seconds, its CPU when the loader started, its RSS before the loader, and
its peak RSS.

pyarrow is imported before torch: Petastorm 0.13 with pyarrow 14 crashes otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import pyarrow  # noqa: F401  (before torch)
import pyarrow.parquet as pq
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import work  # noqa: E402

BATCH, WINDOW = 1024, 4  # as in bench.yaml


def shmloader_batches(args: argparse.Namespace) -> Iterator[Mapping[str, np.ndarray]]:
    import shmloader

    with shmloader.attach(job=args.job, rank=args.rank, timeout=300) as loader:
        args.producer_pid = loader.info.producer_pid
        for batch in loader:  # numpy views of the ring slot; each released as the loop moves on
            if batch.epoch >= args.from_epoch:
                yield batch


def proc_cpu(pid: int) -> float:
    """CPU seconds (user + system) process pid has used so far, from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class RowGroupWindows(torch.utils.data.IterableDataset):  # type: ignore[misc]
    """The same plan as serve's, written as a PyTorch user would: the epoch's row groups
    in a seeded order, rank r taking every R-th; windows of WINDOW row groups, each read
    with pyarrow, transformed with work.transform_table and its rows permuted; worker w
    of W takes windows w, w+W, ...; rows left over at a window's end carry into the
    worker's next window, and the last short batch is served."""

    def __init__(self, dataset: str, rank: int, ranks: int, seed: int) -> None:
        self.files = sorted(
            os.path.join(dataset, f) for f in os.listdir(dataset) if f.endswith(".parquet")
        )
        groups = [(f, i) for f in self.files for i in range(pq.ParquetFile(f).num_row_groups)]
        order = np.random.default_rng(seed).permutation(len(groups))
        mine = [groups[i] for i in order[rank::ranks]]
        self.windows = [mine[i : i + WINDOW] for i in range(0, len(mine), WINDOW)]
        self.seed = seed

    def __iter__(self) -> Iterator[dict[str, np.ndarray]]:
        info = torch.utils.data.get_worker_info()
        wid, nw = (info.id, info.num_workers) if info else (0, 1)
        files: dict[str, pq.ParquetFile] = {}
        carry: dict[str, np.ndarray] | None = None
        for k in range(wid, len(self.windows), nw):
            tables = []
            for path, rg in self.windows[k]:
                if path not in files:
                    files[path] = pq.ParquetFile(path, memory_map=True)
                # pyarrow's per-column threads were slower here: the workers are the parallelism
                tables.append(files[path].read_row_group(rg, columns=work.COLUMNS, use_threads=False))
            table = pyarrow.concat_tables(tables)
            out = work.transform_table(table)
            perm = np.random.default_rng((self.seed, k)).permutation(table.num_rows)
            if carry is not None:
                out = {n: np.concatenate([carry[n], out[n][perm]]) for n in out}
                perm = np.arange(len(out["id"]))
            n = len(perm) - len(perm) % BATCH
            for i in range(0, n, BATCH):
                idx = perm[i : i + BATCH]
                yield {name: a[idx] for name, a in out.items()}  # one copy per batch
            carry = {name: a[perm[n:]] for name, a in out.items()} if n < len(perm) else None
        if carry is not None:
            yield carry


def torch_batches(args: argparse.Namespace) -> Iterator[Mapping[str, np.ndarray]]:
    ds = RowGroupWindows(args.dataset, args.rank, args.ranks, args.seed)
    # A worker makes a window's batches at once; let it run a window ahead of the trainer.
    ahead = 2 * WINDOW * args.row_group_rows // BATCH
    loader = torch.utils.data.DataLoader(
        ds, batch_size=None, num_workers=args.workers, prefetch_factor=ahead if args.workers else None,
        persistent_workers=False,
    )
    for batch in loader:
        yield {name: t.numpy() for name, t in batch.items()}


def petastorm_batches(args: argparse.Namespace) -> Iterator[Mapping[str, np.ndarray]]:
    from petastorm import make_batch_reader
    from petastorm.pytorch import BatchedDataLoader
    from petastorm.transform import TransformSpec

    edit = [(c, np.int64, (), False) for c in work.CATS + work.STRINGS]
    edit += [(f, np.float32, (), False) for f in work.FEATURES]
    spec = TransformSpec(work.transform_frame, edit_fields=edit)
    cache: dict[str, Any] = {}
    if args.cache:
        cache = dict(cache_type="local-disk", cache_location=args.cache,
                     cache_size_limit=64 << 30, cache_row_size_estimate=1200,
                     cache_extra_settings={"cleanup": False})  # kept for the warm run
    reader = make_batch_reader(
        "file://" + os.path.abspath(args.dataset), schema_fields=work.COLUMNS,
        reader_pool_type="thread", workers_count=args.workers, shuffle_row_groups=True,
        seed=args.seed, cur_shard=args.rank, shard_count=args.ranks, num_epochs=1,
        transform_spec=spec, **cache,
    )
    with reader:
        loader = BatchedDataLoader(reader, batch_size=BATCH,
                                   shuffling_queue_capacity=WINDOW * args.row_group_rows)
        for batch in loader:
            yield work.stack_columns(batch)


def vm_rss_kib(field: str = "VmRSS") -> int:
    """This process's RSS (VmRSS) or peak RSS since its exec (VmHWM; getrusage's ru_maxrss
    would also count the pre-exec copy of the parent that forked it)."""
    with open("/proc/self/status") as f:
        return next((int(line.split()[1]) for line in f if line.startswith(field + ":")), 0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loader", choices=["shmloader", "petastorm", "torch"], required=True)
    ap.add_argument("--rank", type=int, default=0)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--job", help="shmloader: the serve job")
    ap.add_argument("--dataset", help="petastorm, torch: the Parquet directory")
    ap.add_argument("--workers", type=int, default=2, help="petastorm threads / DataLoader processes")
    ap.add_argument("--cache", help="petastorm: local-disk cache directory (warm runs)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--row-group-rows", type=int, default=16384)
    ap.add_argument("--step-ms", type=float, default=0.0, help="simulated GPU step per batch")
    ap.add_argument("--from-epoch", type=int, default=0,
                    help="shmloader: measure from the first batch of this epoch on (earlier batches are "
                    "released unread): the start time, this process's CPU and serve's (from /proc) are "
                    "taken there")
    ap.add_argument("--gate", help="create GATE.ready once imported, then wait for GATE.go, "
                    "which holds the start time (time.monotonic) every contender is timed from")
    args = ap.parse_args()
    # Ready: the interpreter is up with numpy, pyarrow and torch imported, as in any
    # trainer. What comes after is the loader's cost.
    ready, rss_ready = time.monotonic(), vm_rss_kib()
    t0 = ready
    if args.gate:
        open(f"{args.gate}.ready{args.rank}", "w").close()
        deadline = time.monotonic() + 600
        while not os.path.exists(args.gate + ".go"):
            if time.monotonic() > deadline:
                sys.exit(f"consume: no {args.gate}.go after 600 s")
            time.sleep(0.001)
        time.sleep(0.001)
        with open(args.gate + ".go") as f:
            t0 = float(f.read())
    cpu_ready = time.process_time()
    source = {"shmloader": shmloader_batches, "petastorm": petastorm_batches,
              "torch": torch_batches}[args.loader](args)
    touch = work.Touch()
    step = args.step_ms / 1e3
    first = last = None
    waited = stepped = 0.0
    producer_cpu = None
    t = time.monotonic()
    for batch in source:
        now = time.monotonic()
        if first is None:
            first = now
            if args.from_epoch:  # the measured epochs start here
                t0, cpu_ready, producer_cpu = now, time.process_time(), proc_cpu(args.producer_pid)
        else:
            waited += now - t
        touch(batch)
        if step:
            time.sleep(step)
        t = time.monotonic()
        stepped += t - now
        last = t
    if producer_cpu is not None:
        producer_cpu = proc_cpu(args.producer_pid) - producer_cpu
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps({
        "loader": args.loader, "rank": args.rank, "rows": touch.rows, "bytes": touch.bytes,
        "batches": touch.batches, "t0": t0, "ready": ready, "first": first, "last": last,
        "waited": waited, "stepped": stepped, "sums": {k: str(v) for k, v in touch.sums.items()},
        "cpu_self": me.ru_utime + me.ru_stime, "cpu_children": kids.ru_utime + kids.ru_stime,
        "cpu_ready": cpu_ready, "producer_cpu": producer_cpu, "rss_ready_kib": rss_ready, "rss_self_kib": vm_rss_kib("VmHWM"), "pid": os.getpid(),
    }))


if __name__ == "__main__":
    main()
