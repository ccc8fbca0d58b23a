"""Stopping `shmloader serve` with SIGTERM or SIGINT: it exits 0 within a few seconds and
removes its segments, and trainers reading at that moment get shmloader.ProducerGone (or
the end of the stream) promptly, after an in-order stream: they never hang. A second serve
of a running job is refused without disturbing the first.
"""

from __future__ import annotations

import signal
import time
import uuid
from pathlib import Path

import pytest
import servekit

RANKS = 2
EXIT_S = 5.0  # serve's exit after the signal
GONE_S = 3.0  # the trainers' exit after serve's


def config(tmp_path: Path, dataset: Path, name: str = "sig", **keys) -> Path:
    """Endless epochs unless ``keys`` say otherwise."""
    keys = {"batch_size": 500, "epochs": 0, "ranks": RANKS, **keys}
    return servekit.write_config(
        tmp_path / f"{name}.yaml", dataset=str(dataset),
        outputs={"x": {"columns": ["f000..f007"], "transforms": [{"fill_null": 0}]},
                 "id": "id"},
        **keys,
    )  # fmt: skip


def wait_for(paths: list[Path], timeout: float, what: str, procs: list[servekit.Child]) -> None:
    deadline = time.monotonic() + timeout
    while not all(p.exists() for p in paths):
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not within {timeout} s\n" +
                                 "\n".join(p.describe() for p in procs))  # fmt: skip
        time.sleep(0.02)


def stop(serve: servekit.Serve, sig: int, shm_dir: Path) -> float:
    """Signals serve; checks a clean exit; returns when it exited (monotonic)."""
    t0 = time.monotonic()
    serve.signal(sig)
    rc = serve.wait(timeout=EXIT_S + 5)
    took = time.monotonic() - t0
    exited = time.monotonic()
    servekit.assert_no_panic(serve.stderr)
    assert rc == 0, f"serve exited {rc} on {signal.Signals(sig).name}\n{serve.describe()}"
    assert took < EXIT_S, f"serve took {took:.2f} s to exit on {signal.Signals(sig).name}"
    assert servekit.segments(shm_dir) == [], f"segments left: {servekit.segments(shm_dir)}"
    return exited


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_while_trainers_read(group, gen_dataset, tmp_path, shm_dir, sig):
    cfg = config(tmp_path, gen_dataset)
    job = "sig-" + uuid.uuid4().hex[:12]
    ready = [tmp_path / f"ready{r}" for r in range(RANKS)]
    consumers = [group.consume(job, r, f"r{r}", "--keep", "none", "--ready", str(ready[r]),
                               "--slow", "0.002", "--batch-timeout", "30")
                 for r in range(RANKS)]  # fmt: skip
    serve = group.serve(cfg, job)
    wait_for(ready, 20, "a first batch on every rank", [serve, *consumers])
    time.sleep(0.3)  # well inside the read loops
    exited = stop(serve, sig, shm_dir)
    for c in consumers:
        res = c.result(timeout=GONE_S + 5)
        assert res.end in ("gone", "stream_end"), f"{c.name} ended with {res.end!r}"
        assert res.meta["ended_at"] - (time.time() - (time.monotonic() - exited)) < GONE_S, (
            f"{c.name} took too long to notice"
        )
        positions = [(b["epoch"], b["step"]) for b in res.batches]
        assert len(positions) > 1
        steps = positions[0][1] + len(positions)
        epoch0 = positions[0][0]
        # One rank's stream is consecutive steps, epoch after epoch.
        for (e1, s1), (e2, s2) in zip(positions, positions[1:], strict=False):
            assert (e2, s2) == (e1, s1 + 1) or (e2 == e1 + 1 and s2 == 0), (e1, s1, e2, s2)
        assert epoch0 == 0 and steps > 0


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_while_rings_are_full_and_nobody_reads(group, gen_dataset, tmp_path, shm_dir,
                                                      sig):  # fmt: skip
    cfg = config(tmp_path, gen_dataset, ring_depth=2)
    serve = group.serve(cfg, "sig-" + uuid.uuid4().hex[:12])
    deadline = time.monotonic() + 10
    while len(servekit.segments(shm_dir)) < RANKS:
        assert serve.running() and time.monotonic() < deadline, serve.describe()
        time.sleep(0.02)
    time.sleep(0.5)  # rings full, the producer waiting for trainers
    stop(serve, sig, shm_dir)


def test_a_second_serve_of_a_running_job_is_refused(group, gen_dataset, tmp_path, shm_dir):
    cfg = config(tmp_path, gen_dataset)
    job = "sig-" + uuid.uuid4().hex[:12]
    first = group.serve(cfg, job)
    deadline = time.monotonic() + 10
    while len(servekit.segments(shm_dir)) < RANKS:
        assert first.running() and time.monotonic() < deadline, first.describe()
        time.sleep(0.02)
    before = servekit.segments(shm_dir)
    second = group.serve(cfg, job)
    rc = second.wait(timeout=10)
    servekit.assert_no_panic(second.stderr)
    assert rc != 0, f"two producers of one job\n{second.describe()}"
    assert job in second.stderr, second.stderr
    assert first.running(), first.describe()
    assert servekit.segments(shm_dir) == before
    # The first still serves.
    consumer = group.consume(job, 1, "late", "--keep", "none", "--max-batches", "5")
    res = consumer.result(timeout=20)
    assert res.end == "max" and len(res.batches) == 5
    stop(first, signal.SIGTERM, shm_dir)


def test_sigkill_mid_stream_is_reported_and_a_restart_takes_over(group, gen_dataset, tmp_path,
                                                                  shm_dir):  # fmt: skip
    """kill -9 leaves its segments; trainers still learn of it within 2 s, and a new serve
    of the same job starts over them and serves the whole stream."""
    cfg = config(tmp_path, gen_dataset)
    job = "sig-" + uuid.uuid4().hex[:12]
    ready = [tmp_path / f"ready{r}" for r in range(RANKS)]
    consumers = [group.consume(job, r, f"r{r}", "--keep", "none", "--ready", str(ready[r]),
                               "--slow", "0.005", "--batch-timeout", "30")
                 for r in range(RANKS)]  # fmt: skip
    serve = group.serve(cfg, job)
    wait_for(ready, 20, "a first batch on every rank", [serve, *consumers])
    serve.signal(signal.SIGKILL)
    serve.wait(timeout=5)
    killed = time.time()
    for c in consumers:
        res = c.result(timeout=10)
        assert res.end == "gone", f"{c.name} ended with {res.end!r}"
        assert res.meta["ended_at"] - killed < 2.0, f"{c.name} took too long to notice"

    again = [group.consume(job, r, f"again{r}", "--keep", "none") for r in range(RANKS)]
    restarted = group.serve(cfg, job, "--drain-timeout", "20s", "--epochs", "1")
    results = servekit.wait_all(again, timeout=60)
    rc = restarted.wait(timeout=30)
    servekit.assert_no_panic(restarted.stderr)
    assert rc == 0, restarted.describe()
    steps = restarted.summary()["steps"]
    for res in results:
        assert res.end == "stream_end"
        assert [b["step"] for b in res.batches] == list(range(steps))
    assert servekit.segments(shm_dir) == []


@pytest.mark.parametrize("delay", [0.03, 0.1, 0.25])
def test_sigterm_during_start_up_leaves_nothing(group, gen_dataset, tmp_path, shm_dir, delay):
    """A signal at any point of start-up (config, dataset scan, filter counts, segment
    creation): no panic and no segment left, whatever the exit code."""
    cfg = config(tmp_path, gen_dataset, filter=[{"column": "s00", "op": "not_null"}])
    serve = group.serve(cfg, "sig-" + uuid.uuid4().hex[:12])
    time.sleep(delay)
    serve.signal(signal.SIGTERM)
    rc = serve.wait(timeout=EXIT_S)
    servekit.assert_no_panic(serve.stderr)
    assert rc in (0, -signal.SIGTERM), serve.describe()
    assert servekit.segments(shm_dir) == []
