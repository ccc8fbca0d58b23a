"""A trainer process for the `shmloader serve` tests: attaches to one rank, reads, and writes
what it saw to OUT.json (every batch's epoch, step, rows, seq and a sha256 of all its
tensors, how the stream ended) and, with --keep all, every tensor to OUT.npz.

The batch hash (harness.batch_hash) covers, per tensor in the producer's schema order, its
name, wire dtype, shape and bytes: two batches hash alike only if a trainer could not tell
them apart.

Modes (the default reads the whole stream, `for batch in loader`):
  --epochs N        call loader.epoch() N times (the per-call counts are recorded), then
                    probe loader.next() once to see whether the stream ended
  --seek E S        seek to (E, S) before reading (after --seek-after N batches: a rewind)
  --load-state F    load_state_dict(json F) before reading
  --seek-script J   for each [epoch, step, n] of the JSON list J: seek there, read n batches
  --max-batches K   stop after K batches; with --save-state F, write state_dict() to F;
                    with --done, close the loader with done=True (the job is done)
  --until-file F    keep retrying attach until attached or F exists (then try once more):
                    a consumer waiting on a producer that may never come

Errors of the library end the reading and are recorded (harness.ending: "end": "gone",
"timeout", "error:<Class>: <message>"; ProducerGone's stop and reason, a Timeout's
reason); the exit code is 0 unless this script itself failed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from typing import Any

import harness
import numpy as np

import shmloader


class Recorder:
    def __init__(self, keep: str) -> None:
        self.keep = keep
        self.batches: list[dict[str, Any]] = []
        self.arrays: dict[str, list[np.ndarray]] = {}
        self.dtypes: dict[str, str] = {}

    def add(self, batch: shmloader.Batch) -> None:
        self.batches.append({"epoch": batch.epoch, "step": batch.step, "rows": batch.rows,
                             "seq": batch.seq, "base": batch.base,
                             "sha": harness.batch_hash(batch)})  # fmt: skip
        self.dtypes = dict(batch.dtypes)
        if self.keep == "all":
            for name, arr in batch.items():
                self.arrays.setdefault(name, []).append(np.array(arr))
        elif self.keep == "ids" and "id" in batch:
            self.arrays.setdefault("id", []).append(np.array(batch["id"]))


def attach(args: argparse.Namespace) -> shmloader.Loader | None:
    if not args.until_file:
        return harness.attach(args)
    deadline = time.monotonic() + args.attach_timeout
    while True:
        last = os.path.exists(args.until_file) or time.monotonic() >= deadline
        try:
            return harness.attach(args, timeout=0.2)
        except shmloader.Timeout:
            if last:
                return None


def read(args: argparse.Namespace, rec: Recorder, meta: dict[str, Any]) -> str:
    loader = attach(args)
    if loader is None:
        return "never-attached"
    with loader:
        meta["info"] = {"ranks": loader.info.ranks, "config_hash": loader.info.config_hash,
                        "batch_capacity": loader.info.batch_capacity}  # fmt: skip
        if args.seek:
            for batch in harness.take(loader, args.seek_after):
                rec.add(batch)
            if loader.ended:
                return "stream_end"
            loader.seek(*args.seek)
        if args.seek_script:
            for epoch, step, n in json.loads(args.seek_script):
                loader.seek(epoch, step)
                for batch in harness.take(loader, n):
                    rec.add(batch)
            return "script"
        if args.load_state:
            with open(args.load_state) as f:
                loader.load_state_dict(json.load(f))
        if args.max_batches is not None:
            for batch in harness.take(loader, args.max_batches - len(rec.batches)):
                rec.add(batch)
                batch.release()
                if args.slow:
                    time.sleep(args.slow)
                if args.ready and len(rec.batches) == 1:
                    open(args.ready, "w").close()
            if loader.ended:
                return "stream_end"
            if args.save_state:
                with open(args.save_state, "w") as f:
                    json.dump(loader.state_dict(), f)
            loader.close(done=args.done)
            return "max"
        if args.epochs is not None:
            counts = meta["epoch_counts"] = []
            for _ in range(args.epochs):
                n = 0
                for batch in loader.epoch():
                    rec.add(batch)
                    n += 1
                    if args.slow:
                        time.sleep(args.slow)
                counts.append(n)
            after = loader.next(timeout=args.probe)
            if after is None:
                return "stream_end" if loader.ended else "epoch_end"
            after.release()
            return "more"
        for batch in loader:
            rec.add(batch)
            if args.slow:
                time.sleep(args.slow)
            if args.ready and len(rec.batches) == 1:
                open(args.ready, "w").close()
        return "stream_end"


def main() -> None:
    p = harness.trainer_parser(__doc__, attach_timeout=20.0, batch_timeout=20.0)
    p.add_argument("--out", required=True, help="prefix of OUT.json and OUT.npz")
    p.add_argument("--keep", choices=["all", "ids", "none"], default="all")
    p.add_argument("--probe", type=float, default=10.0, help="wait of the --epochs probe")
    p.add_argument("--epochs", type=int)
    p.add_argument("--seek", type=int, nargs=2)
    p.add_argument("--seek-after", type=int, default=0, help="batches to read before --seek")
    p.add_argument("--load-state")
    p.add_argument("--seek-script", help="JSON [[epoch, step, batches], ...]: seek, read, repeat")
    p.add_argument("--max-batches", type=int)
    p.add_argument("--save-state")
    p.add_argument("--done", action="store_true", help="with --max-batches: close(done=True)")
    p.add_argument("--until-file")
    p.add_argument("--slow", type=float, default=0.0, help="seconds to sleep per batch")
    p.add_argument("--ready", help="file created once the first batch arrived")
    args = p.parse_args()

    rec = Recorder(args.keep)
    meta: dict[str, Any] = {"job": args.job, "rank": args.rank}
    started = time.monotonic()
    code = 0
    try:
        meta["end"] = read(args, rec, meta)
    except shmloader.ShmloaderError as exc:
        meta.update(harness.ending(exc))
    except Exception:
        meta["end"] = "crash: " + traceback.format_exc()
        code = 2
    meta["ended_at"] = time.time()
    meta["seconds"] = time.monotonic() - started
    meta["batches"] = rec.batches
    meta["dtypes"] = rec.dtypes
    if rec.arrays:
        arrays: dict[str, Any] = {k: np.concatenate(v) for k, v in rec.arrays.items()}
        np.savez(args.out + ".npz", **arrays)
    harness.write_json(args.out + ".json", meta)
    sys.exit(code)


if __name__ == "__main__":
    main()
