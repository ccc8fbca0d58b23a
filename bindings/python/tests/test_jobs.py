"""shmloader._jobs.live_jobs and what attach says when no live producer serves its job:
against a real `shmloader serve`, files a killed producer left behind, and an empty
directory. Listing only asks the kernel: the producer keeps its lock and goes on serving.
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from pathlib import Path

import pytest
import servekit

import shmloader
from shmloader._jobs import LiveJob, live_jobs


def wait_for_rings(shm_dir: Path, job: str, ranks: int, timeout: float) -> list[LiveJob]:
    deadline = time.monotonic() + timeout
    while True:
        jobs = live_jobs(shm_dir)
        if any(j.name == job and len(j.ranks) == ranks for j in jobs):
            return jobs
        assert time.monotonic() < deadline, f"{job} not live with {ranks} rings: {jobs}"
        time.sleep(0.05)


def test_attach_to_a_misspelled_job_names_the_live_ones(group, gen_dataset, shm_dir, tmp_path):
    job = "train-" + uuid.uuid4().hex[:8]
    typo = "trian-" + job[len("train-") :]
    cfg = servekit.write_config(tmp_path / "c.yaml", dataset=str(gen_dataset), batch_size=100,
                                epochs=0, ranks=2, outputs={"id": "id"})  # fmt: skip
    serve = group.serve(cfg, job)
    # What a killed producer leaves: a lock file nobody holds, and its segments.
    uid = os.getuid()
    (shm_dir / f"shmloader-{uid}-dead.lock").write_text("1\n")
    (shm_dir / f"shmloader-{uid}-dead-r0").write_bytes(b"")
    (shm_dir / f"shmloader-{uid + 1}-other.lock").write_text("1\n")  # another user's name

    jobs = wait_for_rings(shm_dir, job, 2, timeout=30)
    assert jobs == [LiveJob(job, (0, 1), serve.popen.pid)]
    assert str(jobs[0]) == f"{job} (ranks 0-1, pid {serve.popen.pid})"
    lock = shm_dir / f"shmloader-{uid}-{job}.lock"
    written = lock.read_bytes()

    start = time.monotonic()
    with pytest.raises(shmloader.Timeout) as info:
        shmloader.attach(typo, 0, timeout=0.5, dir=shm_dir)
    assert time.monotonic() - start < 2.5
    text = str(info.value)
    assert f"no live producer for job {typo!r} in {shm_dir} after 0.5 s" in text, text
    assert f"live jobs here: {job} (ranks 0-1, pid {serve.popen.pid})" in text, text
    assert f"did you mean job {job!r}?" in text, text
    assert "dead" not in text and "other" not in text, text

    # Asking took and broke nothing: the producer still holds its lock and serves.
    assert lock.read_bytes() == written
    assert live_jobs(shm_dir) == jobs
    with shmloader.attach(job, 1, dir=shm_dir, timeout=10) as loader:
        batch = loader.next(timeout=10)
        assert batch is not None and batch["id"].shape == (100,)
        batch.release()
    assert serve.running(), serve.describe()

    # kill -9: its files stay, its lock goes with it. Its ring is there, dead: attach
    # waits for a live producer all the same, and at the timeout names what is left.
    serve.signal(signal.SIGKILL)
    serve.wait(timeout=10)
    assert lock.exists()
    assert live_jobs(shm_dir) == []
    with pytest.raises(shmloader.Timeout) as gone:
        shmloader.attach(job, 0, timeout=0.3, dir=shm_dir)
    text = str(gone.value)
    assert f"its producer (pid {serve.popen.pid}) is dead; it left " in text, text
    hint = f"shmloader clean {job} --dir {shm_dir} removes them"
    assert f"{hint}; no job is being served in {shm_dir}" in text, text


def test_attach_in_an_empty_directory_says_nothing_is_served(shm_dir, library):
    assert live_jobs(shm_dir) == []
    assert live_jobs(shm_dir / "missing") == []
    with pytest.raises(shmloader.Timeout) as info:
        shmloader.attach("train", 0, timeout=0.2, dir=shm_dir)
    text = str(info.value)
    assert f"no live producer for job 'train' in {shm_dir} after 0.2 s" in text, text
    assert f"no job is being served in {shm_dir}" in text, text


def test_a_dead_producers_pid_is_read_from_its_segment_header(shm_dir, job):
    """With no pid in a lock file, the segment header of this protocol version names it;
    a header of another version is not read."""
    from shmloader import _jobs, _lib

    def header(version: int) -> bytes:
        h = bytearray(4096)
        h[:8] = b"SHMLRING"
        h[8:12] = version.to_bytes(4, "little")
        h[44:48] = (0).to_bytes(4, "little")  # rank 0
        h[52:56] = (4242).to_bytes(4, "little")  # producer_pid
        h[80 : 80 + len(job)] = job.encode()
        return bytes(h)

    path = shm_dir / f"shmloader-{os.getuid()}-{job}-r0"
    ours = _lib.lib().shml_protocol_version()
    path.write_bytes(header(ours))
    path.chmod(0o600)  # as serve creates them
    assert _jobs._segment(str(shm_dir), job, 0) == (False, 4242)
    path.write_bytes(header(ours - 1))
    assert _jobs._segment(str(shm_dir), job, 0) == (False, None)
