"""PyTorch views of shmloader batches: dicts of torch tensors over shared memory.

::

    import shmloader.torch as slt

    with slt.attach(job="train") as loader:              # rank: $LOCAL_RANK under torchrun
        for batch in loader.epoch():                     # a dict of CPU tensors, no copy
            loss = model(batch["features"].cuda(non_blocking=True))

    # pinned ring, copies to the GPU on a side stream; the slot is handed back only once
    # its copy has finished
    with slt.attach(job="train", device="cuda") as loader:
        for batch in loader.epoch():                     # a dict of CUDA tensors
            ...

    # as the dataset of a DataLoader (batch_size=None: batches come whole from serve)
    dl = torch.utils.data.DataLoader(slt.Dataset("train"), batch_size=None)

What a yielded tensor is:

* **CPU** (``device=None``): a view of the slot, like the numpy arrays of
  :class:`shmloader.Batch`. It is valid until the iteration moves on (or
  :meth:`TorchBatch.release`); after that it still points at the slot, which the producer
  refills. ``.clone()`` what you keep. bfloat16 tensors are ``torch.bfloat16``.
* **pin=True**: the whole ring is registered with CUDA once, at attach
  (``cudaHostRegister``; unregistered just before the ring is unmapped), so
  ``tensor.cuda(non_blocking=True)`` is a DMA straight from shared memory. Such a copy
  runs later, when its stream gets to it, so a pinned batch's slot goes back only once
  an event recorded on the current CUDA stream when the batch is released (the
  iteration moving on, :meth:`TorchBatch.release`, or dropping it) has completed: issue
  the copies on the current stream (the default). Call ``torch.cuda.set_device`` before
  attaching.
* **device="cuda"** (implies ``pin=True``): the batch is copied to the GPU on a side
  stream, the current stream waits for the copy (an event), and the slot is released
  only once that event has completed, never earlier. The tensors are ordinary CUDA
  tensors owned by the caller.

Every tensor exports DLPack (``__dlpack__``), so JAX, CuPy and others take it without a
copy (``jax.dlpack.from_dlpack(tensor)``); so do the numpy arrays of a plain
:class:`shmloader.Batch`.

``shmloader.torch`` needs PyTorch (``pip install torch``); ``import shmloader`` does not.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable, Iterator, Mapping
from typing import Any

try:
    import torch
    import torch.utils.data
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "shmloader.torch needs PyTorch: pip install torch (or 'shmloader[torch]')"
    ) from exc

from ._attach import default_rank, open_stream
from ._batch import Batch
from ._cuda import AfterCuda, ToDevice, cuda_check, device_of, pin_ring
from ._stream import Stream
from ._torch import torch_views
from .errors import CudaUnavailable, InvalidArgument
from .loader import Loader, LoaderBase

__all__ = ["CudaUnavailable", "Dataset", "TorchBatch", "TorchLoader", "attach"]


class TorchBatch(dict[str, "torch.Tensor"]):
    """One batch as ``{name: torch.Tensor}``, with its position (``epoch``, ``step``,
    ``rows``, ``seq``, ``base``, as on :class:`shmloader.Batch`).

    CPU tensors view the slot while the batch is held (see the module docstring);
    CUDA tensors (``device=...``) are the caller's copies.
    """

    __slots__ = ("_release", "epoch", "step", "rows", "seq", "base", "__weakref__")

    def __init__(
        self,
        tensors: Mapping[str, torch.Tensor],
        batch: Batch,
        release: Callable[[], None] | None,
    ) -> None:
        super().__init__(tensors)
        self._release = release
        self.epoch, self.step, self.rows = batch.epoch, batch.step, batch.rows
        self.seq, self.base = batch.seq, batch.base

    def release(self) -> None:
        """Hand the slot back (CPU views; idempotent). With ``pin=True`` it goes back once
        the work queued so far on the current CUDA stream (the copies of this batch) has
        completed. A no-op for a CUDA batch, whose slot goes back by itself once its copy
        has finished."""
        release, self._release = self._release, None
        if release is not None:
            release()

    def __enter__(self) -> TorchBatch:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()

    def __repr__(self) -> str:
        tensors = " ".join(
            f"{k}:{str(v.dtype).removeprefix('torch.')}[{','.join(map(str, v.shape))}]@{v.device}"
            for k, v in self.items()
        )
        return f"<shmloader.torch.TorchBatch epoch={self.epoch} step={self.step} {tensors}>"


class TorchLoader(LoaderBase[TorchBatch]):
    """A loader that yields :class:`TorchBatch` dicts of torch tensors. Create it with
    :func:`shmloader.torch.attach`.

    It is a loader like :class:`shmloader.Loader` (both derive from
    :class:`shmloader.loader.LoaderBase`), with its positions and checkpoints
    (:meth:`seek`, :meth:`state_dict`, :meth:`load_state_dict`, :meth:`stats`, ``len()``,
    :attr:`info`); ``.loader`` is a numpy :class:`shmloader.Loader` over the same stream,
    sharing its position.
    """

    def __init__(self, stream: Stream, *, pin: bool, device: torch.device | None) -> None:
        super().__init__(stream)
        self.loader = Loader(stream)
        self.device = device
        self.pinned = False
        ring = stream.live("attach")
        # Leave the producer at least two slots to fill while copies are in flight.
        limit = max(1, stream.info.slot_count - 2)
        self._cuda: AfterCuda | None = None
        self._to_device: ToDevice | None = None
        if pin:
            pin_ring(stream)
            self.pinned = True
            self._cuda = AfterCuda(limit)
        if device is not None:
            self._cuda = self._to_device = ToDevice(device, limit)
        if self._cuda is not None:
            # Run before cudaHostUnregister (hooks run last added first) and the unmap:
            # no DMA may still read the ring then. A weak reference: the pending batches
            # hold the ring, so a strong one would keep it mapped for ever.
            cuda_ref = weakref.ref(self._cuda)

            def wait_for_copies() -> None:
                cuda = cuda_ref()
                if cuda is not None:
                    cuda.wait_all()

            ring.before_detach.append(wait_for_copies)
        # Pinned CPU batches handed out by next(): the slot goes back after the CUDA
        # work queued when the TorchBatch is released or dropped, never at the drop.
        self._handed: dict[int, tuple[weakref.ref[TorchBatch], Batch]] = {}

    def _release_after_cuda(self, batch: Batch) -> None:
        """Release a pinned CPU batch once the work queued on the current stream (its
        copies, if the trainer made any) has completed."""
        self._handed.pop(batch.seq, None)
        cuda = self._cuda
        assert cuda is not None
        cuda.after(batch, torch.cuda.current_stream())

    def _reap(self) -> None:
        cuda = self._cuda
        if cuda is None:
            return
        for ref, batch in list(self._handed.values()):
            if ref() is None:  # dropped without release()
                self._release_after_cuda(batch)
        cuda.reap(cuda.limit - 1)

    def _settle(self) -> None:
        """Wait for every copy in flight and hand its slot back."""
        if self._cuda is not None and not self.closed:
            for _, batch in list(self._handed.values()):
                self._release_after_cuda(batch)
            self._cuda.drain()

    def _deliver(self, batch: Batch) -> TorchBatch:
        """A CPU batch is held until released (:meth:`TorchBatch.release`, or when it and
        its tensors are gone); a CUDA batch's slot goes back once copied."""
        views = torch_views(batch)
        if self._to_device is not None:
            return TorchBatch(self._to_device.copy(batch, views), batch, None)
        if self._cuda is not None:
            out = TorchBatch(views, batch, lambda: self._release_after_cuda(batch))
            self._handed[batch.seq] = (weakref.ref(out), batch)
            return out
        return TorchBatch(views, batch, batch.release)

    def __repr__(self) -> str:
        where = f" device={self.device}" if self.device is not None else ""
        pinned = " pinned" if self.pinned else ""
        return f"<shmloader.torch.TorchLoader{where}{pinned} {self.loader!r}>"


def attach(
    job: str,
    rank: int | None = None,
    *,
    pin: bool | None = None,
    device: str | torch.device | int | None = None,
    timeout: float | None = 30.0,
    dir: str | os.PathLike[str] | None = None,
    batch_timeout: float | None = 300.0,
) -> TorchLoader:
    """Attach to ring ``rank`` of ``job`` (default ``$LOCAL_RANK``, else 0), as
    :func:`shmloader.attach`, yielding torch tensors.

    ``pin``: register the ring with CUDA (default: on when ``device`` is a CUDA device).
    ``device``: ``None`` or ``"cpu"`` for views of the slot; ``"cuda"``/``"cuda:N"`` to
    copy each batch there. Without CUDA both raise :class:`CudaUnavailable`.
    """
    dev = device_of(device)
    want_pin = dev is not None if pin is None else bool(pin)
    if want_pin:
        cuda_check("pin=True")
    stream = open_stream(job, rank, timeout=timeout, dir=dir, batch_timeout=batch_timeout)
    try:
        return TorchLoader(stream, pin=want_pin, device=dev)
    except BaseException:
        stream.close(done=False)
        raise


class Dataset(torch.utils.data.IterableDataset[TorchBatch]):  # type: ignore[misc]
    """shmloader as the dataset of ``torch.utils.data.DataLoader(dataset, batch_size=None)``.

    Each iteration yields one epoch (a ``for`` over the DataLoader is an epoch);
    ``len()`` is the rank's steps per epoch. The producer already decodes in parallel
    and the batches are views of shared memory, so use ``num_workers=0`` (a worker
    process would copy every batch through another queue; the dataset refuses it) and
    leave the DataLoader's ``pin_memory`` off (use ``pin=True`` here: the ring itself is
    pinned). It attaches lazily, in the process that first iterates it or asks its
    length; ``rank`` defaults to ``$LOCAL_RANK``, so under torchrun and DDP each process
    reads its own GPU's ring.

    :meth:`set_epoch` mirrors ``DistributedSampler.set_epoch``: it moves to the start of
    that epoch unless the loader's position is already in it (after a resume with
    :meth:`load_state_dict`) or at the end of the one before. Before the first batch the
    position is unknown and it seeks: with ``serve --resume``, resume through
    :meth:`load_state_dict` instead, or do not call it for the resumed epoch.
    """

    def __init__(
        self,
        job: str,
        rank: int | None = None,
        *,
        pin: bool | None = None,
        device: str | torch.device | int | None = None,
        timeout: float | None = 30.0,
        dir: str | os.PathLike[str] | None = None,
        batch_timeout: float | None = 300.0,
    ) -> None:
        super().__init__()
        self.job = job
        self.rank = default_rank() if rank is None else rank
        self._kwargs: dict[str, Any] = dict(
            pin=pin, device=device, timeout=timeout, dir=dir, batch_timeout=batch_timeout
        )
        self._loader: TorchLoader | None = None
        self._pid = os.getpid()

    @property
    def loader(self) -> TorchLoader:
        """The attached loader (attaching now if need be)."""
        if torch.utils.data.get_worker_info() is not None:
            raise InvalidArgument(
                "shmloader.torch.Dataset: use DataLoader(..., num_workers=0): serve decodes "
                "in parallel already, and a worker would copy every batch; one process "
                "reads a rank's ring",
                job=self.job,
                rank=self.rank,
            )
        if self._loader is None or self._pid != os.getpid():
            self._loader = attach(self.job, self.rank, **self._kwargs)
            self._pid = os.getpid()
        return self._loader

    def __iter__(self) -> Iterator[TorchBatch]:
        return self.loader.epoch()

    def __len__(self) -> int:
        return len(self.loader)

    def set_epoch(self, epoch: int) -> None:
        """Make the next iteration epoch ``epoch``: nothing to do when the loader is in it
        already (after :meth:`load_state_dict`); at the end of the epoch before, its end
        is read; anywhere else it seeks to the epoch's start."""
        loader = self.loader
        pos = loader.position
        if pos is not None and pos[0] == epoch:
            return
        if pos == (epoch - 1, len(loader)):
            # The previous epoch's last batch was read but not its end: read it now.
            batch = loader.loader.next()
            if batch is None and loader.position == (epoch, 0):
                return
            if batch is not None:
                batch.release()
        loader.seek(epoch, 0)

    def state_dict(self) -> dict[str, Any]:
        """The loader's position, to save in a checkpoint (:meth:`shmloader.Loader.state_dict`)."""
        return self.loader.state_dict()

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Resume at a saved position (:meth:`shmloader.Loader.load_state_dict`)."""
        self.loader.load_state_dict(state)

    def close(self, done: bool = False) -> None:
        """Close the loader (a later iteration attaches again). ``done=True`` tells the
        producer the job is done: serve stops at once and exits 0
        (:meth:`shmloader.Loader.close`); call it at the end of training."""
        if self._loader is not None:
            self._loader.close(done=done)
            self._loader = None

    def __enter__(self) -> Dataset:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        """The end of a ``with`` block: training is over if it ended without an
        exception (``close(done=True)``: serve stops once no trainer reads); after an exception the
        loader is only closed, so that a restarted trainer can resume."""
        self.close(done=exc_type is None)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_loader"] = None  # a loader never crosses processes
        return state
