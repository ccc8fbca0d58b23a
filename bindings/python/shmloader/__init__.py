"""shmloader: batches from a host-local producer, as numpy views of shared memory.

One ``shmloader serve`` process per host fills one ring of slots per local rank (GPU) in
POSIX shared memory. A trainer attaches to its rank's ring and gets each batch as numpy
arrays that view the slot in place (no copy)::

    import shmloader

    with shmloader.attach(job="train", rank=local_rank) as loader:
        for batch in loader.epoch():
            x = torch.from_numpy(batch["features"])   # still no copy
            ...

Lifetimes. A batch is held from the moment it is taken until it is released: by
``batch.release()``, ``loader.release()``, ``loader.close()``, by the iteration moving on
(``for batch in loader.epoch()`` releases the previous batch when the loop advances, breaks
or ends), or when nothing refers to the batch or its arrays any more. While held, its arrays
are the batch and may be written to.

* An array that outlives its batch's release never crashes the process: it keeps pointing
  at the slot, which the producer refills with later batches. Copy (``np.array(x)``,
  ``tensor.clone()``) to keep data past the release.
* ``loader.close()`` releases the held batches and closes the loader (using it afterwards
  raises :class:`LoaderClosed`), but never unmaps memory under live arrays: the ring stays
  mapped, and the rank's consumer claim stays held (a new ``attach`` to it gets
  :class:`Busy`), until the loader and the last array are gone.
* bfloat16 tensors are exposed as ``uint16`` arrays of the raw bits (numpy has no bfloat16);
  :func:`torch_views` returns them as ``torch.bfloat16``. float16 is native.
* After ``fork`` a loader belongs to the parent; the child must attach on its own.
"""

from __future__ import annotations

from ._torch import torch_views
from .errors import (
    BinaryNotFound,
    Busy,
    Corrupt,
    InvalidArgument,
    LibraryNotFound,
    LoaderClosed,
    NoSuchRank,
    OutOfMemory,
    OutOfRange,
    PermissionDenied,
    ProducerGone,
    SeekUnanswered,
    ShmloaderError,
    SystemCallError,
    Timeout,
    TooManyHeld,
    VersionMismatch,
)
from .launcher import ServeFailed, Server, serve
from .loader import Batch, EpochIterator, Loader, LoaderStats, RingInfo, attach

__version__ = "0.1.0"

__all__ = [
    "Batch",
    "BinaryNotFound",
    "Busy",
    "Corrupt",
    "InvalidArgument",
    "LibraryNotFound",
    "Loader",
    "LoaderStats",
    "EpochIterator",
    "LoaderClosed",
    "NoSuchRank",
    "OutOfRange",
    "OutOfMemory",
    "PermissionDenied",
    "ProducerGone",
    "RingInfo",
    "ServeFailed",
    "Server",
    "SeekUnanswered",
    "ShmloaderError",
    "SystemCallError",
    "Timeout",
    "TooManyHeld",
    "VersionMismatch",
    "attach",
    "serve",
    "torch_views",
    "__version__",
]
