"""A checkpointing trainer for the fault-injection driver (faultkit.py).

It reads one rank of a job through the Python binding and, for every batch, appends one
JSON line to LOG before it releases the batch: the batch's epoch, step, base, a sha256 of
all its tensors (serveconsume.batch_hash) and `loader.state_dict()` after it. That line
is the checkpoint: a trainer started again with the same LOG resumes with
`load_state_dict()` of its last line, the way a training script resumes from its last
checkpoint. So whatever kills it, the lines of LOG are the batches it finished, each once,
and they must equal those of an undisturbed run.

On attach it writes LOG.attached; at its end LOG.end (JSON): how the stream ended
("stream_end", "gone", "timeout", "error:..."), when it noticed (time.monotonic(), which
every process on the host shares) and how long the call that failed had waited.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from serveconsume import batch_hash

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
    return json.loads(data[start:end])["state"]


def write_json(path: str, obj: dict[str, Any]) -> None:
    with open(path + ".tmp", "w") as f:
        json.dump(obj, f)
    os.replace(path + ".tmp", path)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--job", required=True)
    p.add_argument("--rank", type=int, required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--attach-timeout", type=float, default=30.0)
    p.add_argument("--batch-timeout", type=float, default=300.0)
    p.add_argument("--slow", type=float, default=0.0, help="seconds of 'training' per batch")
    args = p.parse_args()

    state = last_state(args.log)
    meta: dict[str, Any] = {"pid": os.getpid(), "resumed": state is not None,
                            "started": time.monotonic()}  # fmt: skip
    fd = os.open(args.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    called = time.monotonic()
    try:
        loader = shmloader.attach(args.job, args.rank, dir=args.dir, timeout=args.attach_timeout,
                                  batch_timeout=args.batch_timeout)  # fmt: skip
        write_json(args.log + ".attached", {"at": time.monotonic()})
        with loader:
            if state is not None:
                loader.load_state_dict(state)
            while True:
                called = time.monotonic()
                try:
                    batch = loader.next()
                except shmloader.ShmloaderError:
                    # When the wait ended: leaving the with block closes the loader, which
                    # may wait up to a second more for the end-of-stream marker (read_end).
                    meta["noticed"] = time.monotonic()
                    raise
                if batch is None:
                    if loader.ended:
                        meta["end"] = "stream_end"
                        break
                    continue  # the end of an epoch
                with batch:
                    line = {"epoch": batch.epoch, "step": batch.step, "base": batch.base,
                            "sha": batch_hash(batch), "state": loader.state_dict()}  # fmt: skip
                    os.write(fd, (json.dumps(line) + "\n").encode())
                if args.slow:
                    time.sleep(args.slow)
    except shmloader.ProducerGone as exc:
        meta["end"], meta["message"] = "gone", str(exc)
    except shmloader.Timeout as exc:
        meta["end"], meta["message"] = "timeout", str(exc)
    except shmloader.ShmloaderError as exc:
        meta["end"] = f"error:{type(exc).__name__}: {exc}"
    meta.setdefault("noticed", time.monotonic())
    meta["call_s"] = meta["noticed"] - called
    write_json(args.log + ".end", meta)
    sys.exit(0)


if __name__ == "__main__":
    main()
