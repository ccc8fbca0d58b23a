"""No silent waits (RELIABILITY.md, "Waits and their bounds"), with real processes: serve
ends when its job does, a rank held back names its cause to its trainer, `status` and the
progress line, and trainers learn why serve stopped.

- a trainer that stops early: serve ends after detach_grace, exit 0, segments removed;
- loader.close(done=True): serve ends at once, exit 0; another rank's trainer gets
  ProducerGone(stop="done") after what was published;
- a rank that never attaches: serve exits 1 after start_grace naming it, and the
  attached trainer's ProducerGone says so;
- one missing rank with another attached: the attached one's Timeout, `shmloader status`
  and the progress line name the missing rank;
- SIGTERM and kill -9: the trainer's ProducerGone says which.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
import uuid
from pathlib import Path

import servekit


def config(tmp_path: Path, dataset: Path, name: str, **keys) -> Path:
    keys = {"batch_size": 500, **keys}
    return servekit.write_config(
        tmp_path / f"{name}.yaml", dataset=str(dataset),
        outputs={"x": {"columns": ["f000..f007"], "transforms": [{"fill_null": 0}]},
                 "id": "id"},
        **keys,
    )  # fmt: skip


def new_job(what: str) -> str:
    return f"{what}-{uuid.uuid4().hex[:10]}"


def exited_clean(serve: servekit.Serve, shm_dir: Path, timeout: float) -> float:
    """Waits for serve; checks exit 0 and no segment left; returns when it exited."""
    rc = serve.wait(timeout=timeout)
    at = time.monotonic()
    servekit.assert_no_panic(serve.stderr)
    assert rc == 0, f"serve exited {rc}\n{serve.describe()}"
    assert servekit.segments(shm_dir) == [], f"segments left: {servekit.segments(shm_dir)}"
    return at


def test_trainer_that_stops_early_ends_serve_after_the_grace(group, gen_dataset, tmp_path, shm_dir):
    """A loop that breaks (max steps) against epochs: 2: serve ends detach_grace after the
    trainer left, exit 0; not for ever."""
    job = new_job("early")
    serve = group.serve(
        config(tmp_path, gen_dataset, "early", epochs=2),
        job,
        "--detach-grace",
        "2s",
        "--progress",
        "500ms",
    )
    trainer = group.consume(job, 0, "early", "--max-batches", "5")
    res = trainer.result(timeout=30)
    assert res.end == "max" and len(res.batches) == 5, res.meta
    left = time.monotonic()
    exited = exited_clean(serve, shm_dir, timeout=30)
    assert 1.5 <= exited - left <= 8, (
        f"serve ended {exited - left:.1f} s after the trainer, grace 2 s"
    )
    assert (
        "every trainer has detached (rank 0 at epoch 0 step 5 of 40); the job ends in 1s unless"
        in serve.stderr
    )
    assert (
        "the job is over: every trainer detached (rank 0 at epoch 0 step 5 of 40)" in serve.stderr
    ), serve.stderr
    assert "none attached within 2s (detach_grace)" in serve.stderr, serve.stderr


def test_a_job_read_to_its_end_says_nothing_of_detaching(group, gen_dataset, tmp_path, shm_dir):
    """At the normal end the trainers detach a moment before serve finishes: no countdown."""
    job = new_job("end")
    serve = group.serve(config(tmp_path, gen_dataset, "end", epochs=2, ranks=2), job)
    for res in [group.consume(job, r, f"r{r}", "--keep", "none") for r in range(2)]:
        assert res.result(timeout=30).end == "stream_end"
    exited_clean(serve, shm_dir, timeout=20)
    assert "detached" not in serve.stderr and "the job is over" not in serve.stderr, serve.stderr


def test_a_trainer_that_comes_back_within_the_grace_keeps_serve(
    group, gen_dataset, tmp_path, shm_dir
):
    job = new_job("back")
    serve = group.serve(
        config(tmp_path, gen_dataset, "back", epochs=1), job, "--detach-grace", "4s"
    )
    first = group.consume(job, 0, "first", "--max-batches", "3").result(timeout=30)
    assert first.end == "max", first.meta
    time.sleep(1.5)
    second = group.consume(job, 0, "second").result(timeout=30)
    assert second.end == "stream_end", second.meta
    assert [b["step"] for b in second.batches] == list(range(3, 40)), "the rest of the stream, once"
    exited_clean(serve, shm_dir, timeout=20)
    assert "the job is over" not in serve.stderr, "it ended at the stream's end, not for idleness"


def test_close_done_ends_serve_once_no_trainer_reads(group, gen_dataset, tmp_path, shm_dir):
    """Endless epochs, 2 ranks: rank 0 says done first; rank 1, slower, reads on
    undisturbed (one rank's done never cuts another off), and serve ends at once, exit 0,
    when rank 1 leaves (no grace)."""
    job = new_job("done")
    serve = group.serve(config(tmp_path, gen_dataset, "done", epochs=0, ranks=2), job)
    ready = tmp_path / "ready-other"
    other = group.consume(
        job,
        1,
        "other",
        "--keep",
        "none",
        "--max-batches",
        "60",
        "--slow",
        "0.02",
        "--ready",
        str(ready),
    )
    deadline = time.monotonic() + 30
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    done = group.consume(job, 0, "done", "--max-batches", "4", "--done").result(timeout=30)
    assert done.end == "max", done.meta
    res = other.result(timeout=30)
    assert res.end == "max" and len(res.batches) == 60, res.meta
    left = time.monotonic()
    exited = exited_clean(serve, shm_dir, timeout=20)
    assert exited - left < 3, f"serve took {exited - left:.1f} s to end after the last trainer left"
    assert (
        "rank 0's trainer says the job is done: it ends once rank 1's trainer detaches"
        in serve.stderr
    )
    assert "the job is done: rank 0's trainer said so; segments removed" in serve.stderr, (
        serve.stderr
    )


def test_a_rank_that_never_attaches_ends_serve_after_the_start_grace(
    group, gen_dataset, tmp_path, shm_dir
):
    job = new_job("never")
    serve = group.serve(
        config(tmp_path, gen_dataset, "never", ranks=2, epochs=0), job, "--start-grace", "3s"
    )
    trainer = group.consume(job, 0, "rank0", "--keep", "none", "--batch-timeout", "60")
    rc = serve.wait(timeout=30)
    servekit.assert_no_panic(serve.stderr)
    assert rc == 1, f"serve exited {rc}, want 1\n{serve.describe()}"
    assert (
        "rank 1 never had a trainer within 3s of the start (start_grace, --start-grace)"
        in serve.stderr
    )
    assert re.search(
        r"rank 1 has no trainer yet; serve exits in \d+s unless one attaches \(start_grace\)",
        serve.stderr,
    ), serve.stderr
    assert servekit.segments(shm_dir) == []
    res = trainer.result(timeout=20)
    assert res.end == "gone" and res.meta["stop"] == "unattached", res.meta
    assert "rank 1 never had a trainer" in res.meta["reason"], res.meta


def test_a_missing_rank_is_named_by_the_other_ranks_timeout_status_and_progress(
        group, gen_dataset, tmp_path, shm_dir, shmloader_bin):  # fmt: skip
    """ranks: 2 with one trainer: rank 0 runs ahead until the decoded windows are all
    rank 1's; its Timeout, `status` and serve's progress line say rank 1 has no trainer."""
    job = new_job("missing")
    cfg = config(tmp_path, gen_dataset, "missing", ranks=2, epochs=3, partitions=2,
                 shuffle={"window": 1}, ring_depth=2)  # fmt: skip
    serve = group.serve(cfg, job, "--progress", "1s", "--start-grace", "none")
    trainer = group.consume(job, 0, "rank0", "--keep", "none", "--batch-timeout", "6")
    status = None
    deadline = time.monotonic() + 30
    while trainer.running() and time.monotonic() < deadline:
        out = subprocess.run([str(shmloader_bin), "status", job, "--json", "--dir", str(shm_dir)],
                             capture_output=True, text=True, timeout=10)  # fmt: skip
        if out.returncode == 0:
            snap = json.loads(out.stdout)
            waits = snap["rings"][0].get("waits", "")
            if waits:
                status = waits
        time.sleep(0.5)
    res = trainer.result(timeout=30)
    assert res.end == "timeout", res.meta
    assert 0 < len(res.batches) < 60, f"rank 0 read {len(res.batches)} batches before it waited"
    assert "rank 0 waits: rank 1 has had no trainer for" in res.meta["message"], res.meta
    assert res.meta["reason"].startswith("rank 0 waits: rank 1 has had no trainer"), res.meta
    assert status is not None and "rank 1 has had no trainer" in status, f"status said {status!r}"
    assert "rank 0 waits: rank 1 has had no trainer" in serve.stderr, serve.stderr
    serve.signal(signal.SIGTERM)
    exited_clean(serve, shm_dir, timeout=20)


def test_signal_and_kill_are_told_apart(group, gen_dataset, tmp_path, shm_dir):
    job = new_job("term")
    serve = group.serve(config(tmp_path, gen_dataset, "term", epochs=0), job)
    trainer = group.consume(job, 0, "term", "--keep", "none", "--ready", str(tmp_path / "ready"))
    deadline = time.monotonic() + 30
    while not (tmp_path / "ready").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    serve.signal(signal.SIGTERM)
    exited_clean(serve, shm_dir, timeout=20)
    res = trainer.result(timeout=20)
    assert (
        res.end == "gone"
        and res.meta["stop"] == "signal"
        and res.meta["reason"] == "stopped by SIGTERM"
    )
    assert "the producer was stopped: stopped by SIGTERM" in res.meta["message"], res.meta

    job = new_job("kill")
    serve = group.serve(config(tmp_path, gen_dataset, "kill", epochs=0), job)
    ready = tmp_path / "ready2"
    trainer = group.consume(job, 0, "kill", "--keep", "none", "--ready", str(ready))
    deadline = time.monotonic() + 30
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    serve.kill()
    res = trainer.result(timeout=20)
    assert res.end == "gone" and res.meta["stop"] == "died" and res.meta["reason"] is None, res.meta
    assert f"shmloader clean {job}" in res.meta["message"], res.meta


def test_a_stopped_trainer_is_named_by_the_other_ranks_timeout(
    group, gen_dataset, tmp_path, shm_dir
):
    """Rank 1's trainer is stopped (SIGSTOP): it holds its rank, and rank 0, once ahead,
    is told so, with its pid."""
    job = new_job("stopped")
    cfg = config(tmp_path, gen_dataset, "stopped", ranks=2, epochs=3, partitions=2,
                 shuffle={"window": 1}, ring_depth=2)  # fmt: skip
    serve = group.serve(cfg, job)
    ready = tmp_path / "ready1"
    slow = group.consume(job, 1, "rank1", "--keep", "none", "--ready", str(ready), "--slow", "0.2")
    deadline = time.monotonic() + 30
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    slow.signal(signal.SIGSTOP)
    try:
        res = group.consume(job, 0, "rank0", "--keep", "none", "--batch-timeout", "5").result(
            timeout=40
        )
    finally:
        slow.signal(signal.SIGCONT)
    assert res.end == "timeout", res.meta
    want = f"rank 0 waits: rank 1's trainer (pid {slow.popen.pid}) has taken no batch for"
    assert want in res.meta["message"], res.meta
    slow.kill()
    serve.signal(signal.SIGTERM)
    exited_clean(serve, shm_dir, timeout=20)
