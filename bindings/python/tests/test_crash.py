"""kill -9 of either side: consumers learn of a dead producer within 2 s, and a dead
consumer neither stops the other ranks nor keeps its own rank from being taken over."""

from __future__ import annotations

import signal
import time

DETECT_S = 2.0
BATCHES = 1000  # per epoch; the producers here are endless (--epochs 0)


def test_producer_kill_is_reported_to_c_and_python_consumers(
    produce, spawn, job, shm_dir, c_consume
):
    producer = produce(ranks=2, depth=8, batches=BATCHES, epochs=0, interval_us=1000)
    py = spawn.python("pyconsume", "--job", job, "--rank", "0", "--batches", str(BATCHES),
                      "--follow")  # fmt: skip
    c = spawn.start(
        "shml-consume",
        [str(c_consume), "--job", job, "--rank", "1", "--dir", str(shm_dir),
         "--timeout-ms", "30000", "--each"],
    )  # fmt: skip
    py.expect(r"^batch seq=", timeout=10)
    c.expect(r"^batch epoch=", timeout=10)
    time.sleep(0.2)  # both well inside their read loops
    assert py.popen.poll() is None and c.popen.poll() is None

    killed_at = time.monotonic()
    producer.popen.send_signal(signal.SIGKILL)
    exited: dict[str, float] = {}
    while len(exited) < 2 and time.monotonic() - killed_at < DETECT_S + 3:
        for proc in (py, c):
            if proc.name not in exited and proc.popen.poll() is not None:
                exited[proc.name] = time.monotonic() - killed_at
        time.sleep(0.005)

    assert py.name in exited, f"python consumer still running {DETECT_S + 3} s after the kill"
    assert c.name in exited, f"C consumer still running {DETECT_S + 3} s after the kill"
    py_rc, py_out = py.finish(timeout=5)
    c_rc, c_out = c.finish(timeout=5)
    assert py_rc == 3, f"pyconsume exited {py_rc}: {py_out[-500:]}\n{py.stderr()}"
    assert "gone t=" in py_out.splitlines()[-1]
    assert c_rc == 3, f"shml-consume exited {c_rc}: {c_out[-500:]}\n{c.stderr()}"
    assert exited[py.name] < DETECT_S, f"python took {exited[py.name]:.3f} s"
    assert exited[c.name] < DETECT_S, f"C took {exited[c.name]:.3f} s"


def test_consumer_kill_leaves_other_ranks_served_and_rank_recoverable(produce, spawn, job):
    depth = 8
    produce(ranks=2, depth=depth, batches=BATCHES, epochs=0, interval_us=500)
    holder = spawn.python("holder", "--job", job, "--rank", "0", "--batches", str(BATCHES),
                          "--skip", "3", "--hold", "2")  # fmt: skip
    other = spawn.python("other", "--job", job, "--rank", "1", "--batches", str(BATCHES),
                         "--follow")  # fmt: skip
    held = holder.expect(r"^holding seq=(\d+) epoch=(\d+) step=(\d+)$", timeout=10)
    assert held.groups() == ("3", "0", "3")
    other.expect(r"^batch seq=", timeout=10)

    holder.kill()
    assert holder.popen.returncode == -signal.SIGKILL
    other.drain()
    # Rank 1 goes on well past anything ring 0 could buffer while nobody reads it.
    for _ in range(4 * depth):
        other.expect(r"^batch seq=", timeout=5)

    # A new consumer takes rank 0 over where the dead one stood: at its oldest unreleased
    # batch, then onwards in order.
    successor = spawn.python("successor", "--job", job, "--rank", "0",
                             "--batches", str(BATCHES), "--follow")  # fmt: skip
    first = successor.expect(r"^batch seq=(\d+) epoch=(\d+) step=(\d+)$", timeout=10)
    assert first.groups() == held.groups()
    for step in range(4, 4 + 2 * depth):
        m = successor.expect(r"^batch seq=(\d+) epoch=(\d+) step=(\d+)$", timeout=5)
        assert m.groups() == (str(step), "0", str(step))
    assert other.popen.poll() is None and successor.popen.poll() is None


def test_clean_command_removes_a_killed_producer_and_spares_a_live_one(
    produce, shmloader_bin, job, shm_dir
):
    """`shmloader clean`, the command users run: after a kill -9 it removes the dead job's
    files; a live job's files are never touched, and a restart needs no clean at all."""
    import os
    import subprocess

    import shmloader

    def attach(rank: int) -> shmloader.Loader:
        return shmloader.attach(job, rank, timeout=10, dir=shm_dir, batch_timeout=10)

    def clean() -> str:
        out = subprocess.run([str(shmloader_bin), "clean", "--dir", str(shm_dir)],
                             capture_output=True, text=True, timeout=30)  # fmt: skip
        assert out.returncode == 0, out.stderr
        return out.stdout

    dead = produce(ranks=2, batches=BATCHES, epochs=0)
    attach(rank=0).close()  # it is up
    dead.popen.send_signal(signal.SIGKILL)
    dead.popen.wait(timeout=10)
    left = sorted(os.listdir(shm_dir))
    assert len(left) == 3, left  # two segments and the lock: a crash leaves them

    live = produce(ranks=1, batches=BATCHES, epochs=0)  # same job: replaces them itself
    loader = attach(rank=0)
    first = loader.next(timeout=10)
    assert first is not None
    first.release()
    assert "0 stale file(s)" in clean()  # the live job is spared ...
    second = loader.next(timeout=10)  # ... and still serving
    assert second is not None
    second.release()
    loader.close()
    live.popen.send_signal(signal.SIGKILL)
    live.popen.wait(timeout=10)
    out = clean()
    assert "2 stale file(s)" in out and f"-{job}-r0" in out and f"-{job}.lock" in out, out
    assert os.listdir(shm_dir) == []
