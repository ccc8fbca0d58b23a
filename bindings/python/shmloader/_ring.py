"""Ownership of an attached C handle, and what keeps it alive.

Object graph, which is what makes the lifetime rules hold::

    Loader ──► Ring ◄── Lease ◄── Batch
                ▲        ▲
                │        └── View ◄── ndarray.base   (one per tensor)
                └── owns the C handle; shml_detach runs when the last reference goes

A view keeps its batch's lease, and the lease keeps the ring, so the mapping outlives every
array pointing into it. ``Loader.close()`` only releases the held batches and marks the
ring closed; the unmapping waits for the last view.
"""

from __future__ import annotations

import ctypes
import os
import threading
import warnings
import weakref
from collections.abc import Callable

from . import _lib
from .errors import LoaderClosed, ShmloaderError, error_for

# This process's pid, kept current by a fork hook: checked on every call, so no getpid
# system call on the hot path.
_pid = os.getpid()


def _after_fork_in_child() -> None:
    global _pid
    _pid = os.getpid()


os.register_at_fork(after_in_child=_after_fork_in_child)


def _detach(handle: int, pid: int, before: list[Callable[[], None]]) -> None:
    # After a fork the child's copy must not detach: that would release the parent's
    # batches and drop its claim. The child's mapping goes away when it exits.
    if _pid == pid:
        for hook in reversed(before):
            try:
                hook()
            except Exception as exc:  # a finalizer has no caller to raise to
                warnings.warn(f"shmloader: before detaching: {exc}", RuntimeWarning, stacklevel=1)
        _lib.lib().shml_detach(handle)


_TEXT_BYTES = 2048  # more than the longest note a segment holds (ring/PROTOCOL.md)


class Ring:
    """The attached C handle and the batches held on it.

    Not thread-safe on its own: every C call happens under ``lock``.
    """

    def __init__(self, handle: int, job: str, rank: int) -> None:
        self.handle = handle
        self.job = job
        self.rank = rank
        self.pid = _pid
        self.lock = threading.RLock()
        self.open = True
        # seq -> descriptor of a held batch (seq is unique in a ring's stream).
        self.held: dict[int, _lib.BatchDesc] = {}
        # seqs of batches whose Batch and views are all gone (appended by Lease.__del__,
        # possibly from any thread, so only appended to and popped from).
        self.dropped: list[int] = []
        # Run, last added first, just before the mapping goes (e.g. cudaHostUnregister).
        self.before_detach: list[Callable[[], None]] = []
        finalizer = weakref.finalize(self, _detach, handle, self.pid, self.before_detach)
        finalizer.atexit = False  # at exit the kernel unmaps and drops the locks anyway

    def check(self, op: str) -> None:
        if self.pid != _pid:
            raise LoaderClosed(
                f"{op}: this loader was attached in process {self.pid}; "
                "attach again in this process (a handle is not shared across fork)",
                job=self.job,
                rank=self.rank,
            )
        if not self.open:
            raise LoaderClosed(f"{op}: the loader is closed", job=self.job, rank=self.rank)

    def error(self, code: int, op: str, explanation: str | None = None) -> ShmloaderError:
        """The exception for ``code`` from a call on this handle, with the producer's
        words when it left any; ``explanation`` replaces shml_strerror's."""
        lib = _lib.lib()
        sys_errno = lib.shml_errno(self.handle) if code == _lib.ESYS else 0
        text = explanation or _lib.strerror(code)
        stop, reason = None, None
        if code == _lib.EGONE:
            stop, reason = self.stop_reason()
        elif code == _lib.ETIMEOUT:
            reason = self.stall_reason() or None
        return error_for(
            code,
            text,
            op=op,
            job=self.job,
            rank=self.rank,
            sys_errno=sys_errno,
            stop=stop,
            reason=reason,
        )

    def stop_reason(self) -> tuple[str | None, str | None]:
        """Why the producer stopped: (kind, its words), e.g. ("error", "data/x.parquet:
        row group 3, column f1, page 2: ..."); kind None while it runs."""
        kind = ctypes.c_int(0)
        buf = ctypes.create_string_buffer(_TEXT_BYTES)
        if _lib.lib().shml_stop_reason(self.handle, ctypes.byref(kind), buf, len(buf)) != _lib.OK:
            return None, None
        name = _lib.STOP_KINDS.get(kind.value)
        if name in (None, "none"):
            return None, None
        return name, buf.value.decode("utf-8", "replace") or None

    def stall_reason(self) -> str:
        """Why this rank has no batch now, as the producer last said ("" if it did not)."""
        buf = ctypes.create_string_buffer(_TEXT_BYTES)
        if _lib.lib().shml_stall_reason(self.handle, buf, len(buf)) != _lib.OK:
            return ""
        return buf.value.decode("utf-8", "replace")

    def release(self, seq: int) -> None:
        desc = self.held.pop(seq, None)
        if desc is None:
            return
        rc = _lib.lib().shml_release(self.handle, ctypes.byref(desc))
        if rc != _lib.OK:
            raise self.error(rc, "release")

    def collect(self) -> None:
        """Release the batches nothing refers to any more."""
        while self.dropped:
            self.release(self.dropped.pop())

    def release_all(self) -> None:
        for seq in list(self.held):
            self.release(seq)


class Lease:
    """A batch's claim on its slot; kept alive by the Batch and by every view of it."""

    __slots__ = ("ring", "seq")

    def __init__(self, ring: Ring, seq: int) -> None:
        self.ring = ring
        self.seq = seq

    def __del__(self) -> None:
        # Never calls into C here (this may run in any thread, at any point): the owner
        # releases dropped batches at its next call.
        self.ring.dropped.append(self.seq)


class View:
    """What numpy builds each array from; ``ndarray.base`` is this object."""

    __slots__ = ("__array_interface__", "lease")

    def __init__(self, lease: Lease, ptr: int, shape: tuple[int, ...], typestr: str) -> None:
        self.lease = lease
        self.__array_interface__ = {
            "version": 3,
            "data": (ptr, False),  # writable: a consumer may write into batches it holds
            "shape": shape,
            "typestr": typestr,
            "strides": None,
        }
