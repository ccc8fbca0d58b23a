"""Fixtures: real producer processes, real shared memory, one private directory per test.

Binaries come from the repository's build/ (``make build``); a missing one fails the test
with that instruction rather than skipping it.
"""

from __future__ import annotations

import contextlib
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
PYTHON_ROOT = TESTS.parent
REPO = PYTHON_ROOT.parent.parent
BUILD = REPO / "build"
PYCONSUME = TESTS / "pyconsume.py"

RESULT_RE = re.compile(r"^rank=(\d+) batches=(\d+) rows=(\d+) crc32=([0-9a-f]{8})$")


def _binary(env: str | None, default: Path, what: str) -> Path:
    path = Path(os.environ[env]) if env and os.environ.get(env) else default
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.fail(f"{what} not found at {path}: run `make build` from {REPO}", pytrace=False)
    return path


@pytest.fixture(scope="session")
def shmloader_bin() -> Path:
    return _binary("SHMLOADER_BIN", BUILD / "bin" / "shmloader", "the Go producer")


@pytest.fixture(scope="session")
def c_consume() -> Path:
    return _binary(None, BUILD / "asan" / "shml-consume", "the C consumer (ASan build)")


@pytest.fixture(scope="session")
def library() -> None:
    import shmloader._lib

    try:
        shmloader._lib.lib()
    except shmloader.LibraryNotFound as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture
def job() -> str:
    return "py-" + uuid.uuid4().hex[:16]


@pytest.fixture
def shm_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="shmloader-test-", dir="/dev/shm"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def results(text: str) -> dict[int, str]:
    """rank -> the whole `rank=R batches=N rows=M crc32=X` line, from a process's stdout."""
    found = {}
    for line in text.splitlines():
        m = RESULT_RE.match(line.strip())
        if m:
            found[int(m.group(1))] = line.strip()
    return found


@dataclass
class Proc:
    """A child process whose stdout is read line by line in the background."""

    popen: subprocess.Popen[str]
    name: str
    lines: queue.Queue[str] = field(default_factory=queue.Queue)
    seen: list[str] = field(default_factory=list)
    stderr_path: Path | None = None

    def __post_init__(self) -> None:
        self._pump = threading.Thread(target=self._read, daemon=True)
        self._pump.start()

    def _read(self) -> None:
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            self.lines.put(line.rstrip("\n"))

    def expect(self, pattern: str, timeout: float) -> re.Match[str]:
        """Wait for a stdout line matching ``pattern``."""
        deadline = time.monotonic() + timeout
        rx = re.compile(pattern)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(
                    f"{self.name}: no line matching {pattern!r} in {timeout} s; "
                    f"got {self.seen[-5:]}; rc={self.popen.poll()}; stderr: {self.stderr()}"
                )
            try:
                line = self.lines.get(timeout=min(left, 0.2))
            except queue.Empty:
                continue
            self.seen.append(line)
            m = rx.search(line)
            if m:
                return m

    def drain(self) -> list[str]:
        """Lines read so far and not yet consumed by expect()."""
        out: list[str] = []
        while True:
            try:
                line = self.lines.get_nowait()
            except queue.Empty:
                return out
            self.seen.append(line)
            out.append(line)

    def finish(self, timeout: float) -> tuple[int, str]:
        """Wait for exit; (returncode, all of stdout)."""
        try:
            rc = self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait(timeout=5)
            raise AssertionError(
                f"{self.name} still running after {timeout} s; stderr: {self.stderr()}"
            ) from None
        self._pump.join(timeout=5)  # EOF follows the exit
        self.drain()
        return rc, "\n".join(self.seen)

    def stderr(self) -> str:
        if self.stderr_path and self.stderr_path.exists():
            return self.stderr_path.read_text(errors="replace")[-3000:]
        return ""

    def kill(self) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=5)


class Spawner:
    """Starts processes for one test and kills whatever is left at teardown."""

    def __init__(self, shm_dir: Path, tmp: Path) -> None:
        self.shm_dir = shm_dir
        self.tmp = tmp
        self.procs: list[Proc] = []
        self.env = dict(os.environ)
        self.env["SHMLOADER_SHM_DIR"] = str(shm_dir)
        self.env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(PYTHON_ROOT), os.environ.get("PYTHONPATH")) if p
        )
        self.env["PYTHONUNBUFFERED"] = "1"

    def start(self, name: str, argv: list[str]) -> Proc:
        stderr_path = self.tmp / f"{name}.{len(self.procs)}.stderr"
        with open(stderr_path, "w") as err:
            popen = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
                env=self.env,
            )
        proc = Proc(popen, name, stderr_path=stderr_path)
        self.procs.append(proc)
        return proc

    def python(self, name: str, *args: str) -> Proc:
        return self.start(name, [sys.executable, str(PYCONSUME), *args])

    def close(self) -> None:
        for proc in self.procs:
            proc.kill()


@pytest.fixture
def spawn(shm_dir: Path, tmp_path: Path) -> Iterator[Spawner]:
    spawner = Spawner(shm_dir, tmp_path)
    yield spawner
    spawner.close()


@pytest.fixture
def produce(spawn: Spawner, shmloader_bin: Path, job: str, library: None):
    """Start ``shmloader debug-produce`` for this test's job and directory."""

    def start(
        *,
        ranks: int = 1,
        depth: int = 8,
        rows: int = 4,
        row_bytes: int = 32,
        batches: int = 5,
        epochs: int = 1,
        seed: int = 1,
        interval_us: int = 0,
        drain_timeout: str = "20s",
        job_name: str | None = None,
    ) -> Proc:
        argv = [
            str(shmloader_bin),
            "debug-produce",
            "--job", job_name or job,
            "--dir", str(spawn.shm_dir),
            "--ranks", str(ranks),
            "--depth", str(depth),
            "--rows", str(rows),
            "--row-bytes", str(row_bytes),
            "--batches", str(batches),
            "--epochs", str(epochs),
            "--seed", str(seed),
            "--interval-us", str(interval_us),
            "--drain-timeout", drain_timeout,
            "--quiet",
        ]  # fmt: skip
        return spawn.start("producer", argv)

    return start


# -- `shmloader serve` tests (test_serve_*.py) ---------------------------------------------


@pytest.fixture(scope="session")
def gen_dataset(shmloader_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`shmloader gen` output (2 files × 10 row groups × 1000 rows), made once per session."""
    import servekit

    out = tmp_path_factory.mktemp("serve-data") / "gen"
    proc = subprocess.run(
        [str(shmloader_bin), "gen", "--out", str(out), *servekit.GEN_FLAGS],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    if proc.returncode != 0:
        pytest.fail(f"shmloader gen failed ({proc.returncode}): {proc.stderr}", pytrace=False)
    return out


@pytest.fixture
def group(shmloader_bin: Path, shm_dir: Path, tmp_path: Path, library: None):
    """A servekit.Group for this test's shm_dir: kills its processes at the end."""
    import servekit

    with servekit.Group(shmloader_bin, shm_dir, tmp_path) as g:
        yield g
