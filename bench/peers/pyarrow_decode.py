"""The DataLoader's decoder on its own, for comparison with bench/rawdecode (arrow-go):
pyarrow reads the bench's columns of every row group of a dataset into Arrow tables
(no transforms, no batches) on N threads, each reading whole row groups as rawdecode's
goroutines do (pyarrow's own per-column threading is off: on row groups of this size it
was slower), and prints the rate in rawdecode's format.

    python pyarrow_decode.py DATASET [--workers N]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pyarrow.parquet as pq

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import work  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    files = sorted(os.path.join(args.dataset, f) for f in os.listdir(args.dataset) if f.endswith(".parquet"))
    tasks = [(path, rg) for path in files for rg in range(pq.ParquetFile(path).num_row_groups)]
    opened: dict[tuple[int, str], pq.ParquetFile] = {}

    def read(task: tuple[str, int]) -> tuple[int, int]:
        import threading

        key = (threading.get_ident(), task[0])
        if key not in opened:
            opened[key] = pq.ParquetFile(task[0], memory_map=True)
        t = opened[key].read_row_group(task[1], columns=work.COLUMNS, use_threads=False)
        return t.num_rows, t.nbytes

    start, cpu0 = time.perf_counter(), time.process_time()
    with ThreadPoolExecutor(args.workers) as pool:
        done = list(pool.map(read, tasks))
    cpu = time.process_time() - cpu0
    rows, nbytes, groups = sum(r for r, _ in done), sum(b for _, b in done), len(done)
    secs = time.perf_counter() - start
    print(f"pyarrow_decode: {rows} rows, {len(work.COLUMNS)} columns, {groups} row groups, {args.workers} workers: "
          f"{secs:.2f} s, {rows / secs:.0f} rows/s, {nbytes / secs / 1e6:.1f} MB/s of Arrow buffers, {cpu:.2f} CPU s")


if __name__ == "__main__":
    main()
