"""shmloader.serve: the producer as a child process. It serves once the call returns,
surfaces its errors as exceptions, and leaves no process and no segment behind: after the
``with`` block, after stop() with a trainer still reading, and after its parent is
SIGKILLed."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import servekit

import shmloader

OUTPUTS = {"id": "id", "x": {"columns": ["f000..f003"], "transforms": [{"fill_null": 0}]}}


def config(gen_dataset: Path, **keys: object) -> dict:
    return {"dataset": str(gen_dataset), "batch_size": 1000, "epochs": 1, "ranks": 1,
            "outputs": OUTPUTS, "progress": 0, **keys}  # fmt: skip


def gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        with contextlib.suppress(ChildProcessError):  # a child of this process: reap it
            os.waitpid(pid, os.WNOHANG)
        time.sleep(0.02)
    return False


def test_serve_in_a_with_block(gen_dataset: Path, shm_dir: Path, library: None) -> None:
    with shmloader.serve(config(gen_dataset), dir=shm_dir, ranks=2, timeout=60) as server:
        assert server.running and server.ranks == 2 and server.job.startswith("py")
        assert sorted(servekit.segments(shm_dir)) != []
        loaders = [server.attach(rank=r, timeout=20) for r in range(2)]
        rows = [sum(b.rows for b in loader) for loader in loaders]
        for loader in loaders:
            loader.close()
        assert sum(rows) == servekit.GEN_ROWS
        assert server.wait(timeout=30) == 0
    assert "rank=0 batches=10 rows=10000" in server.output()
    assert gone(server.pid, 5) and servekit.segments(shm_dir) == []


@pytest.mark.parametrize("keep", ["the loader open", "a batch after close"])
def test_wait_after_the_last_epoch_read_by_epoch(
    gen_dataset: Path, shm_dir: Path, library: None, keep: str
) -> None:
    """The pattern the README shows: one epoch through loader.epoch(), then wait(). The
    epoch's iterator stops at its end, before the end-of-stream marker, so serve would
    wait for ever on a loader kept open, or closed while the loop's last batch lives on
    (it keeps the ring claimed): wait() and close() read the end of the stream."""
    with shmloader.serve(config(gen_dataset), dir=shm_dir, timeout=60) as server:
        loader = server.attach(timeout=20, batch_timeout=20)
        rows, last = 0, None
        for b in loader.epoch():
            rows, last = rows + b.rows, b
        assert rows == servekit.GEN_ROWS and last is not None
        if keep != "the loader open":
            with loader:
                pass
        t0 = time.monotonic()
        assert server.wait(timeout=30) == 0
        assert time.monotonic() - t0 < 10, "serve waited for the trainer"
        assert keep != "the loader open" or loader.ended
    assert gone(server.pid, 5) and servekit.segments(shm_dir) == []


def test_stop_while_a_trainer_reads(gen_dataset: Path, shm_dir: Path, library: None) -> None:
    server = shmloader.serve(config(gen_dataset, epochs=0), dir=shm_dir, timeout=60)
    with server:
        loader = server.attach(timeout=20, batch_timeout=20)
        assert loader.next() is not None
        assert server.stop() == 0  # endless epochs: only the stop ends it
        with pytest.raises(shmloader.ProducerGone):
            for _ in range(100):
                loader.next()
        loader.close()
    assert gone(server.pid, 5) and servekit.segments(shm_dir) == []


def test_errors_are_exceptions(gen_dataset: Path, shm_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(shmloader.ServeFailed, match="no_such_column") as err:
        shmloader.serve({**config(gen_dataset), "outputs": {"y": "no_such_column"}}, dir=shm_dir)
    assert err.value.returncode == 1 and "no_such_column" in err.value.output
    assert "/proc/self/fd" not in str(err.value), "the message names the memory file"
    with pytest.raises(shmloader.InvalidArgument, match="unknown override bogus"):
        shmloader.serve(config(gen_dataset), bogus=1)
    with pytest.raises(shmloader.InvalidArgument, match="not a file"):
        shmloader.serve(tmp_path / "missing.yaml")
    assert servekit.segments(shm_dir) == []


CHILD = """
import os, sys, time, shmloader
server = shmloader.serve({config!r}, dir={dir!r}, timeout=60)
if {fork!r} and os.fork() == 0:  # a child that outlives its parent (a DataLoader worker, say)
    time.sleep(30)
    os._exit(0)
print(server.pid, server.job, flush=True)
time.sleep(600)
"""


def temp_files() -> set[str]:
    """The launcher's temporary files: serve's log (the config goes through a descriptor).
    Only these names, as other test suites may make shmloader-* dirs in the same /tmp."""
    tmp = tempfile.gettempdir()
    return {n for n in os.listdir(tmp) if n.startswith("shmloader-serve-") and n.endswith(".log")}


@pytest.mark.parametrize("fork", [False, True], ids=["alone", "with a forked child alive"])
def test_no_process_or_segment_after_the_parent_is_killed(
    gen_dataset: Path, shm_dir: Path, fork: bool
) -> None:
    before = temp_files()
    script = CHILD.format(config=config(gen_dataset, epochs=0), dir=str(shm_dir), fork=fork)
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                              env=servekit.child_env(shm_dir))  # fmt: skip
    try:
        line = parent.stdout.readline().decode()  # type: ignore[union-attr]
        assert line, "the parent did not start serve"
        pid, job = int(line.split()[0]), line.split()[1]
        assert servekit.segments(shm_dir), "serve has no segments"
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=10)
        assert gone(pid, 10), f"serve (pid {pid}) outlived its SIGKILLed parent"
        assert servekit.segments(shm_dir) == [], "segments left behind"
        left = [p for p in os.listdir(shm_dir) if job in p]
        assert left == [], f"files of job {job} left: {left}"
        assert temp_files() - before == set(), "temporary files left behind"
    finally:
        parent.kill()
