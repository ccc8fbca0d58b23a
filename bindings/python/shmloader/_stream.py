"""One attached rank's stream: the ring, where the reader stands in it, and the calls into
the C library that move it. A numpy :class:`~shmloader.Loader` and a torch one are front
ends over a Stream (``TorchLoader.loader`` is a numpy front end over the torch loader's),
so they share one position."""

from __future__ import annotations

import contextlib
import ctypes
import math
import operator
import os
import time

from . import _lib
from ._batch import Batch, Slots
from ._ring import Ring
from ._values import LoaderStats, RingInfo
from .errors import InvalidArgument, LoaderClosed, OutOfRange, ShmloaderError

# Longest single wait inside the C library. Longer waits are made of such slices, so that
# Ctrl-C is handled promptly and other threads can release batches meanwhile.
SLICE_MS = 100

# What Stream.take returns at the end of an epoch and at the end of the stream.
EPOCH_END = object()
STREAM_END = object()


def check_timeout(name: str, value: float | None) -> None:
    if value is not None and not value >= 0:
        raise InvalidArgument(f"{name} must be >= 0 seconds or None, not {value!r}")


def index(value: object, limit: int) -> int | None:
    """``value`` as an int in [0, limit), or None."""
    try:
        i = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        return None
    return i if 0 <= i < limit else None


def slice_ms(deadline: float | None) -> int:
    """Milliseconds for the next C wait: at most one slice, at most what is left."""
    if deadline is None:
        return SLICE_MS
    left = deadline - time.monotonic()
    return max(0, min(SLICE_MS, math.ceil(left * 1000)))


def _why(buf: ctypes.Array[ctypes.c_char]) -> str:
    return buf.value.decode("utf-8", "replace")


class Stream:
    """The state of one attach. Every C call on the ring happens under ``ring.lock``."""

    def __init__(self, ring: Ring, dir: str, info: RingInfo, batch_timeout: float | None) -> None:
        self.ring: Ring | None = ring
        self.dir = dir
        self.info = info
        self.job = ring.job
        self.rank = ring.rank
        self.batch_timeout = batch_timeout
        self.slots = Slots(info, ring.job, ring.rank)
        self.position: tuple[int, int] | None = None
        self.base = 0  # global batch at which the position's epoch started
        self.ended = False
        self._desc = _lib.BatchDesc()
        self._stats_t0 = time.monotonic()
        self._stats_c0 = _lib.StatsDesc()

    def live(self, op: str) -> Ring:
        ring = self.ring
        if ring is None:
            raise LoaderClosed(f"{op}: the loader is closed", job=self.job, rank=self.rank)
        ring.check(op)
        return ring

    def take(self, timeout: float | None, op: str) -> object:
        """The next Batch, or EPOCH_END, or STREAM_END."""
        check_timeout("timeout", timeout)
        deadline = None if timeout is None else time.monotonic() + timeout
        ms = SLICE_MS if timeout is None else min(SLICE_MS, math.ceil(timeout * 1000))
        desc = self._desc
        shml_next = _lib.lib().shml_next
        while True:
            ring = self.live(op)
            with ring.lock:
                ring.check(op)
                if ring.dropped:
                    ring.collect()
                rc = shml_next(ring.handle, ms, ctypes.byref(desc))
                if rc == _lib.OK:
                    batch = self.slots.wrap(ring, desc)
                    self.position = (batch.epoch, batch.step + 1)
                    self.base = batch.base
                    return batch
                if rc == _lib.EEPOCH:
                    if self.position is not None:
                        self.position = (self.position[0] + 1, 0)
                    self.base = 0
                    return EPOCH_END
                if rc == _lib.EEOS:
                    self.ended = True
                    return STREAM_END
                if rc != _lib.ETIMEOUT or (deadline is not None and time.monotonic() >= deadline):
                    why = _no_batch(ring, timeout) if rc == _lib.ETIMEOUT else None
                    raise ring.error(rc, op, why)
            ms = slice_ms(deadline)

    def release_all(self, op: str) -> None:
        ring = self.live(op)
        with ring.lock:
            ring.release_all()
            ring.dropped.clear()

    def seek(self, epoch: int, step: int, base: int) -> None:
        ring = self.live("seek")
        with ring.lock:
            why = ctypes.create_string_buffer(_lib.WHY_BYTES)
            rc = _lib.lib().shml_seek_check(ring.handle, epoch, step, base, why, len(why))
            if rc == _lib.ERANGE:
                raise OutOfRange(f"seek: {_why(why)}", code=rc, job=self.job, rank=self.rank)
            ring.release_all()
            ring.dropped.clear()
            if rc == _lib.OK:
                rc = _lib.lib().shml_seek_base(ring.handle, epoch, step, base)
            if rc != _lib.OK:
                raise ring.error(rc, f"seek({epoch}, {step}, base={base})")
        self.position = (epoch, step)
        self.base = base
        self.ended = False

    def resume(self, saved: _lib.StateDesc) -> tuple[int, int, int]:
        """Where a saved state continues on this rank: (epoch, step, base), by shml_resume."""
        ring = self.live("load_state_dict")
        out = _lib.StateDesc()
        why = ctypes.create_string_buffer(_lib.WHY_BYTES)
        with ring.lock:
            rc = _lib.lib().shml_resume(
                ring.handle, ctypes.byref(saved), ctypes.byref(out), why, len(why)
            )
        text = f"load_state_dict: {_why(why)}"
        if rc == _lib.ERANGE:
            raise OutOfRange(text, code=rc, job=self.job, rank=self.rank)
        if rc == _lib.EINVAL:
            raise InvalidArgument(text, code=rc, job=self.job, rank=self.rank)
        if rc != _lib.OK:
            raise ring.error(rc, "load_state_dict")
        return int(out.epoch), int(out.step), int(out.base)

    def stats(self, reset: bool) -> LoaderStats:
        ring = self.live("stats")
        now = _lib.StatsDesc()
        with ring.lock:
            rc = _lib.lib().shml_stats_get(ring.handle, ctypes.byref(now))
            if rc != _lib.OK:
                raise ring.error(rc, "stats")
        t = time.monotonic()
        c0 = self._stats_c0
        out = LoaderStats(
            batches=int(now.batches - c0.batches),
            rows=int(now.rows - c0.rows),
            wait_s=(now.wait_ns - c0.wait_ns) / 1e9,
            elapsed_s=t - self._stats_t0,
        )
        if reset:
            self._stats_t0, self._stats_c0 = t, now
        return out

    def read_end(self, timeout: float) -> bool:
        """Take the end-of-stream marker if the run's last epoch was just read to its end."""
        if self.ended:
            return True
        info = self.info
        if self.ring is None or not info.epochs or self.position != (info.epochs, 0):
            return False
        with contextlib.suppress(ShmloaderError):
            got = self.take(timeout, "read_end")
            if isinstance(got, Batch):  # a seek moved the stream on: not the end after all
                got.release()
        return self.ended

    def close(self, done: bool) -> None:
        ring = self.ring
        if ring is not None and ring.open and ring.pid == os.getpid():
            self.read_end(1.0)
            if done:
                with ring.lock:
                    _lib.lib().shml_done(ring.handle)
        self.ring = None
        if ring is None:
            return
        with ring.lock:
            try:
                if ring.open and ring.pid == os.getpid():
                    ring.release_all()
            finally:
                ring.open = False
                ring.dropped.clear()


def _no_batch(ring: Ring, timeout: float | None) -> str:
    """What a Timeout of next() says before the producer's reason, or instead of it."""
    text = f"no batch within {timeout:g} s"
    if not ring.stall_reason():
        text += (
            "; the producer is alive but gave no reason: it may be stopped (SIGSTOP, a "
            "debugger) or starved of CPU"
        )
    return text
