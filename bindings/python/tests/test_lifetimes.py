"""Views that outlive their batch, their loader's close() and the loader itself never
crash, and the rank's claim goes away with the last of them.

Each scenario runs in its own interpreter, so a crash fails the test instead of pytest."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from conftest import PYTHON_ROOT

PRELUDE = """
import gc, os, sys
import numpy as np
import shmloader
job, shm_dir = sys.argv[1], sys.argv[2]
"""


def run_script(spawn, job, shm_dir, body: str) -> str:
    script = PRELUDE + textwrap.dedent(body)
    proc = subprocess.run(
        [sys.executable, "-c", script, job, str(shm_dir)],
        capture_output=True,
        text=True,
        timeout=60,
        env=spawn.env,
        cwd=PYTHON_ROOT,
    )
    assert proc.returncode == 0, (
        f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    )
    return proc.stdout


def test_views_survive_release_and_close_and_claim_drops_with_them(produce, spawn, job, shm_dir):
    produce(ranks=1, depth=4, batches=1000, epochs=0, rows=4, row_bytes=64)
    out = run_script(
        spawn,
        job,
        shm_dir,
        """
        loader = shmloader.attach(job, 0, dir=shm_dir, timeout=10)
        batch = loader.next()
        payload, ids = batch["payload"], batch["id"]
        kept = np.array(ids)                  # a copy is ours for good
        batch.release()
        assert batch.released and loader.held == 0
        int(payload.sum()); int(ids.sum())    # read after release: no crash

        for _ in range(3 * loader.info.slot_count):   # the producer reuses the slot
            loader.next().release()
        int(payload.sum())
        assert not np.array_equal(ids, kept)  # a view shows whatever the slot holds now

        held = loader.next()
        view_of_held = held["payload"]
        loader.close()
        assert loader.closed and held.released
        int(payload.sum()); int(view_of_held.sum())   # the mapping outlives close()
        for use in (loader.next, loader.release, lambda: loader.seek(0, 0),
                    lambda: loader.info):
            try:
                use()
            except shmloader.LoaderClosed as exc:
                assert "closed" in str(exc)
            else:
                raise AssertionError(f"{use} worked on a closed loader")
        held.release()                        # releasing after close is a no-op

        # While views live, the rank stays claimed; with the last one gone it is free.
        try:
            shmloader.attach(job, 0, dir=shm_dir, timeout=1)
        except shmloader.Busy:
            pass
        else:
            raise AssertionError("attach succeeded while views of the old loader live")
        del loader, batch, held
        int(payload.sum())
        del payload, ids
        gc.collect()
        try:
            shmloader.attach(job, 0, dir=shm_dir, timeout=1)
        except shmloader.Busy:
            pass
        else:
            raise AssertionError("attach succeeded while a view of the old loader lives")
        del view_of_held
        gc.collect()
        again = shmloader.attach(job, 0, dir=shm_dir, timeout=5)
        b = again.next()
        print("OK", b.seq, b.epoch, b.step)
    """,
    )
    assert out.startswith("OK ")


def test_loader_dropped_without_close_keeps_views_valid(produce, spawn, job, shm_dir):
    produce(ranks=1, depth=4, batches=1000, epochs=0)
    out = run_script(
        spawn,
        job,
        shm_dir,
        """
        def take():
            loader = shmloader.attach(job, 0, dir=shm_dir, timeout=10)
            return loader.next()["id"]        # loader and Batch are gone on return
        ids = take()
        gc.collect()
        first = int(ids[0])
        ids[0] = first                        # still held, so writable and ours
        del ids
        gc.collect()
        loader = shmloader.attach(job, 0, dir=shm_dir, timeout=5)
        b = loader.next()
        print("OK", first, int(b["id"][0]))
    """,
    )
    assert out.startswith("OK ")


def test_unreferenced_batches_are_released(produce, spawn, job, shm_dir):
    depth = 4
    produce(ranks=1, depth=depth, batches=1000, epochs=0)
    out = run_script(
        spawn,
        job,
        shm_dir,
        f"""
        loader = shmloader.attach(job, 0, dir=shm_dir, timeout=10)
        for _ in range(5 * {depth}):          # taken and dropped, never released by hand
            b = loader.next()
        assert loader.held <= 1, loader.held

        loader.release()
        kept = [loader.next() for _ in range({depth} - 1)]
        try:
            loader.next(timeout=1)
        except shmloader.TooManyHeld as exc:
            assert exc.code_name == "SHML_EHELD" and "release" in str(exc)
        else:
            raise AssertionError("took more than depth - 1 batches")
        arrays = [k["id"] for k in kept]
        del kept, b
        assert loader.held == {depth} - 1      # their arrays still hold them
        del arrays
        assert loader.held == 0
        print("OK")
    """,
    )
    assert out.startswith("OK")


def test_forked_child_cannot_use_the_parents_loader(produce, spawn, job, shm_dir):
    produce(ranks=1, depth=4, batches=1000, epochs=0)
    out = run_script(
        spawn,
        job,
        shm_dir,
        """
        loader = shmloader.attach(job, 0, dir=shm_dir, timeout=10)
        batch = loader.next()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                loader.next()
            except shmloader.LoaderClosed as exc:
                code = 0 if "attach again" in str(exc) else 2
            del batch, loader                  # must not detach the parent's handle
            gc.collect()
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, status
        assert not batch.released and loader.held == 1
        batch.release()
        nxt = loader.next()
        assert nxt.seq == batch.seq + 1
        print("OK")
    """,
    )
    assert out.startswith("OK")
