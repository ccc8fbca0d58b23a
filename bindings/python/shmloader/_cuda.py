"""CUDA for ``shmloader.torch``: pinning a ring, and handing slots back only once the CUDA
work that reads them has completed. Imported only with torch."""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Mapping
from typing import Any

import torch

from ._batch import Batch
from ._stream import Stream
from .errors import CudaUnavailable, InvalidArgument, ShmloaderError

# cudaHostRegisterPortable: the pinning counts for every CUDA context of the process.
_HOST_REGISTER_PORTABLE = 1


def cuda_check(what: str) -> None:
    if not torch.cuda.is_available():
        built = torch.version.cuda
        why = (
            "this torch was built without CUDA"
            if built is None
            else f"torch (CUDA {built}) sees no GPU (driver, CUDA_VISIBLE_DEVICES)"
        )
        raise CudaUnavailable(
            f"{what} needs CUDA, and {why}; use device=None and pin=False on a CPU-only host"
        )


def _cuda_rc(result: object) -> int:
    """A cudaError_t from torch's cudart bindings as an int (0: success)."""
    value: Any = getattr(result, "value", result)
    return int(value)


def pin_ring(stream: Stream) -> None:
    """Register the stream's whole mapping with CUDA once; unregister before unmap."""
    cuda_check("pin=True")
    info = stream.info
    ring = stream.live("pin")
    cudart = torch.cuda.cudart()
    rc = _cuda_rc(cudart.cudaHostRegister(info.base, info.size, _HOST_REGISTER_PORTABLE))
    if rc != 0:
        raise ShmloaderError(
            f"pin: cudaHostRegister of the ring ({info.size} bytes at {info.base:#x}) failed "
            f"with CUDA error {rc}; is the memlock limit (ulimit -l) high enough?",
            job=stream.job,
            rank=stream.rank,
        )
    base = info.base

    def unregister() -> None:
        _cuda_rc(cudart.cudaHostUnregister(base))

    ring.before_detach.append(unregister)


class AfterCuda:
    """Hands slots back once the CUDA work that reads them has completed: a batch goes
    into ``pending`` with an event recorded after that work, and is released once the
    event has completed (``reap``), in order, never earlier."""

    def __init__(self, limit: int) -> None:
        self.pending: deque[tuple[Batch, Any]] = deque()
        self.limit = limit  # most batches in flight: the producer keeps slots to fill

    def after(self, batch: Batch, stream: Any) -> None:
        """Release batch once what is queued on stream now has completed."""
        event = torch.cuda.Event()
        event.record(stream)
        self.pending.append((batch, event))

    def reap(self, keep: int) -> None:
        """Release every batch whose event has completed; then wait for the oldest until
        at most ``keep`` are in flight."""
        while self.pending and self.pending[0][1].query():
            self.pending.popleft()[0].release()
        while len(self.pending) > keep:
            batch, event = self.pending.popleft()
            event.synchronize()
            batch.release()

    def drain(self) -> None:
        self.reap(0)

    def wait_all(self) -> None:
        """Wait for every pending event (before the ring is unmapped), releasing nothing."""
        for _, event in list(self.pending):
            event.synchronize()

    def __del__(self) -> None:
        # Dropped with copies in flight (a loader never closed): they finish before the
        # pending batches go, and with them the last references to the ring, whose
        # unmapping would follow.
        with contextlib.suppress(Exception):  # at interpreter shutdown CUDA may be gone
            self.wait_all()


class ToDevice(AfterCuda):
    """Copies batches to one CUDA device on a side stream; each slot goes back once its
    copy's event has completed."""

    def __init__(self, device: torch.device, limit: int) -> None:
        super().__init__(limit)
        self.device = device
        self.stream = torch.cuda.Stream(device=device)

    def copy(self, batch: Batch, views: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        main = torch.cuda.current_stream(self.device)
        out: dict[str, torch.Tensor] = {}
        try:
            with torch.cuda.stream(self.stream):
                for name, view in views.items():
                    out[name] = view.to(self.device, non_blocking=True)
        finally:
            # Also when a copy failed (out of memory, say): the ones already queued still
            # read the slot, so it goes back only after them.
            self.after(batch, self.stream)
        main.wait_event(self.pending[-1][1])
        for tensor in out.values():
            tensor.record_stream(main)  # allocated on the side stream, used on main
        return out


def device_of(device: str | torch.device | int | None) -> torch.device | None:
    if device is None:
        return None
    dev = torch.device(device)
    if dev.type == "cpu":
        return None
    if dev.type != "cuda":
        raise InvalidArgument(f"device must be None, 'cpu' or a CUDA device, not {device!r}")
    cuda_check(f"device={str(device)!r}")
    if dev.index is None:
        dev = torch.device("cuda", torch.cuda.current_device())
    return dev
