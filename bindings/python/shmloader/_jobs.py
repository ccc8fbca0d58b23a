"""Which jobs a live producer serves in a segment directory, for error messages.

A job is live while its lock file ``shmloader-<uid>-<job>.lock`` carries the producer's
open-file-description write lock (ring/PROTOCOL.md, "Files" and "Liveness and
ownership"); the kernel drops that lock when the producer dies, kill -9 included, so a
file left behind is never mistaken for a live job. This module only asks the kernel
(``F_OFD_GETLK``): it never takes, waits for or breaks a lock, and writes nothing.
"""

from __future__ import annotations

import ctypes
import difflib
import errno
import fcntl
import os
import re
import stat
from dataclasses import dataclass

# Not exposed by every Python's fcntl module; the value is Linux's (asm-generic/fcntl.h).
_F_OFD_GETLK: int = getattr(fcntl, "F_OFD_GETLK", 36)

_JOB_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,39}")  # PROTOCOL.md "Files"
_DECIMAL = re.compile(r"0|[1-9][0-9]{0,9}")  # a rank or a pid, as Go writes them


class _Flock(ctypes.Structure):
    """``struct flock`` of 64-bit file offsets, as the OFD lock commands take it."""

    _fields_ = [
        ("l_type", ctypes.c_short),
        ("l_whence", ctypes.c_short),
        ("l_start", ctypes.c_int64),
        ("l_len", ctypes.c_int64),
        ("l_pid", ctypes.c_int),  # must be 0 for the OFD commands
    ]


@dataclass(frozen=True)
class LiveJob:
    """A job that a live producer serves.

    ``ranks`` are the ranks whose ring segment is in the directory (all of the job's
    ranks once the producer has started; fewer while it creates them). ``pid`` is the
    producer's process id as written in its lock file, or None if it cannot be read.
    """

    name: str
    ranks: tuple[int, ...]
    pid: int | None

    def __str__(self) -> str:
        parts = [_ranks_text(self.ranks)]
        if self.pid is not None:
            parts.append(f"pid {self.pid}")
        return f"{self.name} ({', '.join(parts)})"


def live_jobs(dir: str | os.PathLike[str]) -> list[LiveJob]:
    """The jobs of this user that a live producer serves in ``dir``, sorted by name.

    An unreadable directory has none.
    """
    try:
        names = os.listdir(dir)
    except OSError:
        return []
    prefix = f"shmloader-{os.getuid()}-"
    ranks: dict[str, list[int]] = {}
    locks = []
    for name in names:
        if not name.startswith(prefix):
            continue
        rest = name[len(prefix) :]
        if rest.endswith(".lock"):
            if _JOB_NAME.fullmatch(rest[: -len(".lock")]):
                locks.append(rest[: -len(".lock")])
            continue
        job, sep, rank = rest.rpartition("-r")
        if sep and _JOB_NAME.fullmatch(job) and _DECIMAL.fullmatch(rank):
            ranks.setdefault(job, []).append(int(rank))
    jobs = []
    for job in sorted(locks):
        live, pid = _probe(os.path.join(dir, f"{prefix}{job}.lock"))
        if live:
            jobs.append(LiveJob(job, tuple(sorted(ranks.get(job, []))), pid))
    return jobs


def describe(dir: str | os.PathLike[str], job: str) -> str:
    """What attach says when no live producer serves ``job`` in ``dir``: the live jobs
    there, and the likely one if ``job`` looks like a misspelling of it."""
    jobs = live_jobs(dir)
    if not jobs:
        return f"no job is being served in {os.fspath(dir)}"
    text = "live jobs here: " + ", ".join(str(j) for j in jobs)
    names = [j.name for j in jobs if j.name != job]
    close = difflib.get_close_matches(job, names, n=1)
    if close:
        text += f"; did you mean job {close[0]!r}?"
    return text


def _probe(path: str) -> tuple[bool, int | None]:
    """(whether a producer holds the lock file's write lock, the pid written in it)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return False, None  # gone meanwhile (its producer exited), or not ours to read
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
            return False, None
        if not _write_locked(fd):
            return False, None
        try:
            text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        except OSError:
            text = ""
        return True, int(text) if _DECIMAL.fullmatch(text) else None
    finally:
        os.close(fd)


def _write_locked(fd: int) -> bool:
    """Whether another open file description holds a lock on the whole file that a read
    lock would conflict with. Asks only: F_OFD_GETLK (F_GETLK on kernels before 3.15,
    which sees OFD locks as well)."""
    query = bytes(_Flock(l_type=fcntl.F_RDLCK, l_whence=os.SEEK_SET))
    try:
        out = fcntl.fcntl(fd, _F_OFD_GETLK, query)
    except OSError as exc:
        if exc.errno != errno.EINVAL:
            return False
        try:
            out = fcntl.fcntl(fd, fcntl.F_GETLK, query)
        except OSError:
            return False
    return bool(_Flock.from_buffer_copy(out).l_type != fcntl.F_UNLCK)


def _ranks_text(ranks: tuple[int, ...]) -> str:
    if not ranks:
        return "no ring yet"
    if len(ranks) == 1:
        return f"rank {ranks[0]}"
    if ranks[-1] - ranks[0] == len(ranks) - 1:
        return f"ranks {ranks[0]}-{ranks[-1]}"
    return "ranks " + ",".join(str(r) for r in ranks)
