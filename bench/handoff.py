"""Python consumer for the transport benchmark (bench/transport.sh).

Reads a `shmloader debug-produce` stream through the Python binding and prints the
stamp-to-receive latency of each batch (median, p99), the per-batch cost and bytes/s.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import shmloader


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--job", required=True)
    ap.add_argument("--rank", type=int, default=0)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--batches", type=int, default=100_000)
    ap.add_argument("--warmup", type=int, default=1_000)
    ap.add_argument("--touch", action="store_true", help="read every byte of every tensor")
    a = ap.parse_args()

    lat = np.empty(a.batches, dtype=np.int64)
    nbytes = 0
    sink = 0
    clock = time.clock_gettime_ns
    mono = time.CLOCK_MONOTONIC
    with shmloader.attach(job=a.job, rank=a.rank, timeout=30.0, dir=a.dir) as loader:
        k = -a.warmup
        start = 0.0
        for batch in loader:
            now = clock(mono)
            if k == 0:
                start = time.perf_counter()
            if k >= 0:
                lat[k] = now - int(batch["t_ns"][0])
                for arr in batch.values():
                    nbytes += arr.nbytes
                    if a.touch:
                        sink += int(arr.view(np.uint8).sum(dtype=np.uint64)) & 1
            k += 1
            if k == a.batches:
                break
        secs = time.perf_counter() - start
    lat.sort()
    print(
        f"consumer=python batches={a.batches} median_ns={lat[a.batches // 2]} "
        f"p99_ns={lat[a.batches * 99 // 100]} ns_per_batch={secs * 1e9 / a.batches:.0f} "
        f"bytes_per_s={nbytes / secs:.0f} sink={sink & 1}"
    )


if __name__ == "__main__":
    main()
