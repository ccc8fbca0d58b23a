"""Loader (one attached ring) and Batch (one held slot, as numpy views).

Lifetimes are kept by the objects in ``_ring``: see its docstring.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import operator
import os
import re
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar

import numpy as np
from numpy.typing import NDArray

from . import _lib
from ._ring import Lease, Ring, View
from .errors import Corrupt, InvalidArgument, LoaderClosed, OutOfRange, ShmloaderError, error_for

# Longest single wait inside the C library. Longer waits are made of such slices, so that
# Ctrl-C is handled promptly and other threads can release batches meanwhile.
_SLICE_S = 0.1
_SLICE_MS = 100

_JOB_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,39}")  # PROTOCOL.md "Files"

_EPOCH_END = object()
_STREAM_END = object()


def _default_dir(dir: str | os.PathLike[str] | None) -> str:
    if dir is not None:
        return os.fspath(dir)
    return os.environ.get("SHMLOADER_SHM_DIR") or "/dev/shm"


def _check_timeout(name: str, value: float | None) -> None:
    if value is not None and not value >= 0:
        raise InvalidArgument(f"{name} must be >= 0 seconds or None, not {value!r}")


def _index(value: object, limit: int) -> int | None:
    """``value`` as an int in [0, limit), or None."""
    try:
        i = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        return None
    return i if 0 <= i < limit else None


def _u64(value: object, limit: int = 2**64) -> int:
    """``int(value)`` if it lies in [0, limit), else ValueError."""
    i = int(value)  # type: ignore[call-overload]
    if not 0 <= i < limit:
        raise ValueError(f"{i} outside 0..{limit - 1}")
    return i


def _slice_ms(deadline: float | None) -> int:
    """Milliseconds for the next C wait: at most one slice, at most what is left."""
    if deadline is None:
        return int(_SLICE_S * 1000)
    left = deadline - time.monotonic()
    return max(0, min(int(_SLICE_S * 1000), math.ceil(left * 1000)))


class _TensorSchema(NamedTuple):
    name: str
    dtype_name: str
    dtype: np.dtype[Any]
    row_shape: tuple[int, ...]
    row_bytes: int
    offset: int  # from the slot's first tensor


@dataclass(frozen=True)
class RingInfo:
    """Geometry of an attached ring (``shml_info``).

    ``base``/``size`` are the whole mapping, e.g. for ``cudaHostRegister``; every slot
    starts page-aligned inside it.
    """

    base: int
    size: int
    slot_count: int
    slot_size: int
    batch_capacity: int
    rank: int
    ranks: int
    ntensors: int
    producer_pid: int
    config_hash: int
    nodes: int = 1
    """Hosts of the job; the world is ``ranks * nodes`` trainers."""
    node_rank: int = 0
    elastic_limit: int = 0
    """The latest global batch an epoch may start at (a resume under another world size)."""
    steps_per_epoch: int = 0
    """Batches this rank receives in an epoch (``len(loader)``). With ``drop_last: true``
    (the default) every rank of the job receives the same number."""
    epochs: int = 0
    """Epochs the producer serves; 0: endless."""
    global_batches: int = 0
    """Batches of an epoch over the whole job (every rank of every node)."""
    plan_version: int = 0
    """The producer's plan version: the rules that turn a position into rows. Saved
    states carry it; 0 for a producer without a plan (``shmloader debug-produce``)."""

    @property
    def world(self) -> int:
        """Trainers of the job: ranks per node times nodes."""
        return self.ranks * self.nodes


@dataclass(frozen=True)
class LoaderStats:
    """What a loader took and how long its trainer waited for it (:meth:`Loader.stats`)."""

    batches: int
    rows: int
    wait_s: float
    """Seconds spent inside :meth:`Loader.next` (and iteration) waiting for a batch."""
    elapsed_s: float
    """Seconds since the loader was attached (or since the last ``stats(reset=True)``)."""

    @property
    def stall(self) -> float:
        """The data stall: the share of the elapsed time the trainer waited for data
        (0.0 .. 1.0). Near 0, the loader keeps up; near 1, the trainer starves."""
        return min(1.0, self.wait_s / self.elapsed_s) if self.elapsed_s > 0 else 0.0

    @property
    def rows_per_s(self) -> float:
        """Rows taken per second of elapsed time."""
        return self.rows / self.elapsed_s if self.elapsed_s > 0 else 0.0

    def __repr__(self) -> str:
        return (
            f"LoaderStats(batches={self.batches}, rows={self.rows}, wait_s={self.wait_s:.3f}, "
            f"elapsed_s={self.elapsed_s:.3f}, stall={self.stall:.1%}, "
            f"rows_per_s={self.rows_per_s:.0f})"
        )


class Batch(Mapping[str, NDArray[Any]]):
    """One batch held from the ring: a read-only mapping of tensor name to numpy array.

    Each array is a **view** of the shared-memory slot (no copy) with shape
    ``[rows, *per_row_dims]``; it is writable while the batch is held. After
    :meth:`release` a view still points at the slot, which the producer refills with later
    batches: copy first (``np.array(batch["x"])``) to keep the data.

    bfloat16 tensors appear as ``uint16`` arrays of the raw bits (numpy has no bfloat16);
    :attr:`dtypes` gives each tensor's wire dtype, and :func:`shmloader.torch_views`
    reinterprets them as ``torch.bfloat16``.

    Use it as a context manager to release it at the end of the block. A batch that is no
    longer referenced (neither the Batch nor any of its arrays) is released at the loader's
    next call.
    """

    __slots__ = ("_lease", "_arrays", "_dtypes", "seq", "epoch", "step", "rows", "base")

    seq: int
    """Position in this ring's stream (0, 1, 2, ...)."""
    epoch: int
    step: int
    """Index of the batch within its epoch, for this rank."""
    rows: int
    base: int
    """Global batch at which the batch's epoch started: 0, unless the epoch was resumed
    from a state saved under another world size (then ``step`` counts from there)."""

    def __init__(
        self,
        lease: Lease,
        seq: int,
        epoch: int,
        step: int,
        rows: int,
        arrays: dict[str, NDArray[Any]],
        dtypes: dict[str, str],
        base: int = 0,
    ) -> None:
        self._lease = lease
        self._arrays = arrays
        self._dtypes = dtypes
        self.seq = seq
        self.epoch = epoch
        self.step = step
        self.rows = rows
        self.base = base

    def __getitem__(self, name: str) -> NDArray[Any]:
        return self._arrays[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._arrays)

    def __len__(self) -> int:
        return len(self._arrays)

    @property
    def dtypes(self) -> Mapping[str, str]:
        """Wire dtype of each tensor (``"float32"``, ``"bfloat16"`` ...)."""
        return dict(self._dtypes)

    @property
    def released(self) -> bool:
        """True once released (by :meth:`release`, the loader, or its closing)."""
        ring = self._lease.ring
        return not ring.open or self._lease.seq not in ring.held

    def release(self) -> None:
        """Hand the slot back to the producer. Idempotent.

        The arrays stay readable (the mapping lives on) but their contents may change.
        """
        ring = self._lease.ring
        with ring.lock:
            if not ring.open or self._lease.seq not in ring.held:
                return
            ring.check("release")
            ring.release(self._lease.seq)

    def __enter__(self) -> Batch:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()

    def __repr__(self) -> str:
        tensors = " ".join(
            f"{name}:{self._dtypes[name]}[{','.join(map(str, arr.shape))}]"
            for name, arr in self._arrays.items()
        )
        state = "released" if self.released else "held"
        return (
            f"<shmloader.Batch epoch={self.epoch} step={self.step} seq={self.seq} "
            f"rows={self.rows} {tensors} ({state})>"
        )


_B = TypeVar("_B")


class EpochIterator(Iterator[_B]):
    """The batches of one epoch (:meth:`Loader.epoch`, and ``shmloader.torch``'s);
    ``len()`` is how many are left, for progress bars."""

    __slots__ = ("_it", "_len")

    def __init__(self, it: Iterator[_B], length: int) -> None:
        self._it = it
        self._len = length

    def __next__(self) -> _B:
        batch = next(self._it)
        self._len = max(0, self._len - 1)
        return batch

    def __iter__(self) -> EpochIterator[_B]:
        return self

    def __len__(self) -> int:
        return self._len

    def close(self) -> None:
        """Stop early, releasing the batch the iteration holds."""
        close = getattr(self._it, "close", None)
        if close is not None:
            close()


class Loader:
    """A consumer attached to one rank's ring. Create it with :func:`shmloader.attach`.

    Iterate with :meth:`epoch` (one epoch) or over the loader itself (every epoch until the
    end of the stream); while iterating, the previously yielded batch is released when the
    loop advances or ends. Or take batches one at a time with :meth:`next` and release
    them yourself.

    Calls from several threads are serialized; a thread waiting in :meth:`next` lets the
    others in every 0.1 s.
    """

    job: str
    rank: int
    dir: str
    batch_timeout: float | None
    """Default wait for a batch, in seconds (None: no limit); used by iteration and by
    :meth:`next` without a timeout. A dead producer is reported whatever the timeout."""

    def __init__(
        self,
        ring: Ring,
        dir: str,
        info: RingInfo,
        batch_timeout: float | None,
    ) -> None:
        self._ring: Ring | None = ring
        self._info = info
        self._schema: list[_TensorSchema] = []
        self._dtypes: dict[str, str] = {}
        self._span = 0
        self._anchor = 0
        self._desc = _lib.BatchDesc()
        self._position: tuple[int, int] | None = None
        self._base = 0  # global batch at which the position's epoch started
        self._ended = False
        self._stats_t0 = time.monotonic()
        self._stats_c0 = _lib.StatsDesc()
        self.job = ring.job
        self.rank = ring.rank
        self.dir = dir
        self.batch_timeout = batch_timeout

    # -- state -----------------------------------------------------------------------

    def _live(self, op: str) -> Ring:
        ring = self._ring
        if ring is None:
            raise LoaderClosed(f"{op}: the loader is closed", job=self.job, rank=self.rank)
        ring.check(op)
        return ring

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._ring is None

    @property
    def info(self) -> RingInfo:
        """Geometry of the ring (see :class:`RingInfo`)."""
        self._live("info")
        return self._info

    @property
    def held(self) -> int:
        """Number of batches held now."""
        ring = self._live("held")
        with ring.lock:
            ring.collect()
            return len(ring.held)

    @property
    def ended(self) -> bool:
        """True once the end of the stream was seen."""
        return self._ended

    @property
    def position(self) -> tuple[int, int] | None:
        """``(epoch, step)`` of the next batch to deliver; None until the first batch or
        seek (a consumer that attaches mid-stream cannot know it before)."""
        return self._position

    # -- taking batches ----------------------------------------------------------------

    def _take(self, timeout: float | None, op: str) -> object:
        """The next Batch, or _EPOCH_END, or _STREAM_END."""
        _check_timeout("timeout", timeout)
        deadline = None if timeout is None else time.monotonic() + timeout
        ms = _SLICE_MS if timeout is None else min(_SLICE_MS, math.ceil(timeout * 1000))
        desc = self._desc
        shml_next = _lib.lib().shml_next
        while True:
            ring = self._live(op)
            with ring.lock:
                ring.check(op)
                if ring.dropped:
                    ring.collect()
                rc = shml_next(ring.handle, ms, ctypes.byref(desc))
                if rc == _lib.OK:
                    batch = self._wrap(ring, desc)
                    self._position = (batch.epoch, batch.step + 1)
                    self._base = int(desc.epoch_base)
                    return batch
                if rc == _lib.EEPOCH:
                    if self._position is not None:
                        self._position = (self._position[0] + 1, 0)
                    self._base = 0
                    return _EPOCH_END
                if rc == _lib.EEOS:
                    self._ended = True
                    return _STREAM_END
                if rc != _lib.ETIMEOUT or (deadline is not None and time.monotonic() >= deadline):
                    why = _no_batch(ring, timeout) if rc == _lib.ETIMEOUT else None
                    raise ring.error(rc, op, why)
            ms = _slice_ms(deadline)

    def _learn_schema(self, desc: _lib.BatchDesc) -> list[_TensorSchema]:
        """The tensors' names, dtypes, per-row shapes and places in the slot: fixed for the
        ring's life, so decoded once, from the first batch."""
        schema = []
        # The tensor placed first in the slot (the lowest address) anchors every batch.
        ptrs = [desc.tensors[i].data or 0 for i in range(desc.ntensors)]
        self._anchor = ptrs.index(min(ptrs))
        base = ptrs[self._anchor]
        for i in range(desc.ntensors):
            t = desc.tensors[i]
            name = t.name.decode("utf-8")
            if t.dtype not in _lib.DTYPES:
                raise Corrupt(
                    f"next: tensor {name!r} has unknown dtype {t.dtype}",
                    job=self.job,
                    rank=self.rank,
                )
            dtype_name, typestr = _lib.DTYPES[t.dtype]
            row_shape = tuple(int(d) for d in t.shape[1 : t.ndim])
            row_bytes = math.prod(row_shape) * int(typestr[2:])
            offset = (t.data or 0) - base
            schema.append(
                _TensorSchema(name, dtype_name, np.dtype(typestr), row_shape, row_bytes, offset)
            )
        self._dtypes = {t.name: t.dtype_name for t in schema}
        self._span = max(t.offset + self._info.batch_capacity * t.row_bytes for t in schema)
        return schema

    def _slot_addr(self, desc: _lib.BatchDesc) -> int:
        """Where the slot's tensors start, checked: every tensor of a slot sits at a fixed
        offset from the first (the C library places them from the validated schema), and
        the slot's tensor area must lie inside the mapping."""
        schema = self._schema or self._learn_schema(desc)
        self._schema = schema
        addr: int = desc.tensors[self._anchor].data or 0
        lo, hi = self._info.base, self._info.base + self._info.size
        if desc.ntensors != len(schema) or not lo <= addr <= hi - self._span:
            raise Corrupt(
                f"next: slot at {addr:#x} ({desc.ntensors} tensors) does not match the "
                f"ring's {len(schema)} tensors inside the mapping",
                job=self.job,
                rank=self.rank,
            )
        return addr

    def _wrap(self, ring: Ring, desc: _lib.BatchDesc) -> Batch:
        seq = desc.seq
        ring.held[seq] = _lib.BatchDesc.from_buffer_copy(desc)
        try:
            base = self._slot_addr(desc)
            schema = self._schema
            rows = desc.rows
            # One view of the slot's tensor area, checked against the mapping by
            # _slot_addr, and each array a window of it.
            lease = Lease(ring, seq)
            slot = np.asarray(View(lease, base, (self._span,), "|u1"))
            arrays: dict[str, NDArray[Any]] = {
                t.name: np.ndarray((rows, *t.row_shape), t.dtype, slot, t.offset) for t in schema
            }
        except BaseException:
            ring.release(seq)
            raise
        base = int(desc.epoch_base)
        return Batch(lease, seq, desc.epoch, desc.step, rows, arrays, self._dtypes, base)

    def next(self, timeout: float | None = None) -> Batch | None:
        """The next batch, or None at the end of an epoch (once per epoch) and at the end
        of the stream (on every call from then on; :attr:`ended` tells which).

        Waits up to ``timeout`` seconds (None: :attr:`batch_timeout`) and raises
        :class:`~shmloader.Timeout` past it, :class:`~shmloader.ProducerGone` if the
        producer dies. The batch stays held until released: :meth:`Batch.release`,
        :meth:`release`, or dropping every reference to it.
        """
        got = self._take(self.batch_timeout if timeout is None else timeout, "next")
        return got if isinstance(got, Batch) else None

    def _iterate(self, whole_stream: bool) -> Iterator[Batch]:
        previous: Batch | None = None
        try:
            while True:
                if previous is not None:
                    previous.release()
                    previous = None
                got = self._take(self.batch_timeout, "next")
                if got is _STREAM_END:
                    return
                if got is _EPOCH_END:
                    if whole_stream:
                        continue
                    return
                assert isinstance(got, Batch)
                previous = got
                yield got
        finally:
            if previous is not None and not self.closed:
                previous.release()

    def epoch(self) -> EpochIterator[Batch]:
        """Iterate over the rest of the current epoch; stops at its end (or at the end of
        the stream). Call again for the next epoch. Each batch is released when the loop
        advances or ends: copy what you need to keep.

        ``len()`` of the iterator is the number of batches left in the epoch (from the
        loader's position when it is known, else :attr:`RingInfo.steps_per_epoch`), so a
        progress bar shows a total: ``tqdm(loader.epoch())``."""
        left = self._info.steps_per_epoch
        if self._position is not None and self._base == 0:
            left = max(0, left - self._position[1])
        return EpochIterator(self._iterate(whole_stream=False), left)

    def __len__(self) -> int:
        """Batches this rank receives per epoch (:attr:`RingInfo.steps_per_epoch`). Iterating
        the loader itself runs every epoch: give a progress bar ``loader.epoch()``, whose
        ``len()`` is what is left of the current one."""
        return self._info.steps_per_epoch

    def stats(self, reset: bool = False) -> LoaderStats:
        """Batches and rows taken, and the time this trainer waited for them, since
        attach (or the last ``stats(reset=True)``). ``.stall`` is the data stall: the
        share of the time the trainer spent waiting for data. ``reset=True`` starts a
        new period after reading this one (e.g. once per epoch)."""
        ring = self._live("stats")
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

    def __iter__(self) -> Iterator[Batch]:
        """Iterate over every batch of every epoch until the end of the stream."""
        return self._iterate(whole_stream=True)

    # -- releasing, seeking, state -----------------------------------------------------

    def release(self) -> None:
        """Release every held batch."""
        ring = self._live("release")
        with ring.lock:
            ring.release_all()
            ring.dropped.clear()

    def seek(self, epoch: int, step: int, base: int = 0) -> None:
        """Reposition this rank's stream: the next batch delivered is ``(epoch, step)``,
        in an epoch that starts at global batch ``base`` (0, its start, unless it
        continues a position saved under another world size: :meth:`load_state_dict`
        works that out).

        Every held batch is released first (a held slot could keep the producer from
        publishing the answer); views of them then show whatever the producer writes.
        """
        e, s, b = _index(epoch, 2**64), _index(step, 2**64), _index(base, 2**64)
        if e is None or s is None or b is None:
            raise InvalidArgument(
                "seek: epoch, step and base must be integers >= 0, not "
                f"{epoch!r}, {step!r}, {base!r}",
                job=self.job,
                rank=self.rank,
            )
        epoch, step, base = e, s, b
        ring = self._live("seek")
        with ring.lock:
            self._check_position(ring, "seek", epoch, step, base)
            ring.release_all()
            ring.dropped.clear()
            rc = _lib.lib().shml_seek_base(ring.handle, epoch, step, base)
            if rc != _lib.OK:
                raise ring.error(rc, f"seek({epoch}, {step}, base={base})")
        self._position = (epoch, step)
        self._base = base
        self._ended = False

    def _check_position(self, ring: Ring, op: str, epoch: int, step: int, base: int) -> None:
        """OutOfRange, naming the valid range, for a position beyond the run
        (shml_seek_check); under ring.lock."""
        why = ctypes.create_string_buffer(_lib.WHY_BYTES)
        rc = _lib.lib().shml_seek_check(ring.handle, epoch, step, base, why, len(why))
        if rc == _lib.ERANGE:
            raise OutOfRange(
                f"{op}: {why.value.decode('utf-8', 'replace')}",
                code=rc,
                job=self.job,
                rank=self.rank,
            )
        if rc != _lib.OK:
            raise ring.error(rc, op)

    def state_dict(self) -> dict[str, Any]:
        """Where this consumer stands: ``{"job", "rank", "epoch", "step", "world",
        "base", "config_hash", "plan_version"}``, ``step`` being the next step to deliver
        in an epoch started at global batch ``base`` (0 unless the epoch was resumed
        under another world size) by ``world`` trainers. Every rank of a data-parallel
        job is at the same step, so the world has consumed the epoch's global batches
        ``[base, base + step * world)``. :meth:`load_state_dict` resumes there with the
        same bytes, under this world size or another (and so does ``shmloader serve
        --resume FILE`` with the state saved as JSON)."""
        self._live("state_dict")
        if self._position is None:
            raise ShmloaderError(
                "state_dict: position unknown until the first batch or a seek",
                job=self.job,
                rank=self.rank,
            )
        epoch, step = self._position
        return {
            "job": self.job,
            "rank": self.rank,
            "epoch": epoch,
            "step": step,
            "world": self._info.world,
            "base": self._base,
            "config_hash": self._info.config_hash,
            "plan_version": self._info.plan_version,
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Seek to a position saved by :meth:`state_dict`.

        The state may come from any rank of the job (every rank is at the same step
        when a data-parallel job checkpoints, and often only rank 0 saves), and from a
        job with another number of trainers (``world``): the world consumed the global
        batches ``[base, base + step * world)`` of the epoch, and this rank continues
        with the first one after them that it serves, so the job as a whole receives
        every later global batch exactly once, byte for byte. Raises
        :class:`~shmloader.InvalidArgument` if it was saved for a producer with another
        config or dataset, or under another plan version. A state without ``world`` is
        taken as saved under this job's.
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
        ring = self._live("load_state_dict")
        out = _lib.StateDesc()
        why = ctypes.create_string_buffer(_lib.WHY_BYTES)
        with ring.lock:
            rc = _lib.lib().shml_resume(
                ring.handle, ctypes.byref(saved), ctypes.byref(out), why, len(why)
            )
        text = f"load_state_dict: {why.value.decode('utf-8', 'replace')}"
        if rc == _lib.ERANGE:
            raise OutOfRange(text, code=rc, job=self.job, rank=self.rank)
        if rc == _lib.EINVAL:
            raise InvalidArgument(text, code=rc, job=self.job, rank=self.rank)
        if rc != _lib.OK:
            raise ring.error(rc, "load_state_dict")
        self.seek(out.epoch, out.step, out.base)

    # -- closing -----------------------------------------------------------------------

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
        if self._ring is not None and self._ring.open and self._ring.pid == os.getpid():
            self.read_end()
            if done:
                with self._ring.lock:
                    _lib.lib().shml_done(self._ring.handle)
        ring, self._ring = self._ring, None
        if ring is None:
            return
        with ring.lock:
            try:
                if ring.open and ring.pid == os.getpid():
                    ring.release_all()
            finally:
                ring.open = False
                ring.dropped.clear()

    def read_end(self, timeout: float = 1.0) -> bool:
        """Take the end-of-stream marker that follows the run's last epoch, if the loader
        has just finished that epoch (``loader.epoch()`` stops at the epoch's end): serve
        finishes once every rank has read its stream to the end or detached, and a loader
        kept open, or closed while a batch's views live on, does neither. :meth:`close`
        and ``Server.wait`` call it. Returns whether the stream has been read to its end."""
        if self._ended:
            return True
        ring, info = self._ring, self._info
        if ring is None or not info.epochs or self._position != (info.epochs, 0):
            return False
        with contextlib.suppress(ShmloaderError):
            got = self._take(timeout, "read_end")
            if isinstance(got, Batch):  # a seek moved the stream on: not the end after all
                got.release()
        return self._ended

    def __enter__(self) -> Loader:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        head = f"<shmloader.Loader job={self.job!r} rank={self.rank} dir={self.dir!r}"
        if self._ring is None:
            return head + " closed>"
        info = self._info
        where = "end of stream" if self._ended else f"next={self._position}"
        return (
            f"{head} ranks={info.ranks} depth={info.slot_count} "
            f"rows<={info.batch_capacity} producer_pid={info.producer_pid} "
            f"held={len(self._ring.held)} {where}>"
        )


def _no_batch(ring: Ring, timeout: float | None) -> str:
    """What a Timeout of next() says before the producer's reason, or instead of it."""
    text = f"no batch within {timeout:g} s"
    if not ring.stall_reason():
        text += (
            "; the producer is alive but gave no reason: it may be stopped (SIGSTOP, a "
            "debugger) or starved of CPU"
        )
    return text


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
    if not isinstance(job, str) or not _JOB_NAME.fullmatch(job):
        raise InvalidArgument(
            f"attach: job must be 1-40 characters of [A-Za-z0-9_.-], not starting with "
            f"'.' or '-', not {job!r}"
        )
    if rank is None:
        rank = default_rank()
    index = _index(rank, 2**31)
    if index is None:
        raise InvalidArgument(f"attach: rank must be an int >= 0, not {rank!r}", job=job)
    rank = index
    _check_timeout("timeout", timeout)
    _check_timeout("batch_timeout", batch_timeout)
    lib = _lib.lib()
    where = _default_dir(dir)
    if not os.path.isdir(where):
        # A producer creates its segments in an existing directory: waiting cannot help.
        raise InvalidArgument(
            f"attach: segment directory {where!r} does not exist (the producer's --dir, "
            f"$SHMLOADER_SHM_DIR, or /dev/shm)",
            job=job,
            rank=rank,
        )
    c_dir = os.fsencode(dir) if dir is not None else None
    deadline = None if timeout is None else time.monotonic() + timeout
    handle = ctypes.c_void_p()
    while True:
        rc = lib.shml_attach_dir(
            c_dir, job.encode("utf-8"), rank, _slice_ms(deadline), ctypes.byref(handle)
        )
        if rc == _lib.OK:
            break
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
            raise error_for(
                rc,
                text,
                op=f"attach in {where}",
                job=job,
                rank=rank,
            )
    ring = Ring(int(handle.value or 0), job, rank)
    c_info = _lib.InfoDesc()
    rc = lib.shml_info_get(ring.handle, ctypes.byref(c_info))
    if rc != _lib.OK:
        raise ring.error(rc, "attach (info)")
    info = RingInfo(
        base=int(c_info.base or 0),
        size=int(c_info.size),
        slot_count=int(c_info.slot_count),
        slot_size=int(c_info.slot_size),
        batch_capacity=int(c_info.batch_capacity),
        rank=int(c_info.rank),
        ranks=int(c_info.ranks),
        ntensors=int(c_info.ntensors),
        producer_pid=int(c_info.producer_pid),
        config_hash=int(c_info.config_hash),
        nodes=int(c_info.nodes),
        node_rank=int(c_info.node_rank),
        elastic_limit=int(c_info.elastic_limit),
        steps_per_epoch=int(c_info.steps_per_epoch),
        epochs=int(c_info.epochs),
        global_batches=int(c_info.global_batches),
        plan_version=int(c_info.plan_version),
    )
    return Loader(ring, where, info, batch_timeout)
