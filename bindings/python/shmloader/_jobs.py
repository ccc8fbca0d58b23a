"""Which jobs a live producer serves in a segment directory, and what a dead one left,
for error messages.

A job is live while its lock file ``shmloader-<uid>-<job>.lock`` carries the producer's
open-file-description write lock (ring/PROTOCOL.md, "Files" and "Liveness and
ownership"); the kernel drops that lock when the producer dies, kill -9 included, so a
file left behind is never mistaken for a live job. This module only asks the kernel
(``F_OFD_GETLK``) and, for what a segment's header says, the C library
(``shml_peek_segment``): it never takes, waits for or breaks a lock, and writes nothing.
"""

from __future__ import annotations

import ctypes
import difflib
import errno
import fcntl
import os
import re
import shlex
import stat
from dataclasses import dataclass

from . import _lib

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


@dataclass(frozen=True)
class DeadJob:
    """A job whose producer died and left files: those ``shmloader clean JOB`` removes.

    ``files`` are (path, size in bytes): ring segments, the lock file, the status file
    and half-written copies of it. ``pid`` is the dead producer's, where its lock file and
    its segments' headers agree on one; else None.
    """

    name: str
    files: tuple[tuple[str, int], ...]
    pid: int | None

    @property
    def size(self) -> int:
        return sum(n for _, n in self.files)


def dead_job(dir: str | os.PathLike[str], job: str) -> DeadJob | None:
    """The files a dead producer of ``job`` left in ``dir``, or None if a live producer
    serves the job (it holds the job lock, or a segment's) or nothing is left. The same
    files, judged by the same locks, as ``shmloader clean --dry-run JOB``."""
    where = os.fspath(dir)
    try:
        names = sorted(os.listdir(where))
    except OSError:
        return None
    prefix = f"shmloader-{os.getuid()}-{job}"
    temp = re.compile(re.escape(f".{prefix}.status.") + r"[0-9]+")
    segment = re.compile(re.escape(f"{prefix}-r") + r"(0|[1-9][0-9]{0,9})")
    live, lock_pid = _probe(os.path.join(where, f"{prefix}.lock"))
    if live:
        return None
    files, pids = [], set()
    if lock_pid is not None:
        pids.add(lock_pid)
    for name in names:
        path = os.path.join(where, name)
        m = segment.fullmatch(name)
        if not (m or temp.fullmatch(name) or name in (f"{prefix}.lock", f"{prefix}.status")):
            continue
        try:
            size = os.lstat(path).st_size
        except OSError:
            continue  # gone meanwhile
        if m:
            alive, pid = _segment(where, job, int(m.group(1)))
            if alive:
                return None  # a producer whose lock file was removed
            if pid is not None:
                pids.add(pid)
        files.append((path, size))
    if not files:
        return None
    return DeadJob(job, tuple(files), pids.pop() if len(pids) == 1 else None)


def describe(dir: str | os.PathLike[str], job: str) -> str:
    """What attach says when no live producer serves ``job`` in ``dir``: what a dead
    producer of the job left and the command that removes it, the live jobs there, and
    the likely one if ``job`` looks like a misspelling of it."""
    jobs = live_jobs(dir)
    dead = dead_job(dir, job)
    left = f"{_left_text(dead, os.fspath(dir))}; " if dead else ""
    if not jobs:
        return f"{left}no job is being served in {os.fspath(dir)}"
    text = left + "live jobs here: " + ", ".join(str(j) for j in jobs)
    names = [j.name for j in jobs if j.name != job]
    close = difflib.get_close_matches(job, names, n=1)
    if close:
        text += f"; did you mean job {close[0]!r}?"
    return text


def _left_text(dead: DeadJob, dir: str) -> str:
    """``its producer (pid 4242) is dead; it left 3 files (24.0 MiB): shmloader clean
    train removes them``, with ``--dir`` unless ``dir`` is where clean looks by default."""
    pid = f" (pid {dead.pid})" if dead.pid is not None else ""
    n = len(dead.files)
    command = f"shmloader clean {dead.name}"  # job names need no quoting
    default = os.environ.get("SHMLOADER_SHM_DIR") or "/dev/shm"
    if os.path.normpath(dir) != os.path.normpath(default):
        command += f" --dir {shlex.quote(dir)}"
    return (
        f"its producer{pid} is dead; it left {n} file{'' if n == 1 else 's'} "
        f"({_size_text(dead.size)}): {command} removes them"
    )


def _size_text(n: int) -> str:
    """Bytes with a binary unit, as the shmloader command prints them (24.0 MiB)."""
    if n < 1024:
        return f"{n} B"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        value /= 1024
        if value < 1024 or unit == "EiB":
            break
    return f"{value:.1f} {unit}"


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
        live = _write_locked(fd)
        try:
            text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        except OSError:
            text = ""
        return live, int(text) if _DECIMAL.fullmatch(text) and text != "0" else None
    finally:
        os.close(fd)


def _segment(where: str, job: str, rank: int) -> tuple[bool, int | None]:
    """(whether a producer holds the segment's producer byte, the producer pid its header
    names): the pid only from a header of this protocol version that names this job and
    rank (shml_peek_segment)."""
    if rank >= 2**31:
        return False, None  # no producer makes so many ranks; a C int cannot name it
    rc, segment = _lib.peek_segment(where, job, rank)
    if segment.producer_alive:
        return True, None
    return False, (segment.producer_pid or None) if rc == _lib.OK else None


def _write_locked(fd: int, start: int = 0, length: int = 0) -> bool:
    """Whether another open file description holds a lock on ``length`` bytes from
    ``start`` (0: to the end of the file) that a read lock would conflict with. Asks
    only: F_OFD_GETLK (F_GETLK on kernels before 3.15, which sees OFD locks as well)."""
    query = bytes(_Flock(l_type=fcntl.F_RDLCK, l_whence=os.SEEK_SET, l_start=start, l_len=length))
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
