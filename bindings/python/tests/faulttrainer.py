"""A checkpointing trainer for the fault-injection driver (faultkit.py).

It reads one rank of a job through the Python binding and, for every batch, appends one
JSON line to LOG before it releases the batch: the batch's epoch, step, base, a sha256 of
all its tensors (harness.batch_hash) and `loader.state_dict()` after it. That line
is the checkpoint: a trainer started again with the same LOG resumes with
`load_state_dict()` of its last line, the way a training script resumes from its last
checkpoint. So whatever kills it, the lines of LOG are the batches it finished, each once,
and they must equal those of an undisturbed run.

On attach it writes LOG.attached; at its end LOG.end (JSON): how the stream ended
("stream_end", "gone", "timeout", "error:..."), when it noticed (time.monotonic(), which
every process on the host shares) and how long the call that failed had waited.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

import harness

import shmloader


def last_state(path: str) -> dict[str, Any] | None:
    """The state of the last complete line of LOG. A line cut short (none should be: each
    is one write(2)) is dropped from the file."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    end = data.rfind(b"\n") + 1
    if end < len(data):
        os.truncate(path, end)
    if end == 0:
        return None
    start = data.rfind(b"\n", 0, end - 1) + 1
    state: dict[str, Any] = json.loads(data[start:end])["state"]
    return state


def main() -> None:
    p = harness.trainer_parser(__doc__, attach_timeout=30.0, batch_timeout=300.0)
    p.add_argument("--log", required=True)
    p.add_argument("--slow", type=float, default=0.0, help="seconds of 'training' per batch")
    args = p.parse_args()

    state = last_state(args.log)
    meta: dict[str, Any] = {"pid": os.getpid(), "resumed": state is not None,
                            "started": time.monotonic()}  # fmt: skip
    fd = os.open(args.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    called = time.monotonic()
    try:
        loader = harness.attach(args)
        harness.write_json(args.log + ".attached", {"at": time.monotonic()})
        with loader:
            if state is not None:
                loader.load_state_dict(state)
            try:
                called = time.monotonic()
                for batch in harness.take(loader):
                    line = {
                        "epoch": batch.epoch,
                        "step": batch.step,
                        "base": batch.base,
                        "sha": harness.batch_hash(batch),
                        "state": loader.state_dict(),
                    }
                    os.write(fd, (json.dumps(line) + "\n").encode())
                    batch.release()
                    if args.slow:
                        time.sleep(args.slow)
                    called = time.monotonic()
            except shmloader.ShmloaderError:
                # When the wait ended: leaving the with block closes the loader, which
                # may wait up to a second more for the end-of-stream marker (read_end).
                meta["noticed"] = time.monotonic()
                raise
            meta["end"] = "stream_end"
    except shmloader.ShmloaderError as exc:
        meta.update(harness.ending(exc))
    meta.setdefault("noticed", time.monotonic())
    meta["call_s"] = meta["noticed"] - called
    harness.write_json(args.log + ".end", meta)
    sys.exit(0)


if __name__ == "__main__":
    main()
