"""Another user on the host. Two unused uids stand for two users (setpriv runs each process
as one of them): the owner produces and trains; the other can neither read, remove nor
clean the owner's segments, and what it plants under the owner's names (a file, a
symbolic link) is never trusted: the owner's trainer (the C library) refuses it, the
owner's serve refuses to start over it, naming the file and its owner, and the file a link
points at is left as it was. The users run the binaries copied to a directory both can
reach (the checkout may not be); running processes as other users needs root, which this
suite has."""

from __future__ import annotations

import os
import pwd
import re
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import servekit

OUTPUTS = {"id": "id", "x": {"columns": ["f000..f003"], "transforms": [{"fill_null": 0}]}}
RANKS, BATCHES = 2, 40


def free_uids(n: int) -> list[int]:
    out: list[int] = []
    uid = 54320
    while len(out) < n:
        try:
            pwd.getpwuid(uid)
        except KeyError:
            out.append(uid)
        uid += 1
    return out


@pytest.fixture
def users(gen_dataset: Path, shmloader_bin: Path) -> Iterator[dict]:
    assert os.geteuid() == 0, "running processes as two other users needs root (setpriv)"
    owner, other = free_uids(2)
    base = Path(tempfile.mkdtemp(prefix="shmloader-users-"))
    shm = Path(tempfile.mkdtemp(prefix="shmloader-users-", dir="/dev/shm"))
    try:
        base.chmod(0o755)
        shm.chmod(0o1777)  # as /dev/shm: anyone creates, only a file's owner removes it
        for b in (shmloader_bin, shmloader_bin.parent / "shml-consume"):
            shutil.copy(b, base / b.name)
            (base / b.name).chmod(0o755)
        data = base / "data"
        shutil.copytree(gen_dataset, data)
        for p in [data, *data.iterdir()]:
            p.chmod(0o755 if p.is_dir() else 0o644)
        cfg = servekit.write_config(base / "c.yaml", dataset=str(data), batch_size=500,
                                    ranks=RANKS, outputs=OUTPUTS)  # fmt: skip
        cfg.chmod(0o644)
        yield {"owner": owner, "other": other, "shm": shm, "cfg": cfg, "base": base,
               "bin": base / "shmloader", "consume": base / "shml-consume"}  # fmt: skip
    finally:
        shutil.rmtree(shm, ignore_errors=True)
        shutil.rmtree(base, ignore_errors=True)


def as_user(uid: int, argv: list[str], *, timeout: float = 60) -> subprocess.CompletedProcess:
    cmd = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", *argv]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd="/")


def start_as_user(uid: int, argv: list[str]) -> subprocess.Popen:
    cmd = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", *argv]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/")


def test_another_user_cannot_read_remove_or_clean_a_jobs_segments(users: dict) -> None:
    owner, other, shm = users["owner"], users["other"], users["shm"]
    job = "u" + uuid.uuid4().hex[:8]
    prod = start_as_user(
        owner,
        [
            str(users["bin"]),
            "debug-produce",
            "--job",
            job,
            "--dir",
            str(shm),
            "--ranks",
            str(RANKS),
            "--batches",
            str(BATCHES),
            "--quiet",
        ],
    )
    try:
        segs = [shm / f"shmloader-{owner}-{job}-r{r}" for r in range(RANKS)]
        deadline = time.monotonic() + 20
        while not all(p.exists() for p in segs):
            assert time.monotonic() < deadline and prod.poll() is None, prod.communicate()
            time.sleep(0.02)
        for p in segs:
            st = p.stat()
            assert st.st_uid == owner and st.st_mode & 0o777 == 0o600, (p, oct(st.st_mode))
        for p in segs:
            read = as_user(other, ["cat", str(p)])
            assert read.returncode != 0 and "Permission denied" in read.stderr, read
            rm = as_user(other, ["rm", "-f", str(p)])
            assert rm.returncode != 0 and p.exists(), rm
        # The other user's own job names find nothing of the owner's (names carry the
        # uid), and its clean leaves them be.
        att = as_user(other, [str(users["consume"]), "--job", job, "--rank", "0", "--dir", str(shm),
                              "--timeout-ms", "300"])  # fmt: skip
        assert att.returncode != 0 and "rank=" not in att.stdout, att
        clean = as_user(other, [str(users["bin"]), "clean", "--dir", str(shm)])
        assert all(p.exists() for p in segs), f"the other user's clean removed segments: {clean}"
        # The owner's trainers read every batch, each row's payload checked by its CRC.
        for r in range(RANKS):
            got = as_user(
                owner,
                [
                    str(users["consume"]),
                    "--job",
                    job,
                    "--rank",
                    str(r),
                    "--dir",
                    str(shm),
                    "--timeout-ms",
                    "20000",
                ],
                timeout=60,
            )
            assert got.returncode == 0, got
            m = re.search(r"rank=(\d+) batches=(\d+)", got.stdout)
            assert m and int(m.group(2)) == BATCHES, got.stdout
        _, err = prod.communicate(timeout=30)
        assert prod.returncode == 0, err
    finally:
        if prod.poll() is None:
            prod.kill()
            prod.wait()
    assert sorted(os.listdir(shm)) == [], os.listdir(shm)


def test_what_another_user_plants_under_a_jobs_names_is_never_trusted(users: dict) -> None:
    owner, other, shm, base = users["owner"], users["other"], users["shm"], users["base"]
    job = "p" + uuid.uuid4().hex[:8]
    target = base / "owners-file"
    target.write_text("the owner's data\n")
    target.chmod(0o666)
    os.chown(target, owner, owner)
    planted = shm / f"shmloader-{owner}-{job}-r0"
    link = shm / f"shmloader-{owner}-{job}-r1"
    plant = as_user(
        other,
        [
            "sh",
            "-c",
            'head -c 4096 /dev/zero > "$1" && chmod 666 "$1" && ln -s "$3" "$2"',
            "plant",
            str(planted),
            str(link),
            str(target),
        ],
    )
    assert plant.returncode == 0, plant
    # The owner's trainer: neither the file nor the link is a segment of its own.
    for rank, what in ((0, "file"), (1, "link")):
        att = as_user(
            owner,
            [
                str(users["consume"]),
                "--job",
                job,
                "--rank",
                str(rank),
                "--dir",
                str(shm),
                "--timeout-ms",
                "300",
            ],
        )
        assert (
            att.returncode != 0
            and "SHML_EPERM" in att.stderr
            and "owned by this user" in att.stderr
        ), (what, att)
    # The owner's serve does not start over them, and says whose they are.
    run = as_user(
        owner,
        [
            str(users["bin"]),
            "serve",
            "--config",
            str(users["cfg"]),
            "--dir",
            str(shm),
            "--job",
            job,
            "--epochs",
            "1",
            "--quiet",
        ],
    )
    assert run.returncode == 1, run
    servekit.assert_no_panic(run.stderr)
    assert f"owned by uid {other}" in run.stderr and "another --dir" in run.stderr, run.stderr
    assert target.read_text() == "the owner's data\n", "the link's target was written"
    assert planted.read_bytes() == bytes(4096) and link.is_symlink()
    assert sorted(os.listdir(shm)) == sorted([planted.name, link.name]), os.listdir(shm)
