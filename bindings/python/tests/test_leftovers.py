"""A `shmloader serve` killed with SIGKILL leaves its job's files; everything that finds
no live producer for the job says so and names the command that removes them: `status`
lists the job as dead, `status JOB` exits 1, and `attach` times out naming them. `clean`
removes exactly those files when named (after a dry run, or another job's name, removes
nothing), and never touches a live job named to it. Each step is checked against the
files present before and after it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest
import servekit

import shmloader


def size_text(n: int) -> str:
    """Bytes as the shmloader command prints them: 812 B, 36.0 KiB, 24.0 MiB."""
    if n < 1024:
        return f"{n} B"
    value, units = n / 1024, ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
    while value >= 1024 and len(units) > 1:
        value, units = value / 1024, units[1:]
    return f"{value:.1f} {units[0]}"


def test_a_killed_serve_is_named_with_its_files_and_cleaned(
    group, gen_dataset: Path, tmp_path: Path, shm_dir: Path, shmloader_bin: Path, monkeypatch
) -> None:
    monkeypatch.delenv("SHMLOADER_SHM_DIR", raising=False)  # the hints name --dir, always
    env = {k: v for k, v in os.environ.items() if k != "SHMLOADER_SHM_DIR"}
    uid = os.getuid()
    job, other, nothing = (f"{w}-{uuid.uuid4().hex[:8]}" for w in ("killed", "live", "never"))
    cfg = servekit.write_config(tmp_path / "c.yaml", dataset=str(gen_dataset), batch_size=100,
                                epochs=0, ranks=2, outputs={"id": "id"})  # fmt: skip
    doomed = group.serve(cfg, job)
    alive = group.serve(cfg, other, "--ranks", "1")

    def read_one(name: str, rank: int) -> None:
        with shmloader.attach(name, rank, dir=shm_dir, timeout=30, batch_timeout=30) as loader:
            batch = loader.next()
            assert batch is not None and batch["id"].shape == (100,)
            batch.release()

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(shmloader_bin), *args], capture_output=True, text=True,
                              timeout=60, env=env)  # fmt: skip

    def files() -> dict[str, int]:
        """Every file and its size, but the live serve's status file, which it rewrites
        (through a temporary file) every second."""
        live_status = f"shmloader-{uid}-{other}.status"
        return {p.name: p.lstat().st_size for p in shm_dir.iterdir()
                if p.name != live_status and not p.name.startswith(f".{live_status}.")}  # fmt: skip

    read_one(job, 1)
    read_one(other, 0)
    status_file = shm_dir / f"shmloader-{uid}-{job}.status"
    deadline = time.monotonic() + 10
    while not status_file.exists():
        assert time.monotonic() < deadline, "serve wrote no status file"
        time.sleep(0.05)
    pid = doomed.popen.pid
    doomed.signal(signal.SIGKILL)
    doomed.wait(timeout=10)

    before = files()
    mine = (f"shmloader-{uid}-{job}", f".shmloader-{uid}-{job}.status.")
    left = {n: s for n, s in before.items() if n.startswith(mine)}
    names = {f"shmloader-{uid}-{job}{end}" for end in ("-r0", "-r1", ".lock", ".status")}
    # Its rings, lock and status file, and perhaps a status file it was writing.
    assert names <= set(left) and len(left) <= len(names) + 1, left
    count, size = len(left), size_text(sum(left.values()))
    hint = f"shmloader clean {job} --dir {shm_dir}"

    # status: the live job, then the dead one with its files and the command.
    out = cli("status", "--dir", str(shm_dir))
    assert out.returncode == 0, out
    live_row, dead_row = out.stdout.splitlines()[1], out.stdout.splitlines()[-1]
    assert live_row.split()[:3] == [other, str(alive.popen.pid), "1"], out.stdout
    assert f"left by dead producers in {shm_dir}:" in out.stdout, out.stdout
    assert dead_row.split()[:3] == [job, str(pid), str(count)], out.stdout
    assert dead_row.endswith(f"{size}  {hint}"), out.stdout
    listing = json.loads(cli("status", "--dir", str(shm_dir), "--json").stdout)
    by_job = {e["job"]: e for e in listing}
    assert set(by_job) == {job, other} and by_job[other]["state"] == "live", listing
    dead = by_job[job]
    assert (dead["state"], dead["pid"], dead["ranks"]) == ("dead", pid, [0, 1]), dead
    assert dead["clean"] == hint, dead
    assert {Path(f["path"]).name: f["size"] for f in dead["files"]} == left, dead
    assert dead["bytes"] == sum(left.values())
    assert files() == before

    # status JOB: exit 1, naming the files and the command.
    out = cli("status", job, "--dir", str(shm_dir), "--once")
    assert out.returncode == 1 and out.stdout == "", out
    assert out.stderr == (
        f'shmloader status: job "{job}": its producer (pid {pid}) is dead; it left {count} files '
        f"({size}) in {shm_dir}: {hint} removes them\n"
    ), out.stderr
    assert files() == before

    # attach: a Timeout, whose message names them and the command.
    start = time.monotonic()
    with pytest.raises(shmloader.Timeout) as info:
        shmloader.attach(job, 0, dir=shm_dir, timeout=0.5)
    assert time.monotonic() - start < 2.5
    text = str(info.value)
    assert info.value.code_name == "SHML_ETIMEOUT", text
    assert (
        f"no live producer for job {job!r} in {shm_dir} after 0.5 s; its producer (pid {pid}) is "
        f"dead; it left {count} files ({size}): {hint} removes them; live jobs here: {other} "
    ) in text, text
    assert files() == before

    # clean --dry-run lists every file with its size and removes none.
    out = cli("clean", job, "--dry-run", "--dir", str(shm_dir))
    assert out.returncode == 0, out
    listed = [line for line in out.stdout.splitlines() if line.startswith("would remove ")]
    want = [f"would remove {shm_dir / n} ({size_text(s)})" for n, s in left.items()]
    assert sorted(listed) == sorted(want), out.stdout
    assert files() == before

    # clean of a job with nothing left: says so, removes nothing.
    out = cli("clean", nothing, "--dir", str(shm_dir))
    assert out.returncode == 0 and f'job "{nothing}": nothing left in {shm_dir}' in out.stdout, out
    assert files() == before

    # clean of a live job: exit 3, its pid named, nothing removed, and it still serves.
    out = cli("clean", other, "--dir", str(shm_dir))
    assert out.returncode == 3, out
    said = f'job "{other}": served by a live producer (pid {alive.popen.pid}): left alone'
    assert said in out.stdout, out
    assert files() == before
    read_one(other, 0)
    assert alive.running(), alive.describe()

    # clean JOB: exactly the killed serve's files go.
    out = cli("clean", job, "--dir", str(shm_dir))
    assert out.returncode == 0 and f"clean: {count} stale file(s)" in out.stdout, out
    assert files() == {n: s for n, s in before.items() if n not in left}
    assert (shm_dir / f"shmloader-{uid}-{other}.status").exists()
    out = cli("status", "--dir", str(shm_dir), "--json")
    assert [e["job"] for e in json.loads(out.stdout)] == [other], out.stdout
    read_one(other, 0)
