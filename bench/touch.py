"""A trainer that only touches its batches (one byte per 4 KiB page of every tensor),
for bench/producer.sh: what serve delivers when the consumer costs almost nothing.

Prints one JSON line: rank, batches, rows, bytes, seconds from the first batch to the
end of the stream, rows/s and MB/s.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

import shmloader


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--job", required=True)
    ap.add_argument("--rank", type=int, default=0)
    ap.add_argument("--dir", default=None)
    args = ap.parse_args()
    rows = nbytes = batches = 0
    checksum = 0
    first = None
    with shmloader.attach(job=args.job, rank=args.rank, timeout=120, dir=args.dir) as loader:
        for batch in loader:
            if first is None:
                first = time.perf_counter()
            for a in batch.values():
                flat = a.reshape(-1).view(np.uint8)
                checksum += int(flat[::4096].sum())
                nbytes += a.nbytes
            rows += batch.rows
            batches += 1
    secs = time.perf_counter() - (first or time.perf_counter())
    print(json.dumps({"rank": args.rank, "batches": batches, "rows": rows, "bytes": nbytes,
                      "seconds": round(secs, 3), "rows_per_s": round(rows / secs) if secs else 0,
                      "mb_per_s": round(nbytes / secs / 1e6, 1) if secs else 0, "touch": checksum % 1000}))


if __name__ == "__main__":
    main()
