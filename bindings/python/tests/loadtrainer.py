"""A trainer for the load soak (loadsoak.py): reads one rank of an endless job and proves,
epoch by epoch, that it lost and repeated nothing, with figures small enough to keep for
hours.

For every batch it checks that (epoch, step) is the one after the last (step 0 of the
next epoch after an epoch's end) and that its ids are new in this epoch. At each epoch's
end it appends one JSON line to OUT: the epoch, its batches, its rows, the sum of
splitmix64(id) over them (mod 2^64) and its wait figures. The driver adds the ranks' lines
of an epoch: the rows and the sum must be those of the whole dataset, each id once.
When the stream ends (serve stopped: ProducerGone) it writes OUT.end with the whole run's
wait figures: loader.stats() and a histogram of the time each next() took.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from typing import Any

import harness
import numpy as np

import shmloader

M1, M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def splitmix64(ids: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        z = ids.astype(np.uint64) + GOLDEN
        z = (z ^ (z >> np.uint64(30))) * M1
        z = (z ^ (z >> np.uint64(27))) * M2
        return z ^ (z >> np.uint64(31))


def id_sum(ids: np.ndarray) -> int:
    """The sum of splitmix64(id) mod 2^64: equal for two sets of ids only if they are the
    same set (but for a chance of 2^-64)."""
    return int(splitmix64(ids).sum(dtype=np.uint64))


class Waits:
    """A histogram of next()'s durations in buckets of a factor of 2 from 1 µs."""

    def __init__(self) -> None:
        self.buckets = [0] * 40
        self.max_s = 0.0

    def add(self, s: float) -> None:
        self.max_s = max(self.max_s, s)
        self.buckets[min(39, max(0, int(math.log2(max(s, 1e-6) / 1e-6))))] += 1

    def quantile(self, q: float) -> float:
        """The upper bound of the bucket holding quantile q."""
        n, seen = sum(self.buckets), 0
        for i, c in enumerate(self.buckets):
            seen += c
            if seen >= q * n:
                return 1e-6 * 2 ** (i + 1)
        return self.max_s


def main() -> None:
    p = harness.trainer_parser(__doc__, attach_timeout=60.0, batch_timeout=60.0)
    p.add_argument("--out", required=True)
    p.add_argument("--steps", type=int, required=True, help="steps per epoch")
    p.add_argument("--no-ids", action="store_true",
                   help="check only the order of the batches: keep no ids (memory flat in "
                        "the dataset's size)")  # fmt: skip
    args = p.parse_args()

    out = open(args.out, "a", buffering=1)  # noqa: SIM115 (open for the whole run)
    waits, epoch_waits = Waits(), Waits()
    meta: dict[str, Any] = {"pid": os.getpid(), "errors": []}
    want = (0, 0)  # the (epoch, step) next due
    ids: list[np.ndarray] = []
    rows = 0
    with harness.attach(args) as loader:
        try:
            while True:
                t0 = time.perf_counter()
                batch = loader.next()
                dt = time.perf_counter() - t0
                waits.add(dt)
                epoch_waits.add(dt)
                if batch is None:
                    if loader.ended:
                        meta["end"] = "stream_end"
                        break
                    if want[1] != args.steps:
                        meta["errors"].append(f"epoch {want[0]} ended after {want[1]} steps")
                    got = np.concatenate(ids) if ids else np.zeros(0, np.int64)
                    dups = len(got) - len(np.unique(got))
                    out.write(json.dumps({
                        "epoch": want[0], "batches": want[1], "rows": rows,
                        "id_sum": id_sum(got), "duplicates": dups,
                        "wait_max_s": epoch_waits.max_s, "wait_p99_s": epoch_waits.quantile(0.99),
                    }) + "\n")  # fmt: skip
                    want, ids, rows, epoch_waits = (want[0] + 1, 0), [], 0, Waits()
                    continue
                with batch:
                    if (batch.epoch, batch.step) != want:
                        meta["errors"].append(f"got epoch {batch.epoch} step {batch.step}, "
                                              f"want {want}")  # fmt: skip
                    rows += batch.rows
                    if not args.no_ids:
                        ids.append(np.array(batch["id"]))
                want = (batch.epoch, batch.step + 1)
        except shmloader.ProducerGone as exc:
            meta.update(harness.ending(exc))
        st = loader.stats()
    meta.update(batches=st.batches, rows=st.rows, wait_s=st.wait_s, elapsed_s=st.elapsed_s,
                stall=st.stall, wait_max_s=waits.max_s, wait_p50_s=waits.quantile(0.5),
                wait_p99_s=waits.quantile(0.99), wait_buckets=waits.buckets)  # fmt: skip
    harness.write_json(args.out + ".end", meta)
    sys.exit(0)


if __name__ == "__main__":
    main()
