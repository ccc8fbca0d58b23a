"""torch views of a batch, for code that uses PyTorch (an optional dependency): the one
place they are made (``shmloader.torch_views`` and every ``shmloader.torch`` batch)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._batch import Batch

if TYPE_CHECKING:
    import torch


def torch_views(batch: Batch) -> dict[str, torch.Tensor]:
    """Each tensor of ``batch`` as a CPU ``torch.Tensor`` sharing its memory (no copy).

    Like the numpy arrays they wrap, these are views of the shared-memory slot: valid while
    the batch is held, and never a crash after that, but then refilled by the producer.
    bfloat16 tensors come out as ``torch.bfloat16``. ``torch.from_numpy(batch[name])``
    gives the same view for every other dtype.
    """
    try:
        import torch
    except ImportError as exc:
        raise ImportError(
            "shmloader.torch_views needs PyTorch: pip install 'shmloader[torch]'"
        ) from exc
    dtypes = batch.dtypes
    views: dict[str, torch.Tensor] = {}
    for name, array in batch.items():
        # Each tensor's storage keeps its array, and so the batch's lease, alive, exactly
        # as the arrays do: a tensor (or a view of it) that outlives the rest keeps the
        # slot held.
        tensor = torch.from_numpy(array)
        if dtypes[name] == "bfloat16":
            tensor = tensor.view(torch.bfloat16)
        views[name] = tensor
    return views
