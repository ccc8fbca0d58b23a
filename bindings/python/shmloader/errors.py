"""Exceptions raised by shmloader.

Every error is a :class:`ShmloaderError`. Errors from the C library carry its code
(``.code``, a negative ``SHML_E*`` value, and ``.code_name``, e.g. ``"SHML_EGONE"``), the
library's explanation (``shml_strerror``) and where it happened (``.job``, ``.rank``).
Several also derive from the matching built-in exception (:class:`Timeout` is a
``TimeoutError``, :class:`PermissionDenied` a ``PermissionError`` ...), so generic handlers
keep working.

Class                       C codes
--------------------------  --------------------------------------------------------
Timeout                     SHML_ETIMEOUT
ProducerGone                SHML_EGONE
VersionMismatch             SHML_EVERSION
Corrupt                     SHML_EMAGIC, SHML_ESIZE, SHML_EOFFSET, SHML_ESCHEMA,
                            SHML_ECORRUPT
Busy                        SHML_EBUSY
TooManyHeld                 SHML_EHELD
InvalidArgument             SHML_EINVAL
PermissionDenied            SHML_EPERM
OutOfMemory                 SHML_ENOMEM
SystemCallError             SHML_ESYS (``.errno`` is set)
SeekUnanswered              SHML_ESEEK
NoSuchRank                  SHML_ERANK (an InvalidArgument)
OutOfRange                  SHML_ERANGE (an InvalidArgument): a seek beyond the run
EndOfEpoch, EndOfStream     SHML_EEPOCH, SHML_EEOS: internal; the loader turns them into
                            the end of an iteration or a ``None`` from ``next()``
LoaderClosed                (none) a closed loader was used
CudaUnavailable             (none) shmloader.torch was asked for CUDA that torch lacks
LibraryNotFound             (none) libshmloader.so could not be loaded
BinaryNotFound              (none) no ``shmloader`` producer binary was found
"""

from __future__ import annotations

import os

CODE_NAMES: dict[int, str] = {
    0: "SHML_OK",
    -1: "SHML_ETIMEOUT",
    -2: "SHML_EGONE",
    -3: "SHML_EEOS",
    -4: "SHML_EEPOCH",
    -5: "SHML_EMAGIC",
    -6: "SHML_EVERSION",
    -7: "SHML_ESIZE",
    -8: "SHML_EOFFSET",
    -9: "SHML_ESCHEMA",
    -10: "SHML_ECORRUPT",
    -11: "SHML_EBUSY",
    -12: "SHML_EHELD",
    -13: "SHML_EINVAL",
    -14: "SHML_EPERM",
    -15: "SHML_ENOMEM",
    -16: "SHML_ESYS",
    -17: "SHML_ESEEK",
    -18: "SHML_ERANK",
    -19: "SHML_ERANGE",
}


class ShmloaderError(Exception):
    """Base class of every shmloader error.

    ``code`` is the C library's error code (``None`` for errors raised by the binding
    itself), ``job`` and ``rank`` say which ring it concerns when known.
    """

    def __init__(
        self,
        message: str,
        *,
        code: int | None = None,
        job: str | None = None,
        rank: int | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.job = job
        self.rank = rank

    @property
    def code_name(self) -> str | None:
        """Symbolic name of ``code`` (``"SHML_EGONE"``), or None."""
        if self.code is None:
            return None
        return CODE_NAMES.get(self.code, f"SHML_E?({self.code})")


class Timeout(ShmloaderError, TimeoutError):
    """A wait ran past its timeout (no producer at attach, or no batch in time).

    ``reason`` is the producer's own explanation of why this rank had no batch, when it
    gave one (``"rank 0 waits: rank 1 has had no trainer for 42 s (...)"``), else None;
    the message includes it.
    """

    reason: str | None = None


class ProducerGone(ShmloaderError):
    """The producer died or stopped; batches published before that were delivered.

    ``stop`` says why: ``"error"`` (``reason`` is the error, naming the file, row group
    and column, and what to do), ``"signal"`` (SIGTERM or SIGINT, or its launcher went
    away), ``"done"`` (a trainer said the job is done, ``loader.close(done=True)``, and no trainer
    was reading),
    ``"idle"`` (every trainer had detached and none came back in time),
    ``"abandoned"`` (a rank's trainer left and none came back within
    ``--drain-timeout``), ``"unattached"`` (a rank never had a trainer within
    ``--start-grace``), ``"died"`` (killed or crashed, without a word), or None when
    unknown. ``reason`` is the producer's words; the message includes them.
    """

    stop: str | None = None
    reason: str | None = None


class SeekUnanswered(ShmloaderError):
    """A seek (or ``load_state_dict``) came after the producer had finished its stream, so
    nothing will answer it. Restart the producer at that position instead. Never reported
    as a silent, empty end of stream."""


class EndOfEpoch(ShmloaderError):
    """End of an epoch. Internal: the loader reports it as the end of ``epoch()``."""


class EndOfStream(ShmloaderError):
    """End of the stream. Internal: the loader reports it as the end of iteration."""


class VersionMismatch(ShmloaderError):
    """The segment speaks another protocol version than the loaded library."""


class Corrupt(ShmloaderError):
    """The segment failed validation (magic, geometry, schema, extents, or a slot header).

    ``code_name`` says which check failed.
    """


class Busy(ShmloaderError):
    """The rank already has a consumer (another process, or another loader here)."""


class TooManyHeld(ShmloaderError):
    """Holding ``slot_count - 1`` batches already: release some before taking more."""


class InvalidArgument(ShmloaderError, ValueError):
    """A bad argument: job name, rank, a batch that is not held, ..."""


class NoSuchRank(InvalidArgument):
    """The job's live producer serves fewer ranks than the rank asked for: the trainers'
    world size and the producer's ``ranks`` disagree. Raised at once, not at the timeout."""


class OutOfRange(InvalidArgument, IndexError):
    """A seek (or ``load_state_dict``) beyond the run: an epoch past the producer's
    ``epochs``, or a step past the epoch's steps. The message gives the valid range."""


class PermissionDenied(ShmloaderError, PermissionError):
    """The segment is not a mode-0600 regular file owned by this user."""


class OutOfMemory(ShmloaderError, MemoryError):
    """The C library could not allocate memory."""


class SystemCallError(ShmloaderError, OSError):
    """A system call failed inside the C library; ``errno`` says which error."""


class CudaUnavailable(ShmloaderError, RuntimeError):
    """``pin=True`` or a CUDA ``device`` was asked for (``shmloader.torch``), but this
    torch has no usable CUDA."""


class LoaderClosed(ShmloaderError, ValueError):
    """The loader was closed (or belongs to the parent of a fork)."""


class LibraryNotFound(ShmloaderError, ImportError):
    """libshmloader.so could not be found or loaded; the message lists the paths tried."""


class BinaryNotFound(ShmloaderError, FileNotFoundError):
    """No ``shmloader`` producer binary was found (see ``shmloader._binary.find_binary``);
    the message says where it looked and how to get one."""


_CLASSES: dict[int, type[ShmloaderError]] = {
    -1: Timeout,
    -2: ProducerGone,
    -3: EndOfStream,
    -4: EndOfEpoch,
    -5: Corrupt,
    -6: VersionMismatch,
    -7: Corrupt,
    -8: Corrupt,
    -9: Corrupt,
    -10: Corrupt,
    -11: Busy,
    -12: TooManyHeld,
    -13: InvalidArgument,
    -14: PermissionDenied,
    -15: OutOfMemory,
    -16: SystemCallError,
    -17: SeekUnanswered,
    -18: NoSuchRank,
    -19: OutOfRange,
}


def error_for(
    code: int,
    explanation: str,
    *,
    op: str,
    job: str | None = None,
    rank: int | None = None,
    sys_errno: int = 0,
    stop: str | None = None,
    reason: str | None = None,
) -> ShmloaderError:
    """The exception for C error ``code``; the message reads
    ``"<op> job='train' rank=0: <explanation> (SHML_E...)"``. For SHML_EGONE, ``stop``
    and ``reason`` (the producer's words, shml_stop_reason) replace the explanation; for
    SHML_ETIMEOUT, ``reason`` (shml_stall_reason) is added to it."""
    cls = _CLASSES.get(code, ShmloaderError)
    where = op
    if job is not None:
        where += f" job={job!r}"
    if rank is not None:
        where += f" rank={rank}"
    if code == -2 and stop is not None:
        explanation = _stopped(stop, reason, job)
    elif code == -1 and reason:
        explanation = f"{explanation}: {reason}"
    message = f"{where}: {explanation} ({CODE_NAMES.get(code, code)})"
    if code == -16 and sys_errno:
        message += f": [Errno {sys_errno}] {os.strerror(sys_errno)}"
    if code == -11:
        message += (
            "; another process holds this rank, or a Batch or array from an earlier loader"
            " of this process is still alive (the claim goes with the last of them)"
        )
    if code == -12:
        message += "; release batches you are done with (batch.release(), loader.release())"
    exc = cls(message, code=code, job=job, rank=rank)
    if isinstance(exc, ProducerGone):
        exc.stop, exc.reason = stop, reason
    elif isinstance(exc, Timeout):
        exc.reason = reason
    if isinstance(exc, OSError) and sys_errno:
        exc.errno = sys_errno  # strerror stays unset: it would replace the message in str()
    return exc


_STOPPED = {
    "signal": "the producer was stopped",
    "done": "the job is done",
    "idle": "the job is over",
    "abandoned": "the producer gave up",
    "unattached": "the producer gave up",
    "error": "the producer stopped on an error",
}


def _stopped(stop: str, reason: str | None, job: str | None) -> str:
    """What ProducerGone says for a stop of kind ``stop`` (a SHML_STOP_* name)."""
    if stop == "died":
        clean = f"shmloader clean {job}" if job else "shmloader clean"
        return (
            "the producer died without a word (killed: kill -9, the OOM killer; or crashed); "
            "what it had published was delivered; a new serve of the job replaces its "
            f"segments, and `{clean}` removes them"
        )
    head = _STOPPED.get(stop, "the producer stopped")
    if not reason:
        return head
    return reason if reason.startswith(head) else f"{head}: {reason}"
