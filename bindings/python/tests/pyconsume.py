"""A Python consumer process for the tests, the counterpart of the C shml-consume.

Modes:
  (default)   read each --rank in turn to the end of the stream, checking every row (its
              crc and its id), and print ``rank=R batches=N rows=M crc32=X`` per rank.
  --follow    read one rank until the producer goes away, printing ``batch seq= epoch=
              step=`` per batch; on ProducerGone print ``gone`` and exit 3.
  --hold K    take --skip batches (releasing them), then take K and keep them, print
              ``holding seq= epoch= step=`` for the first kept one, and sleep.

Exit codes follow shml-consume: 3 producer gone, 4 timeout, 5 data mismatch.
"""

from __future__ import annotations

import argparse
import sys
import time
import zlib

import numpy as np

import shmloader


class Mismatch(Exception):
    pass


def expected_ids(batch: shmloader.Batch, batches: int, ranks: int, rank: int, rows: int):
    first = ((batch.epoch * batches + batch.step) * ranks + rank) * rows
    return np.arange(first, first + batch.rows, dtype=np.int64)


def check(batch: shmloader.Batch, batches: int, ranks: int, rank: int, rows: int) -> None:
    payload = batch["payload"]
    for i in range(batch.rows):
        if zlib.crc32(payload[i]) != int(batch["crc"][i]):
            raise Mismatch(f"rank {rank} epoch {batch.epoch} step {batch.step} row {i}: crc")
    want = expected_ids(batch, batches, ranks, rank, rows)
    if not np.array_equal(batch["id"], want):
        raise Mismatch(
            f"rank {rank} epoch {batch.epoch} step {batch.step}: ids {batch['id']} != {want}"
        )


def read_all(args: argparse.Namespace, rank: int) -> None:
    with shmloader.attach(args.job, rank, timeout=args.timeout) as loader:
        n = rows = 0
        crc = 0
        for batch in loader:
            check(batch, args.batches, loader.info.ranks, rank, loader.info.batch_capacity)
            crc = zlib.crc32(batch["payload"].data, crc)
            n += 1
            rows += batch.rows
        print(f"rank={rank} batches={n} rows={rows} crc32={crc:08x}", flush=True)


def follow(args: argparse.Namespace) -> None:
    with shmloader.attach(args.job, args.rank[0], timeout=args.timeout) as loader:
        try:
            for batch in loader:
                check(batch, args.batches, loader.info.ranks, args.rank[0],
                      loader.info.batch_capacity)  # fmt: skip
                print(f"batch seq={batch.seq} epoch={batch.epoch} step={batch.step}", flush=True)
        except shmloader.ProducerGone as exc:
            print(f"gone t={time.monotonic():.6f} {exc}", flush=True)
            sys.exit(3)


def hold(args: argparse.Namespace) -> None:
    loader = shmloader.attach(args.job, args.rank[0], timeout=args.timeout)
    for _ in range(args.skip):
        skipped = loader.next()
        assert skipped is not None
        skipped.release()
    kept = [loader.next() for _ in range(args.hold)]
    first = kept[0]
    assert first is not None
    print(f"holding seq={first.seq} epoch={first.epoch} step={first.step}", flush=True)
    time.sleep(3600)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--job", required=True)
    parser.add_argument("--rank", type=int, action="append", required=True)
    parser.add_argument("--batches", type=int, required=True, help="batches per epoch")
    parser.add_argument("--timeout", type=float, default=10.0)
    parser.add_argument("--follow", action="store_true")
    parser.add_argument("--hold", type=int, default=0)
    parser.add_argument("--skip", type=int, default=0)
    args = parser.parse_args()
    try:
        if args.follow:
            follow(args)
        elif args.hold:
            hold(args)
        else:
            for rank in args.rank:
                read_all(args, rank)
    except Mismatch as exc:
        print(f"mismatch: {exc}", file=sys.stderr, flush=True)
        sys.exit(5)
    except shmloader.ProducerGone as exc:
        print(f"gone: {exc}", file=sys.stderr, flush=True)
        sys.exit(3)
    except shmloader.Timeout as exc:
        print(f"timeout: {exc}", file=sys.stderr, flush=True)
        sys.exit(4)


if __name__ == "__main__":
    main()
