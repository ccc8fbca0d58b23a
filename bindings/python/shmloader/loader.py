"""Loader: the positions, iteration and checkpoints of one attached rank, and attach().

:class:`LoaderBase` holds everything a loader does over its :class:`~shmloader._stream.Stream`,
once; :class:`Loader` hands out numpy :class:`Batch` es and ``shmloader.torch.TorchLoader``
torch ones, each saying only what a batch is and when its slot may go back.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any, Generic, TypeVar

from . import _lib
from ._attach import default_rank, open_stream
from ._batch import Batch
from ._stream import EPOCH_END, STREAM_END, Stream, index
from ._values import EpochIterator, LoaderStats, RingInfo
from .errors import InvalidArgument, ShmloaderError

__all__ = [
    "Batch",
    "EpochIterator",
    "Loader",
    "LoaderBase",
    "LoaderStats",
    "RingInfo",
    "attach",
    "default_rank",
]

B = TypeVar("B")
_Self = TypeVar("_Self", bound="LoaderBase[Any]")


def _u64(value: Any, limit: int = 2**64) -> int:
    """``int(value)`` if it lies in [0, limit), else ValueError (or TypeError)."""
    i = int(value)
    if not 0 <= i < limit:
        raise ValueError(f"{i} outside 0..{limit - 1}")
    return i


class LoaderBase(Generic[B]):
    """What every loader of an attached ring has: iteration, positions, checkpoints,
    stats and closing. A subclass says what a batch becomes (:meth:`_deliver`) and, when
    something still reads a slot after its batch is released (a CUDA copy), when the slot
    may go back (:meth:`_reap`, :meth:`_settle`)."""

    def __init__(self, stream: Stream) -> None:
        self._s = stream

    # -- what a subclass says ------------------------------------------------------------

    def _deliver(self, batch: Batch) -> B:
        """What the caller gets for a batch taken from the ring."""
        raise NotImplementedError

    def _reap(self) -> None:
        """Before each batch is taken: hand back the slots nothing reads any more."""

    def _settle(self) -> None:
        """Before every held slot goes back at once (release, seek, close): wait for
        whatever still reads them."""

    # -- state ---------------------------------------------------------------------------

    @property
    def job(self) -> str:
        """The job's name."""
        return self._s.job

    @property
    def rank(self) -> int:
        """This loader's rank on the host."""
        return self._s.rank

    @property
    def dir(self) -> str:
        """The segment directory."""
        return self._s.dir

    @property
    def batch_timeout(self) -> float | None:
        """Default wait for a batch, in seconds (None: no limit); used by iteration and by
        :meth:`next` without a timeout. A dead producer is reported whatever the timeout."""
        return self._s.batch_timeout

    @batch_timeout.setter
    def batch_timeout(self, value: float | None) -> None:
        self._s.batch_timeout = value

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._s.ring is None

    @property
    def info(self) -> RingInfo:
        """Geometry of the ring (see :class:`RingInfo`)."""
        self._s.live("info")
        return self._s.info

    @property
    def held(self) -> int:
        """Number of batches held now."""
        ring = self._s.live("held")
        with ring.lock:
            ring.collect()
            return len(ring.held)

    @property
    def ended(self) -> bool:
        """True once the end of the stream was seen."""
        return self._s.ended

    @property
    def position(self) -> tuple[int, int] | None:
        """``(epoch, step)`` of the next batch to deliver; None until the first batch or
        seek (a consumer that attaches mid-stream cannot know it before)."""
        return self._s.position

    # -- taking batches ------------------------------------------------------------------

    def next(self, timeout: float | None = None) -> B | None:
        """The next batch, or None at the end of an epoch (once per epoch) and at the end
        of the stream (on every call from then on; :attr:`ended` tells which).

        Waits up to ``timeout`` seconds (None: :attr:`batch_timeout`) and raises
        :class:`~shmloader.Timeout` past it, :class:`~shmloader.ProducerGone` if the
        producer dies. The batch stays held until released: its ``release()``,
        :meth:`release`, or dropping every reference to it.
        """
        self._reap()
        got = self._s.take(self._s.batch_timeout if timeout is None else timeout, "next")
        return self._deliver(got) if isinstance(got, Batch) else None

    def _iterate(self, whole_stream: bool) -> Iterator[B]:
        previous: Any = None
        try:
            while True:
                if previous is not None:
                    previous.release()
                    previous = None
                self._reap()
                got = self._s.take(self._s.batch_timeout, "next")
                if got is STREAM_END:
                    return
                if got is EPOCH_END:
                    if whole_stream:
                        continue
                    return
                assert isinstance(got, Batch)
                previous = self._deliver(got)
                yield previous
        finally:
            if not self.closed:
                if previous is not None:
                    previous.release()
                self._reap()

    def epoch(self) -> EpochIterator[B]:
        """Iterate over the rest of the current epoch; stops at its end (or at the end of
        the stream). Call again for the next epoch. Each batch is released when the loop
        advances or ends: copy what you need to keep.

        ``len()`` of the iterator is the number of batches left in the epoch (from the
        loader's position when it is known, else :attr:`RingInfo.steps_per_epoch`), so a
        progress bar shows a total: ``tqdm(loader.epoch())``."""
        s = self._s
        left = s.info.steps_per_epoch
        if s.position is not None and s.base == 0:
            left = max(0, left - s.position[1])
        return EpochIterator(self._iterate(whole_stream=False), left)

    def __iter__(self) -> Iterator[B]:
        """Iterate over every batch of every epoch until the end of the stream."""
        return self._iterate(whole_stream=True)

    def __len__(self) -> int:
        """Batches this rank receives per epoch (:attr:`RingInfo.steps_per_epoch`). Iterating
        the loader itself runs every epoch: give a progress bar ``loader.epoch()``, whose
        ``len()`` is what is left of the current one."""
        return self._s.info.steps_per_epoch

    def stats(self, reset: bool = False) -> LoaderStats:
        """Batches and rows taken, and the time this trainer waited for them, since
        attach (or the last ``stats(reset=True)``). ``.stall`` is the data stall: the
        share of the time the trainer spent waiting for data. ``reset=True`` starts a
        new period after reading this one (e.g. once per epoch)."""
        return self._s.stats(reset)

    # -- releasing, seeking, state -------------------------------------------------------

    def release(self) -> None:
        """Release every held batch."""
        self._s.live("release")
        self._settle()
        self._s.release_all("release")

    def seek(self, epoch: int, step: int, base: int = 0) -> None:
        """Reposition this rank's stream: the next batch delivered is ``(epoch, step)``,
        in an epoch that starts at global batch ``base`` (0, its start, unless it
        continues a position saved under another world size: :meth:`load_state_dict`
        works that out). A position beyond the run raises :class:`~shmloader.OutOfRange`
        naming the valid range, and changes nothing.

        Every held batch is released first (a held slot could keep the producer from
        publishing the answer); views of them then show whatever the producer writes.
        """
        e, s, b = index(epoch, 2**64), index(step, 2**64), index(base, 2**64)
        if e is None or s is None or b is None:
            raise InvalidArgument(
                "seek: epoch, step and base must be integers >= 0, not "
                f"{epoch!r}, {step!r}, {base!r}",
                job=self.job,
                rank=self.rank,
            )
        self._s.live("seek")
        self._settle()
        self._s.seek(e, s, b)

    def state_dict(self) -> dict[str, Any]:
        """Where this consumer stands: ``{"job", "rank", "epoch", "step", "world",
        "base", "config_hash", "plan_version"}``, ``step`` being the next step to deliver
        in an epoch started at global batch ``base`` (0 unless the epoch was resumed
        under another world size) by ``world`` trainers. Every rank of a data-parallel
        job is at the same step, so the world has consumed the epoch's global batches
        ``[base, base + step * world)``. :meth:`load_state_dict` resumes there with the
        same bytes, under this world size or another (and so does ``shmloader serve
        --resume FILE`` with the state saved as JSON)."""
        s = self._s
        s.live("state_dict")
        if s.position is None:
            raise ShmloaderError(
                "state_dict: position unknown until the first batch or a seek",
                job=self.job,
                rank=self.rank,
            )
        epoch, step = s.position
        return {
            "job": self.job,
            "rank": self.rank,
            "epoch": epoch,
            "step": step,
            "world": s.info.world,
            "base": s.base,
            "config_hash": s.info.config_hash,
            "plan_version": s.info.plan_version,
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Seek to a position saved by :meth:`state_dict`.

        The state may come from any rank of the job (every rank is at the same step
        when a data-parallel job checkpoints, and often only rank 0 saves), and from a
        job with another number of trainers (``world``): the world consumed the global
        batches ``[base, base + step * world)`` of the epoch, and this rank continues
        with the first one after them that it serves, so the job as a whole receives
        every later global batch exactly once, byte for byte. The C library's
        ``shml_resume`` works it out, by the rule ``shmloader serve --resume`` applies.
        Raises :class:`~shmloader.InvalidArgument` if it was saved for a producer with
        another config or dataset, or under another plan version, and
        :class:`~shmloader.OutOfRange` for a position beyond the run. A state without
        ``world`` is taken as saved under this job's.
        """
        try:
            saved = _lib.StateDesc(
                epoch=_u64(state["epoch"]),
                step=_u64(state["step"]),
                world=_u64(state.get("world") or 0),
                base=_u64(state.get("base") or 0),
                config_hash=_u64(state.get("config_hash") or 0),
                plan_version=_u64(state.get("plan_version") or 0, 2**32),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise InvalidArgument(
                f"load_state_dict: need integers 'epoch' and 'step' >= 0 (and 'world' >= 1, "
                f"'base', 'config_hash' and 'plan_version' >= 0 if given), got {dict(state)!r}",
                job=self.job,
                rank=self.rank,
            ) from exc
        self.seek(*self._s.resume(saved))

    # -- closing -------------------------------------------------------------------------

    def close(self, done: bool = False) -> None:
        """Release every held batch and close the loader. Idempotent.

        Views of batches stay readable: the ring stays mapped, and this rank's consumer
        claim stays held, until the last view is gone too. After the run's last epoch the
        end of the stream is read first, so serve can finish while views remain.

        ``done=True`` also tells the producer that the job is done (training stopped
        before the stream's end: a max-steps limit, an early stop): serve stops as soon
        as no trainer reads any more (a rank whose trainer still reads is never cut off,
        and no grace is waited once the last one detaches), removes its segments and
        exits 0. Each rank may say it at its end. Without it, serve ends on its own once
        every trainer has detached and none came back within its ``detach_grace`` (60 s
        by default).
        """
        if not self.closed:
            self._settle()
        self._s.close(done)

    def read_end(self, timeout: float = 1.0) -> bool:
        """Take the end-of-stream marker that follows the run's last epoch, if the loader
        has just finished that epoch (``loader.epoch()`` stops at the epoch's end): serve
        finishes once every rank has read its stream to the end or detached, and a loader
        kept open, or closed while a batch's views live on, does neither. :meth:`close`
        and ``Server.wait`` call it. Returns whether the stream has been read to its end."""
        return self._s.read_end(timeout)

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class Loader(LoaderBase[Batch]):
    """A consumer attached to one rank's ring. Create it with :func:`shmloader.attach`.

    Iterate with :meth:`epoch` (one epoch) or over the loader itself (every epoch until the
    end of the stream); while iterating, the previously yielded batch is released when the
    loop advances or ends. Or take batches one at a time with :meth:`next` and release
    them yourself.

    Calls from several threads are serialized; a thread waiting in :meth:`next` lets the
    others in every 0.1 s.
    """

    def _deliver(self, batch: Batch) -> Batch:
        return batch

    def __repr__(self) -> str:
        s = self._s
        head = f"<shmloader.Loader job={s.job!r} rank={s.rank} dir={s.dir!r}"
        if s.ring is None:
            return head + " closed>"
        info = s.info
        where = "end of stream" if s.ended else f"next={s.position}"
        return (
            f"{head} ranks={info.ranks} depth={info.slot_count} "
            f"rows<={info.batch_capacity} producer_pid={info.producer_pid} "
            f"held={len(s.ring.held)} {where}>"
        )


def attach(
    job: str,
    rank: int | None = None,
    *,
    timeout: float | None = 30.0,
    dir: str | os.PathLike[str] | None = None,
    batch_timeout: float | None = 300.0,
) -> Loader:
    """Attach to ring ``rank`` of ``job``, waiting up to ``timeout`` seconds (None: no
    limit) for a live producer to serve it.

    ``rank`` is the trainer's local rank on this host (its GPU); when not given it is
    ``$LOCAL_RANK`` (set by torchrun), else 0.

    ``dir`` is where the segments live (default ``$SHMLOADER_SHM_DIR``, else
    ``/dev/shm``). ``batch_timeout`` is the loader's default wait for a batch.

    Raises :class:`~shmloader.Timeout` when no live producer came in time (its message
    names what a dead producer of the job left, and the ``shmloader clean`` command that
    removes it), :class:`~shmloader.Busy` when the rank already has a consumer, and the
    validation errors (:class:`~shmloader.Corrupt`, :class:`~shmloader.VersionMismatch`,
    :class:`~shmloader.PermissionDenied`) for a segment that cannot be trusted.
    """
    return Loader(open_stream(job, rank, timeout=timeout, dir=dir, batch_timeout=batch_timeout))
