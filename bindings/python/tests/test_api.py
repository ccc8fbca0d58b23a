"""The Python API against a real producer: epochs, end of stream, seek, resume, errors,
zero-copy views."""

from __future__ import annotations

import gc
import mmap
import os
import signal
import subprocess
import sys
import time
import zlib

import numpy as np
import pytest
from conftest import PYTHON_ROOT, results

import shmloader
from shmloader import _lib

ROWS = 4
ROW_BYTES = 32


def ids_for(epoch: int, step: int, batches: int, ranks: int, rank: int) -> np.ndarray:
    first = ((epoch * batches + step) * ranks + rank) * ROWS
    return np.arange(first, first + ROWS, dtype=np.int64)


def check_batch(batch: shmloader.Batch, batches: int, ranks: int = 1, rank: int = 0) -> None:
    assert batch.rows == ROWS
    assert list(batch) == ["id", "payload", "crc", "t_ns"]
    assert batch["payload"].shape == (ROWS, ROW_BYTES) and batch["payload"].dtype == np.uint8
    assert batch["crc"].dtype == np.uint32 and batch["t_ns"].dtype == np.int64
    want = ids_for(batch.epoch, batch.step, batches, ranks, rank)
    np.testing.assert_array_equal(batch["id"], want)
    for i in range(ROWS):
        assert zlib.crc32(batch["payload"][i]) == batch["crc"][i]


@pytest.fixture
def attach(job, shm_dir):
    loaders: list[shmloader.Loader] = []

    def attach_(rank: int = 0, timeout: float = 10.0, **kw) -> shmloader.Loader:
        kw.setdefault("batch_timeout", 10.0)
        loader = shmloader.attach(job, rank, timeout=timeout, dir=shm_dir, **kw)
        loaders.append(loader)
        return loader

    yield attach_
    for loader in loaders:
        loader.close()


def test_epochs_and_end_of_stream(produce, attach):
    batches, epochs = 5, 3
    producer = produce(batches=batches, epochs=epochs)
    loader = attach()

    steps = [(b.epoch, b.step) for b in loader.epoch()]
    assert steps == [(0, s) for s in range(batches)]
    assert loader.position == (1, 0) and not loader.ended

    # epoch() stopped at the end of epoch 0; the next one continues with epoch 1, step 0.
    second = []
    for b in loader.epoch():
        check_batch(b, batches)
        second.append((b.epoch, b.step))
    assert second == [(1, s) for s in range(batches)]

    # Iterating over the loader runs to the end of the stream, across epochs.
    rest = [(b.epoch, b.step) for b in loader]
    assert rest == [(2, s) for s in range(batches)]
    assert loader.ended and loader.held == 0
    assert loader.next(timeout=1) is None
    assert list(loader.epoch()) == [] and list(loader) == []

    rc, out = producer.finish(timeout=20)
    assert rc == 0, producer.stderr()
    assert results(out)[0].startswith(f"rank=0 batches={batches * epochs} ")


def test_next_returns_none_once_per_epoch_end(produce, attach):
    batches = 3
    produce(batches=batches, epochs=2)
    loader = attach()
    got = []
    while True:
        b = loader.next(timeout=10)
        got.append(None if b is None else (b.epoch, b.step))
        if b is None and loader.ended:
            break
        if b is not None:
            b.release()
    assert got == [(0, 0), (0, 1), (0, 2), None, (1, 0), (1, 1), (1, 2), None, None]


def test_iteration_releases_previous_batch_and_on_break(produce, attach):
    produce(batches=20, epochs=1)
    loader = attach()
    seen = []
    for b in loader.epoch():
        assert loader.held == 1
        seen.append(b)
        if len(seen) == 3:
            break
    assert loader.held == 0
    assert [b.released for b in seen] == [True, True, True]


def test_seek_delivers_that_batch_next(produce, attach):
    batches, ranks = 10, 2
    produce(ranks=ranks, batches=batches, epochs=5)  # never finished while seeking
    loader = attach(rank=1)
    first = loader.next()
    assert (first.epoch, first.step) == (0, 0)
    first.release()
    for epoch, step in [(2, 3), (0, 7), (1, 0), (2, 9)]:
        loader.seek(epoch, step)
        assert loader.position == (epoch, step)
        b = loader.next()
        assert (b.epoch, b.step) == (epoch, step)
        check_batch(b, batches, ranks, rank=1)
        b.release()
        assert loader.position == (epoch, step + 1)
    # After the last step of an epoch comes its end, then the next epoch.
    loader.seek(1, batches - 1)
    assert loader.next().step == batches - 1
    assert loader.next() is None
    assert loader.position == (2, 0)
    after = loader.next()
    assert (after.epoch, after.step) == (2, 0)


def test_seek_while_holding_on_a_full_ring(produce, attach):
    """The oldest slot held and the ring full of stale batches: seek still gets its answer,
    because it releases what the loader holds."""
    depth = 4
    produce(depth=depth, batches=50, epochs=3)
    loader = attach()
    held = loader.next()
    time.sleep(0.2)  # the producer fills the ring behind the held slot
    loader.seek(2, 10)
    assert held.released
    b = loader.next(timeout=5)
    assert (b.epoch, b.step) == (2, 10)


def test_a_rank_the_job_does_not_have_fails_at_once(produce, attach):
    produce(ranks=2, batches=5, epochs=0)
    attach(rank=1).close()  # the producer is up
    start = time.monotonic()
    with pytest.raises(shmloader.NoSuchRank, match="SHML_ERANK") as info:
        attach(rank=2, timeout=5.0)
    assert isinstance(info.value, shmloader.InvalidArgument)
    assert "the job serves ranks 0..1 on this host" in str(info.value)
    assert time.monotonic() - start < 1.0


def test_resume_after_the_stream_finished_is_an_error(produce, attach):
    """A seek the producer never answers (it had finished) must not look like an empty,
    normal end of stream: that would silently drop the rest of the epoch."""
    produce(batches=20, epochs=1, depth=8)
    first = attach()
    for _ in range(15):
        first.next(timeout=10).release()
    state = {"job": first.job, "rank": 0, "epoch": 0, "step": 5}
    time.sleep(0.3)  # the producer publishes the rest and its end of stream
    first.close()
    del first
    gc.collect()
    second = attach()
    second.load_state_dict(state)
    with pytest.raises(shmloader.SeekUnanswered, match="SHML_ESEEK"):
        second.next(timeout=10)


def test_state_dict_resume_gives_the_same_bytes(produce, attach):
    batches = 8
    produce(batches=batches, epochs=10)  # still serving when the resumed loader seeks
    loader = attach()
    with pytest.raises(shmloader.ShmloaderError, match="position unknown"):
        loader.state_dict()
    for _ in range(batches + 3):  # 8 batches, the end of epoch 0, 2 batches
        b = loader.next(timeout=10)
        if b is not None:
            b.release()
    del b  # a Batch object, even released, keeps the ring (and the rank's claim)
    state = loader.state_dict()
    assert state["job"] == loader.job and state["rank"] == 0
    assert (state["epoch"], state["step"]) == (1, 2)

    def record(loader: shmloader.Loader, n: int) -> list[tuple[int, int, bytes]]:
        out = []
        for b in loader:
            out.append((b.epoch, b.step, b["id"].tobytes() + b["payload"].tobytes()))
            if len(out) == n:
                break
        return out

    original = record(loader, 10)
    assert [(e, s) for e, s, _ in original][:2] == [(1, 2), (1, 3)]
    loader.close()
    del loader

    resumed = attach()
    resumed.load_state_dict(state)
    assert record(resumed, 10) == original

    # Another rank's state resumes this rank at the same step: with DDP often only
    # rank 0 saves.
    resumed.load_state_dict({**state, "rank": 1})
    assert record(resumed, 10) == original
    with pytest.raises(shmloader.InvalidArgument):
        resumed.load_state_dict({"epoch": 1})


def test_attach_without_producer_times_out_quickly(job, shm_dir, library):
    start = time.monotonic()
    with pytest.raises(shmloader.Timeout) as info:
        shmloader.attach(job, 0, timeout=0.3, dir=shm_dir)
    assert time.monotonic() - start < 1.5
    err = info.value
    assert isinstance(err, TimeoutError)
    assert err.code_name == "SHML_ETIMEOUT" and err.job == job and err.rank == 0
    assert job in str(err) and str(shm_dir) in str(err)


def test_second_consumer_of_a_rank_is_busy(produce, attach):
    produce(ranks=2, batches=50, epochs=0)
    first = attach(rank=0)
    with pytest.raises(shmloader.Busy) as info:
        attach(rank=0, timeout=2)
    assert info.value.code_name == "SHML_EBUSY" and "rank=0" in str(info.value)
    other = attach(rank=1)  # another rank is free
    assert first.next().epoch == 0 and other.next().epoch == 0


def test_arrays_are_writable_zero_copy_views_of_the_segment(produce, attach, job, shm_dir):
    produce(batches=50, epochs=0, row_bytes=ROW_BYTES)
    loader = attach()
    info = loader.info
    a, b = loader.next(), loader.next()
    assert b.seq == a.seq + 1

    for name, arr in a.items():
        assert not arr.flags.owndata and arr.flags.writeable and arr.flags.c_contiguous
        ptr = arr.ctypes.data
        assert info.base <= ptr and ptr + arr.nbytes <= info.base + info.size
        assert (arr.ctypes.data - info.base) % 64 == 0, name
    assert b["id"].ctypes.data - a["id"].ctypes.data in (
        info.slot_size,
        info.slot_size * (1 - info.slot_count),  # wrapped around the ring
    )
    assert not np.shares_memory(a["payload"], b["payload"])
    assert np.shares_memory(a["payload"], a["payload"][1:])

    # An independent mapping of the segment file sees what is written through the view.
    path = shm_dir / f"shmloader-{os.getuid()}-{job}-r0"
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ) as seg:
        payload = a["payload"]
        off = payload.ctypes.data - info.base
        assert seg[off : off + payload.nbytes] == payload.tobytes()
        payload[0, :8] = np.frombuffer(b"ZEROCOPY", dtype=np.uint8)
        assert seg[off : off + 8] == b"ZEROCOPY"
        assert seg[0:8] == b"SHMLRING"


def test_repr_and_info(produce, attach, job, shm_dir):
    produce(ranks=2, depth=4, batches=50, epochs=0)
    loader = attach(rank=1)
    info = loader.info
    assert (info.rank, info.ranks, info.slot_count, info.batch_capacity) == (1, 2, 4, ROWS)
    assert info.ntensors == 4 and info.size > 0 and info.slot_size % 4096 == 0
    assert info.base % 4096 == 0
    text = repr(loader)
    assert text.startswith(f"<shmloader.Loader job={job!r} rank=1 dir={str(shm_dir)!r}")
    assert "depth=4" in text and "held=0" in text

    b = loader.next()
    text = repr(b)
    assert text.startswith(f"<shmloader.Batch epoch=0 step=0 seq={b.seq} rows={ROWS} ")
    assert f"payload:uint8[{ROWS},{ROW_BYTES}]" in text and text.endswith("(held)>")
    assert b.dtypes == {"id": "int64", "payload": "uint8", "crc": "uint32", "t_ns": "int64"}
    with b:
        pass
    assert repr(b).endswith("(released)>")
    loader.close()
    assert repr(loader).endswith(" closed>")


def test_ctrl_c_interrupts_a_batch_wait(produce, spawn, job, shm_dir):
    produce(batches=50, epochs=0, interval_us=20_000_000)  # one batch, then a long pause
    # Python leaves SIGINT ignored when it starts with it ignored (as in a job a shell
    # started in the background): the child restores it, so the test does not depend on
    # how it was started.
    script = (
        "import signal, sys, shmloader\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "loader = shmloader.attach(sys.argv[1], 0, dir=sys.argv[2], timeout=10)\n"
        "loader.next().release()\n"
        "print('waiting', flush=True)\n"
        "try:\n    loader.next(timeout=60)\n"
        "except KeyboardInterrupt:\n    print('interrupted', flush=True)\n"
    )
    proc = spawn.start("ctrl-c", [sys.executable, "-c", script, job, str(shm_dir)])
    proc.expect("^waiting$", timeout=10)
    time.sleep(0.3)
    sent = time.monotonic()
    proc.popen.send_signal(signal.SIGINT)
    proc.expect("^interrupted$", timeout=5)
    assert time.monotonic() - sent < 1.0
    rc, _ = proc.finish(timeout=5)
    assert rc == 0, proc.stderr()


def test_torch_views(produce, attach):
    produce(batches=50, epochs=0)
    loader = attach()
    batch = loader.next()
    try:
        import torch
    except ImportError:
        with pytest.raises(ImportError, match=r"shmloader\[torch\]"):
            shmloader.torch_views(batch)
        return
    views = shmloader.torch_views(batch)
    assert views["payload"].data_ptr() == batch["payload"].ctypes.data
    assert torch.from_numpy(batch["id"]).data_ptr() == batch["id"].ctypes.data


def test_missing_library_names_the_paths_and_make_build(tmp_path):
    missing = tmp_path / "nowhere" / "libshmloader.so"
    script = (
        "import shmloader\n"
        "try:\n    shmloader.attach('j', 0)\n"
        "except shmloader.LibraryNotFound as e:\n    print(e)\n"
    )
    env = {**os.environ, "SHMLOADER_LIB": str(missing), "PYTHONPATH": str(PYTHON_ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=30, env=env
    )
    assert out.returncode == 0, out.stderr
    assert str(missing) in out.stdout and "make build" in out.stdout


def test_error_classes_carry_code_and_context():
    from shmloader.errors import error_for

    cases = {
        -1: shmloader.Timeout,
        -2: shmloader.ProducerGone,
        -5: shmloader.Corrupt,
        -6: shmloader.VersionMismatch,
        -7: shmloader.Corrupt,
        -8: shmloader.Corrupt,
        -9: shmloader.Corrupt,
        -10: shmloader.Corrupt,
        -11: shmloader.Busy,
        -12: shmloader.TooManyHeld,
        -13: shmloader.InvalidArgument,
        -14: shmloader.PermissionDenied,
        -15: shmloader.OutOfMemory,
        -16: shmloader.SystemCallError,
        -17: shmloader.SeekUnanswered,
        -18: shmloader.NoSuchRank,
    }
    for code, cls in cases.items():
        err = error_for(code, "explained", op="next", job="train", rank=3, sys_errno=2)
        assert type(err) is cls and isinstance(err, shmloader.ShmloaderError)
        assert err.code == code and err.code_name is not None
        assert err.code_name.startswith("SHML_E")
        assert str(err).startswith("next job='train' rank=3: explained (SHML_E")
    assert isinstance(error_for(-14, "x", op="attach"), PermissionError)
    sys_err = error_for(-16, "x", op="attach", sys_errno=28)
    assert (
        isinstance(sys_err, shmloader.SystemCallError)
        and sys_err.errno == 28
        and "No space left" in str(sys_err)
    )


def test_a_library_of_another_abi_is_refused(library):
    """The package checks shml_abi_version() of the library it loads: pretend the package
    speaks ABI 99 and the real library must be refused, naming both."""
    script = (
        "import shmloader, shmloader._lib as L\n"
        "L.ABI_VERSION = 99\n"
        "try:\n    L.lib()\n"
        "except shmloader.LibraryNotFound as e:\n    print(e)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(PYTHON_ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=30, env=env
    )
    assert out.returncode == 0, out.stderr
    assert f"ABI {_lib.ABI_VERSION}; this package speaks ABI 99" in out.stdout, out.stdout


def test_attach_to_a_missing_directory_fails_at_once(job, library):
    start = time.monotonic()
    with pytest.raises(shmloader.InvalidArgument, match="does not exist"):
        shmloader.attach(job, 0, timeout=10, dir="/nonexistent/shmloader-dir")
    assert time.monotonic() - start < 1


def test_stats_measure_a_starved_trainer(produce, attach):
    """A producer publishing every 20 ms to a trainer that does nothing: the trainer waits
    nearly all the time, and stats() says so (and counts what it took)."""
    produce(batches=40, epochs=1, interval_us=20_000)
    loader = attach()
    first = loader.next(timeout=10)
    assert first is not None
    first.release()
    loader.stats(reset=True)
    rows = 0
    for batch in loader.epoch():
        rows += batch.rows
    st = loader.stats()
    assert st.batches == 39 and st.rows == rows == 39 * ROWS
    assert st.elapsed_s >= 0.6, st  # 39 batches, 20 ms apart
    assert st.stall > 0.8, f"a starved trainer's stall is {st.stall:.2f}"
    assert st.wait_s <= st.elapsed_s
    again = loader.stats(reset=True)
    assert again.batches == st.batches  # reset after reading
    assert loader.stats().batches == 0
