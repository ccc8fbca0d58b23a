"""Batch (one held slot, as numpy views) and Slots, which turns a slot the C library hands
out into a Batch.

Lifetimes are kept by the objects in ``_ring``: see its docstring.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from . import _lib
from ._ring import Lease, Ring, View
from ._values import RingInfo
from .errors import Corrupt


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


class _Tensor(NamedTuple):
    name: str
    dtype_name: str
    dtype: np.dtype[Any]
    row_shape: tuple[int, ...]
    row_bytes: int
    offset: int  # from the slot's first tensor


class Slots:
    """Where a ring's slots hold their tensors: the names, dtypes, per-row shapes and
    places, fixed for the ring's life and so decoded once, from the first batch; every
    batch is checked against them and against the mapping before numpy sees it."""

    def __init__(self, info: RingInfo, job: str, rank: int) -> None:
        self._info = info
        self._job = job
        self._rank = rank
        self._schema: list[_Tensor] = []
        self._dtypes: dict[str, str] = {}
        self._span = 0
        self._anchor = 0

    def _learn(self, desc: _lib.BatchDesc) -> list[_Tensor]:
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
                    job=self._job,
                    rank=self._rank,
                )
            dtype_name, typestr = _lib.DTYPES[t.dtype]
            row_shape = tuple(int(d) for d in t.shape[1 : t.ndim])
            row_bytes = math.prod(row_shape) * int(typestr[2:])
            offset = (t.data or 0) - base
            schema.append(
                _Tensor(name, dtype_name, np.dtype(typestr), row_shape, row_bytes, offset)
            )
        self._dtypes = {t.name: t.dtype_name for t in schema}
        self._span = max(t.offset + self._info.batch_capacity * t.row_bytes for t in schema)
        return schema

    def _addr(self, desc: _lib.BatchDesc) -> int:
        """Where the slot's tensors start, checked: every tensor of a slot sits at a fixed
        offset from the first (the C library places them from the validated schema), and
        the slot's tensor area must lie inside the mapping."""
        self._schema = self._schema or self._learn(desc)
        addr: int = desc.tensors[self._anchor].data or 0
        lo, hi = self._info.base, self._info.base + self._info.size
        if desc.ntensors != len(self._schema) or not lo <= addr <= hi - self._span:
            raise Corrupt(
                f"next: slot at {addr:#x} ({desc.ntensors} tensors) does not match the "
                f"ring's {len(self._schema)} tensors inside the mapping",
                job=self._job,
                rank=self._rank,
            )
        return addr

    def wrap(self, ring: Ring, desc: _lib.BatchDesc) -> Batch:
        """The Batch of a slot shml_next just handed out; held from now on."""
        seq = desc.seq
        ring.held[seq] = _lib.BatchDesc.from_buffer_copy(desc)
        try:
            addr = self._addr(desc)
            rows = desc.rows
            # One view of the slot's tensor area, checked against the mapping by _addr,
            # and each array a window of it.
            lease = Lease(ring, seq)
            slot = np.asarray(View(lease, addr, (self._span,), "|u1"))
            arrays: dict[str, NDArray[Any]] = {
                t.name: np.ndarray((rows, *t.row_shape), t.dtype, slot, t.offset)
                for t in self._schema
            }
        except BaseException:
            ring.release(seq)
            raise
        base = int(desc.epoch_base)
        return Batch(lease, seq, desc.epoch, desc.step, rows, arrays, self._dtypes, base)
