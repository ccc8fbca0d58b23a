"""shmloader.torch against a real serve: tensors view the ring (no copy), DLPack exports
share memory too (numpy arrays and torch tensors alike), bfloat16 comes out as
torch.bfloat16, a view's slot is released when the iteration moves on, and pin/device
either work (with CUDA: the ring is registered, copies finish before their slot is
released) or fail with a clear error (without)."""

from __future__ import annotations

import gc
import time
import uuid
from pathlib import Path

import numpy as np
import pytest
import servekit
import torch

import shmloader
import shmloader.torch as slt
from shmloader._cuda import ToDevice

OUTPUTS = {
    "x": {"columns": ["f000..f003"], "transforms": [{"fill_null": 0}]},
    "xb": {"columns": ["f000..f003"], "dtype": "bfloat16", "transforms": [{"fill_null": 0}]},
    "id": "id",
}


def start(group, tmp: Path, gen_dataset: Path, **keys: object) -> str:
    cfg = servekit.write_config(tmp / "v.yaml", dataset=str(gen_dataset), batch_size=1000,
                                epochs=1, ranks=1, outputs=OUTPUTS, **keys)  # fmt: skip
    job = "tv-" + uuid.uuid4().hex[:12]
    group.serve(cfg, job, "--drain-timeout", "20s")
    return job


def inside(t: torch.Tensor, info: shmloader.RingInfo) -> bool:
    lo = t.data_ptr()
    return info.base <= lo and lo + t.numel() * t.element_size() <= info.base + info.size


def test_tensors_and_dlpack_view_the_ring(
    group, gen_dataset: Path, tmp_path: Path, shm_dir: Path
) -> None:
    job = start(group, tmp_path, gen_dataset)
    with slt.attach(job, dir=shm_dir, timeout=20, batch_timeout=20) as loader:
        info = loader.info
        assert len(loader) == 20
        rows = 0
        for batch in loader.epoch():
            assert isinstance(batch, slt.TorchBatch) and set(batch) == {"x", "xb", "id"}
            x, xb, ids = batch["x"], batch["xb"], batch["id"]
            assert (
                x.dtype == torch.float32 and xb.dtype == torch.bfloat16 and ids.dtype == torch.int64
            )
            assert x.shape == (1000, 4) and x.device.type == "cpu"
            assert all(inside(t, info) for t in (x, xb, ids)), "a tensor is not in the ring"
            assert torch.equal(xb.float(), x.to(torch.bfloat16).float())
            # DLPack: a consumer of the protocol gets the same memory, no copy.
            for t in (x, xb, ids):
                again = torch.from_dlpack(t)
                assert again.data_ptr() == t.data_ptr() and again.dtype == t.dtype
            nx = np.from_dlpack(x)
            assert nx.ctypes.data == x.data_ptr() and np.array_equal(nx, x.numpy())
            rows += batch.rows
        assert rows == servekit.GEN_ROWS


def test_numpy_batches_export_dlpack(
    group, gen_dataset: Path, tmp_path: Path, shm_dir: Path
) -> None:
    job = start(group, tmp_path, gen_dataset)
    with shmloader.attach(job, dir=shm_dir, timeout=20, batch_timeout=20) as loader:
        for batch in loader.epoch():
            for name, array in batch.items():
                t = torch.from_dlpack(array)
                assert t.data_ptr() == array.ctypes.data, name
                assert np.shares_memory(np.from_dlpack(array), array), name
            shared = torch.from_dlpack(batch["x"])
            batch["x"][0, 0] = 123.0  # writable while held: the views see each other
            assert shared[0, 0].item() == 123.0


def test_views_are_released_as_the_iteration_moves(
    group, gen_dataset: Path, tmp_path: Path, shm_dir: Path
) -> None:
    job = start(group, tmp_path, gen_dataset)
    with slt.attach(job, dir=shm_dir, timeout=20, batch_timeout=20) as loader:
        it = loader.epoch()
        first = next(it)
        assert loader.loader.held == 1
        kept = first["id"].clone()
        second = next(it)
        assert loader.loader.held == 1, "the previous batch was not released"
        assert not torch.equal(kept, second["id"])
        manual = loader.next()  # outside the iteration: held until released
        assert manual is not None and loader.loader.held == 2
        manual.release()
        assert loader.loader.held == 1
        it.close()
        assert loader.loader.held == 0
        for _ in loader:
            pass
        assert loader.ended


def test_pin_and_device(group, gen_dataset: Path, tmp_path: Path, shm_dir: Path) -> None:
    job = start(group, tmp_path, gen_dataset)
    if not torch.cuda.is_available():
        for kwargs in ({"pin": True}, {"device": "cuda"}, {"device": "cuda:0", "pin": False}):
            with pytest.raises(slt.CudaUnavailable, match="needs CUDA"):
                slt.attach(job, dir=shm_dir, timeout=20, **kwargs)
        with pytest.raises(shmloader.InvalidArgument, match="device"):
            slt.attach(job, dir=shm_dir, timeout=20, device="meta")
        # The refusals attached nothing: the rank is free.
        with slt.attach(job, dir=shm_dir, timeout=20, batch_timeout=20) as loader:
            assert sum(b.rows for b in loader) == servekit.GEN_ROWS
        return
    # With a GPU: the pinned ring copies to the device, each slot handed back only after
    # its copy's event completed, and the bytes are the host's.
    with slt.attach(job, dir=shm_dir, timeout=20, batch_timeout=20, device="cuda") as loader:
        assert loader.pinned
        seen = []
        for batch in loader.epoch():
            assert batch["x"].is_cuda and batch["xb"].dtype == torch.bfloat16
            seen.append(batch["id"].cpu())
        ids = torch.cat(seen).numpy()
        assert np.array_equal(np.sort(ids), np.arange(servekit.GEN_ROWS))
        for _ in loader:
            pass


class _Event:
    """A CUDA event's query/synchronize, completed by the test."""

    def __init__(self) -> None:
        self.done = False
        self.synced = False

    def query(self) -> bool:
        return self.done

    def synchronize(self) -> None:
        self.synced = self.done = True


class _Held:
    def __init__(self) -> None:
        self.released = False

    def release(self) -> None:
        self.released = True


def test_device_slots_go_back_only_after_their_copy() -> None:
    """The release rule of device='cuda', on every GPU-less host too: a slot is handed back
    once its copy's event has completed, in order, never earlier; the oldest is waited
    for only when too many are in flight, and a drain waits for all."""
    dev = object.__new__(ToDevice)
    dev.pending = __import__("collections").deque()
    dev.limit = 3
    items = [(_Held(), _Event()) for _ in range(4)]
    dev.pending.extend(items[:3])  # type: ignore[arg-type]  # stand-ins for batches and events
    dev.reap(keep=3)
    assert not any(b.released for b, _ in items), "released before the copy finished"
    items[1][1].done = True  # completes out of order: the first still holds the queue
    dev.reap(keep=3)
    assert not items[0][0].released and not items[1][0].released
    items[0][1].done = True
    dev.reap(keep=3)
    assert items[0][0].released and items[1][0].released and not items[2][0].released
    dev.pending.append(items[3])
    dev.reap(keep=1)  # too many in flight: waits for the oldest, not the others
    assert items[2][1].synced and items[2][0].released and not items[3][0].released
    dev.drain()
    assert items[3][1].synced and items[3][0].released and not dev.pending


def test_tensors_keep_their_slot_held_like_arrays(
    group, gen_dataset: Path, tmp_path: Path, shm_dir: Path
) -> None:
    """A tensor (or a view of it) that outlives its TorchBatch keeps the slot held, as a
    numpy array does: its bytes never change under it; dropping it hands the slot back."""
    job = start(group, tmp_path, gen_dataset)
    with slt.attach(job, dir=shm_dir, timeout=20, batch_timeout=20) as loader:
        kept = []
        for _ in range(3):
            batch = loader.next()
            assert batch is not None
            kept.append((batch["id"][10:20], batch["id"].clone()))  # a view, and a copy
            del batch
        assert loader.loader.held == 3, "a slot went back while a tensor still views it"
        for _ in range(3):  # the producer moves on meanwhile
            b = loader.next()
            assert b is not None
            b.release()
        for view, copy in kept:
            assert torch.equal(view, copy[10:20]), "a kept tensor's bytes changed"
        kept.clear()
        del view, copy
        b = loader.next()  # the loader's next call collects the dropped ones
        assert b is not None and loader.loader.held == 1
        b.release()
        for _ in loader:
            pass


def test_set_epoch_at_the_end_of_the_epoch_before(
    group, gen_dataset: Path, tmp_path: Path, shm_dir: Path
) -> None:
    """A resume saved after an epoch's last batch (its end not read yet) goes on with the
    whole next epoch; DataLoader iterations are one epoch each."""
    cfg = servekit.write_config(tmp_path / "e.yaml", dataset=str(gen_dataset), batch_size=1000,
                                epochs=3, ranks=1, outputs=OUTPUTS)  # fmt: skip
    job = "se-" + uuid.uuid4().hex[:12]
    group.serve(cfg, job, "--drain-timeout", "20s")
    ds = slt.Dataset(job, dir=shm_dir, timeout=20, batch_timeout=20)
    ds.load_state_dict({"epoch": 0, "step": 20, "world": 1, "base": 0,
                        "config_hash": ds.loader.info.config_hash, "plan_version": 2})  # fmt: skip
    dl = torch.utils.data.DataLoader(ds, batch_size=None)
    for epoch in (1, 2):
        ds.set_epoch(epoch)
        got = [(b.epoch, b.step) for b in dl]
        assert got == [(epoch, s) for s in range(20)], f"epoch {epoch}: {got[:3]}..."
    ds.close()


def test_dataset_refuses_worker_processes(
    group, gen_dataset: Path, tmp_path: Path, shm_dir: Path
) -> None:
    job = start(group, tmp_path, gen_dataset)
    ds = slt.Dataset(job, dir=shm_dir, timeout=20)
    dl = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=1)
    with pytest.raises(Exception, match="num_workers=0"):
        next(iter(dl))
    with slt.attach(job, dir=shm_dir, timeout=20, batch_timeout=20) as loader:  # the rank is free
        assert sum(b.rows for b in loader) == servekit.GEN_ROWS


class _FakeStream:
    pass


def test_pinned_slots_go_back_after_the_queued_copies(
    group, gen_dataset: Path, tmp_path: Path, shm_dir: Path, monkeypatch
) -> None:
    """pin=True's release rule, on every GPU-less host too (CUDA's event and stream are
    stood in for; the real run needs a GPU): moving on from a batch hands its slot back
    only once an event recorded after the trainer's queued work (its non_blocking copies)
    has completed; a batch dropped from next() likewise."""
    events: list[_Event] = []

    class Event(_Event):
        def __init__(self) -> None:
            super().__init__()
            events.append(self)

        def record(self, stream: object) -> None:
            assert isinstance(stream, _FakeStream)

    monkeypatch.setattr(slt, "pin_ring", lambda stream: None)
    monkeypatch.setattr(slt, "cuda_check", lambda what: None)
    monkeypatch.setattr(torch.cuda, "Event", Event)
    monkeypatch.setattr(torch.cuda, "current_stream", lambda device=None: _FakeStream())
    job = start(group, tmp_path, gen_dataset)
    with slt.attach(job, dir=shm_dir, timeout=20, batch_timeout=20, pin=True) as loader:
        it = loader.epoch()
        next(it)
        next(it)
        assert len(events) == 1 and loader.loader.held == 2, "the first slot went back at once"
        events[0].done = True
        next(it)
        assert loader.loader.held == 2 and len(events) == 2  # first back, second waiting
        it.close()  # the last batch's copies may still run: it queues behind its event too
        assert loader.loader.held == 2 and len(events) == 3
        for e in events:
            e.done = True
        first = loader.next()  # reaps both
        assert first is not None and loader.loader.held == 1
        del first  # dropped without release()
        second = loader.next()  # sees the drop: queued behind an event, not released
        assert second is not None and loader.loader.held == 2, "a dropped batch went back at once"
        events[-1].done = True
        second.release()  # queued behind a new event
        third = loader.next()  # reaps the first; the second still waits
        assert third is not None and loader.loader.held == 2
        for e in events:
            e.done = True
        third.release()
        for _ in loader:
            pass


def test_dataset_with_block_ends_the_job(
    group, gen_dataset: Path, tmp_path: Path, shm_dir: Path
) -> None:
    """Training stopped early inside `with slt.Dataset(...)`: leaving the block cleanly
    says the job is done, and serve ends at once (exit 0); leaving it on an exception
    only closes, so serve waits for a restarted trainer."""
    cfg = servekit.write_config(tmp_path / "d.yaml", dataset=str(gen_dataset), batch_size=1000,
                                epochs=0, ranks=1, outputs=OUTPUTS)  # fmt: skip
    job = "dw-" + uuid.uuid4().hex[:12]
    serve = group.serve(cfg, job)

    def diverge() -> str:
        try:
            with slt.Dataset(job, dir=shm_dir, timeout=20, batch_timeout=20) as ds:
                for step, _ in enumerate(torch.utils.data.DataLoader(ds, batch_size=None)):
                    if step == 3:
                        raise RuntimeError("loss diverged")
        except RuntimeError as exc:
            return str(exc)  # the frames holding the last batch go with the traceback
        return "no exception"

    assert diverge() == "loss diverged"
    gc.collect()
    time.sleep(1)
    assert serve.running(), "an exception in the block must not end the job"
    with slt.Dataset(job, dir=shm_dir, timeout=20, batch_timeout=20) as ds:
        for step, _ in enumerate(torch.utils.data.DataLoader(ds, batch_size=None)):
            if step == 5:
                break  # max steps
    assert serve.wait(timeout=10) == 0, serve.describe()
    assert "the job is done: rank 0's trainer said so" in serve.stderr
    assert servekit.segments(shm_dir) == []
