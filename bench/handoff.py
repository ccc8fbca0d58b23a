"""Python consumer for the transport benchmark (bench/transport.sh).

Reads a `shmloader debug-produce` stream through the Python binding and prints the
stamp-to-receive latency of each batch (median, p99), the per-batch cost and bytes/s.
--api torch reads it through shmloader.torch instead (--pin: the ring registered with
CUDA; --device cuda: each batch copied to the GPU); --no-latency leaves the loop body
empty, so ns_per_batch is the handoff alone, the same work for every --api.
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
    ap.add_argument("--api", choices=["numpy", "torch", "paired"], default="numpy",
                    help="paired: numpy and torch in alternating blocks of 1000 batches on one "
                    "stream (the fairest comparison on a noisy machine)")
    ap.add_argument("--pin", action="store_true", help="torch: register the ring with CUDA")
    ap.add_argument("--device", default=None, help="torch: copy each batch to this device")
    ap.add_argument("--no-latency", action="store_true", help="time the handoff alone")
    a = ap.parse_args()
    if a.api == "paired":
        return paired(a)
    if a.api == "torch" or a.no_latency:
        return bare(a)

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


def bare(a: argparse.Namespace) -> None:
    """The handoff alone: take and release batches, nothing else."""
    if a.api == "torch":
        import torch
        import shmloader.torch as slt

        loader = slt.attach(a.job, a.rank, timeout=30.0, dir=a.dir, pin=a.pin, device=a.device)
        sync = torch.cuda.synchronize if a.device else (lambda: None)
    else:
        loader = shmloader.attach(job=a.job, rank=a.rank, timeout=30.0, dir=a.dir)
        sync = lambda: None  # noqa: E731
    with loader:
        k = -a.warmup
        start = 0.0
        for _ in loader:
            if k == 0:
                start = time.perf_counter()
            k += 1
            if k == a.batches:
                break
        sync()
        secs = time.perf_counter() - start
    label = a.api + (" pin" if a.pin else "") + (f" device={a.device}" if a.device else "")
    print(f"consumer=python api={label} batches={a.batches} ns_per_batch={secs * 1e9 / a.batches:.0f}")


def paired(a: argparse.Namespace) -> None:
    """numpy and shmloader.torch on one stream, in alternating blocks: the median cost per
    batch of each, and of the difference between neighbouring blocks."""
    import torch

    import shmloader.torch as slt

    block = 1000
    loader = slt.attach(a.job, a.rank, timeout=30.0, dir=a.dir, pin=a.pin, device=a.device)
    sync = torch.cuda.synchronize if a.device else (lambda: None)
    takes = {"numpy": loader.loader.next, "torch": loader.next}
    costs: dict[str, list[float]] = {"numpy": [], "torch": []}
    with loader:
        for _ in range(a.warmup):
            loader.loader.next().release()
        for i in range(a.batches // block):
            for api in ("numpy", "torch") if i % 2 == 0 else ("torch", "numpy"):
                take = takes[api]
                t0 = time.perf_counter()
                for _ in range(block):
                    take().release()
                sync()
                costs[api].append((time.perf_counter() - t0) * 1e9 / block)
    med = {k: float(np.median(v)) for k, v in costs.items()}
    diff = float(np.median(np.array(costs["torch"]) - np.array(costs["numpy"])))
    label = "torch" + (" pin" if a.pin else "") + (f" device={a.device}" if a.device else "")
    print(f"consumer=python paired={label} batches={2 * (a.batches // block) * block} "
          f"numpy_ns={med['numpy']:.0f} torch_ns={med['torch']:.0f} torch_minus_numpy_ns={diff:.0f}")


if __name__ == "__main__":
    main()
