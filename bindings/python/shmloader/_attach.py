"""Attaching to a rank's ring: checking the arguments, waiting for a live producer, and
an error that says what was found instead (shmloader.attach and shmloader.torch.attach
both open their stream here)."""

from __future__ import annotations

import ctypes
import os
import re
import time

from . import _lib
from ._ring import Ring
from ._stream import Stream, check_timeout, index, slice_ms
from ._values import RingInfo
from .errors import InvalidArgument, error_for

_JOB_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,39}")  # PROTOCOL.md "Files"


def default_rank() -> int:
    """The local rank of this process under torchrun (and other launchers that follow its
    conventions): ``$LOCAL_RANK``, else 0. Raises InvalidArgument for a malformed value."""
    value = os.environ.get("LOCAL_RANK")
    if value is None or value == "":
        return 0
    try:
        rank = int(value)
    except ValueError:
        rank = -1
    if rank < 0:
        raise InvalidArgument(f"attach: $LOCAL_RANK is {value!r}, not an integer >= 0")
    return rank


def open_stream(
    job: str,
    rank: int | None,
    *,
    timeout: float | None,
    dir: str | os.PathLike[str] | None,
    batch_timeout: float | None,
) -> Stream:
    """The stream of ring ``rank`` of ``job``, attached: see :func:`shmloader.attach`."""
    if not isinstance(job, str) or not _JOB_NAME.fullmatch(job):
        raise InvalidArgument(
            f"attach: job must be 1-40 characters of [A-Za-z0-9_.-], not starting with "
            f"'.' or '-', not {job!r}"
        )
    if rank is None:
        rank = default_rank()
    checked = index(rank, 2**31)
    if checked is None:
        raise InvalidArgument(f"attach: rank must be an int >= 0, not {rank!r}", job=job)
    rank = checked
    check_timeout("timeout", timeout)
    check_timeout("batch_timeout", batch_timeout)
    _lib.lib()  # LibraryNotFound before anything else is looked for
    where = os.fspath(dir) if dir is not None else os.environ.get("SHMLOADER_SHM_DIR") or "/dev/shm"
    if not os.path.isdir(where):
        # A producer creates its segments in an existing directory: waiting cannot help.
        raise InvalidArgument(
            f"attach: segment directory {where!r} does not exist (the producer's --dir, "
            f"$SHMLOADER_SHM_DIR, or /dev/shm)",
            job=job,
            rank=rank,
        )
    ring = Ring(_wait(job, rank, dir, where, timeout), job, rank)
    c_info = _lib.InfoDesc()
    rc = _lib.lib().shml_info_get(ring.handle, ctypes.byref(c_info))
    if rc != _lib.OK:
        raise ring.error(rc, "attach (info)")
    return Stream(ring, where, RingInfo.from_c(c_info), batch_timeout)


def _wait(
    job: str, rank: int, dir: str | os.PathLike[str] | None, where: str, timeout: float | None
) -> int:
    """The handle of an attach that waited up to ``timeout`` for a live producer."""
    lib = _lib.lib()
    c_dir = os.fsencode(dir) if dir is not None else None
    deadline = None if timeout is None else time.monotonic() + timeout
    handle = ctypes.c_void_p()
    while True:
        rc = lib.shml_attach_dir(
            c_dir, job.encode("utf-8"), rank, slice_ms(deadline), ctypes.byref(handle)
        )
        if rc == _lib.OK:
            return int(handle.value or 0)
        # No segment yet, or one left by a dead producer that a new one will replace:
        # keep waiting while time is left.
        retry = rc in (_lib.ETIMEOUT, _lib.EGONE)
        if not retry or (deadline is not None and time.monotonic() >= deadline):
            text = _lib.strerror(rc)
            if rc == _lib.EVERSION:
                text += _version_detail(where, job, rank)
            if rc == _lib.ERANK:
                text += _ranks_detail(where, job)
            if retry:
                from ._jobs import describe  # only on this error path

                text = (
                    f"no live producer for job {job!r} in {where} after {timeout:g} s; "
                    f"{describe(where, job)}"
                )
                # Waited for a live producer in vain: a Timeout, even where the only
                # segment seen was a dead producer's (the C library's SHML_EGONE).
                rc = _lib.ETIMEOUT
            raise error_for(rc, text, op=f"attach in {where}", job=job, rank=rank)


def _version_detail(where: str, job: str, rank: int) -> str:
    """The versions behind SHML_EVERSION: the segment's, as its header says, and this
    library's."""
    rc, segment = _lib.peek_segment(where, job, rank)
    if rc != _lib.OK or segment.version == 0:
        return ""
    return (
        f": the segment speaks ring protocol version {segment.version}, this library "
        f"{_lib.lib().shml_protocol_version()}; serve and the trainers must come from the "
        "same shmloader release"
    )


def _ranks_detail(where: str, job: str) -> str:
    """How many ranks the job serves, as rank 0's header says."""
    rc, segment = _lib.peek_segment(where, job, 0)
    if rc != _lib.OK or segment.ranks == 0:
        return ""
    return (
        f": the job serves ranks 0..{segment.ranks - 1} on this host (serve's ranks, "
        "$LOCAL_WORLD_SIZE)"
    )
