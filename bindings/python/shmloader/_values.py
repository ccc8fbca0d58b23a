"""What a loader reports besides batches: the ring's geometry and run (RingInfo), the
trainer's data stall (LoaderStats), and the iterator of one epoch (EpochIterator)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TypeVar

from . import _lib


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

    @classmethod
    def from_c(cls, c: _lib.InfoDesc) -> RingInfo:
        """The fields of a filled ``shml_info``."""
        return cls(
            base=int(c.base or 0),
            size=int(c.size),
            slot_count=int(c.slot_count),
            slot_size=int(c.slot_size),
            batch_capacity=int(c.batch_capacity),
            rank=int(c.rank),
            ranks=int(c.ranks),
            ntensors=int(c.ntensors),
            producer_pid=int(c.producer_pid),
            config_hash=int(c.config_hash),
            nodes=int(c.nodes),
            node_rank=int(c.node_rank),
            elastic_limit=int(c.elastic_limit),
            steps_per_epoch=int(c.steps_per_epoch),
            epochs=int(c.epochs),
            global_batches=int(c.global_batches),
            plan_version=int(c.plan_version),
        )


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
