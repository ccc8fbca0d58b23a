"""The wheel `make wheel` builds (the test builds it), installed alone into a fresh
virtual environment.

With only that environment (no $SHMLOADER_BIN or $SHMLOADER_LIB, no PYTHONPATH, the
working directory outside the repository, $PATH = the environment's bin and the system's),
its `shmloader` command reports the version the package does, generates a dataset and
serves it, and its `shmloader` package reads every batch: the wheel holds the package, the
C library and the producer, and nothing is borrowed from the source tree.

numpy, the package's only dependency, comes from the package index through pip.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import servekit
from conftest import REPO

import shmloader

DIST = REPO / "build" / "dist"
ROWS = 4000
BATCH = 500  # 8 row groups of 500 rows: one partition, 8 global batches, no row dropped
RANKS = 2

READER = """\
import json, sys
import numpy as np
import shmloader

job, rank, shm_dir, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
ids, batches = [], 0
with shmloader.attach(job, rank, dir=shm_dir, timeout=30.0) as loader:
    for batch in loader:  # to the end of the stream
        assert batch["features"].shape == (batch.rows, 4), batch["features"].shape
        ids.append(np.array(batch["id"]))
        batches += 1
np.save(out, np.concatenate(ids))
print(json.dumps({"batches": batches, "rows": sum(len(i) for i in ids)}))
"""

PROBE = """\
import json, os, shutil
import shmloader, shmloader._binary, shmloader._lib
binary = shmloader._binary.find_binary()
print(json.dumps({
    "version": shmloader.__version__,
    "package": shmloader.__file__,
    "library": shmloader._lib.lib()._name,
    "binary": binary,
    "binary_executable": os.access(binary, os.X_OK),
    "command": shutil.which("shmloader"),
}))
"""


@pytest.fixture(scope="module")
def wheel() -> Path:
    """A wheel built now, from this tree, by `make wheel` (a few seconds with a warm build)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    built = subprocess.run(["make", "-C", str(REPO), "--no-print-directory", "wheel"],
                           capture_output=True, text=True, timeout=600, env=env)  # fmt: skip
    assert built.returncode == 0, (
        f"make wheel failed:\n{built.stdout[-3000:]}\n{built.stderr[-3000:]}"
    )
    found = sorted(DIST.glob("shmloader-*.whl"))
    assert len(found) == 1, f"want one wheel in {DIST}, found {found}"
    return found[0]


def test_wheel_contents(wheel: Path) -> None:
    assert wheel.name.endswith("-py3-none-linux_x86_64.whl"), wheel.name
    with zipfile.ZipFile(wheel) as z:
        infos = {i.filename: i for i in z.infolist()}
        dist_info = f"shmloader-{shmloader.__version__}.dist-info"
        assert f"{dist_info}/entry_points.txt" in infos, "the wheel is of another version"
        scripts = z.read(f"{dist_info}/entry_points.txt").decode()
    for name in ("__init__.py", "_binary.py", "_cli.py", "py.typed", "libshmloader.so",
                 "bin/shmloader"):  # fmt: skip
        assert f"shmloader/{name}" in infos, f"{wheel.name} lacks shmloader/{name}"
    mode = infos["shmloader/bin/shmloader"].external_attr >> 16
    assert mode & 0o111, f"shmloader/bin/shmloader has mode {oct(mode)} in the wheel"
    assert re.search(r"^shmloader = shmloader\._cli:main$", scripts, re.M), scripts


def test_wheel_in_fresh_venv(wheel: Path, tmp_path: Path, shm_dir: Path, job: str) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=60)
    py = venv / "bin" / "python"
    pip = subprocess.run(
        [str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         "--no-input", str(wheel)],
        capture_output=True, text=True, timeout=120, env=_pip_env(),
    )  # fmt: skip
    assert pip.returncode == 0, f"pip install {wheel.name}:\n{pip.stdout}\n{pip.stderr}"

    env = _isolated_env(venv)
    work = tmp_path / "work"
    work.mkdir()

    def run(*argv: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(argv), cwd=work, env=env, capture_output=True, text=True,
                              timeout=timeout)  # fmt: skip

    probe = run(str(py), "-c", PROBE)
    assert probe.returncode == 0, probe.stderr
    got = json.loads(probe.stdout)
    assert got["version"] == shmloader.__version__
    for key in ("package", "library", "binary", "command"):
        assert got[key] and Path(got[key]).is_relative_to(venv), f"{key} outside the venv: {got}"
    assert Path(got["binary"]).parent.parent == Path(got["package"]).parent, got
    assert got["binary_executable"], got
    assert Path(got["command"]) == venv / "bin" / "shmloader", got

    version = run("shmloader", "--version")
    assert version.returncode == 0, version.stderr
    assert re.fullmatch(
        rf"shmloader {re.escape(shmloader.__version__)} \(ring protocol \d+, C ABI \d+, "
        r"plan \d+, cache format \d+, tzdata \d{4}[a-z]\)\n",
        version.stdout,
    ), version.stdout
    # The command is the binary itself: its exit statuses come through unchanged.
    assert run("shmloader", "no-such-command").returncode == 2
    printed = run("shmloader", "serve", "--print-config")
    assert printed.returncode == 0 and "batch_size:" in printed.stdout, printed.stderr

    data = work / "data"
    gen = run("shmloader", "gen", "--out", str(data), "--rows", str(ROWS), "--files", "2",
              "--row-group-rows", "500", "--features", "4", "--categoricals", "1",
              "--strings", "1", "--quiet", timeout=60)  # fmt: skip
    assert gen.returncode == 0, gen.stderr

    config = servekit.write_config(
        work / "serve.yaml", dataset=str(data), batch_size=BATCH, seed=5, epochs=1,
        ranks=RANKS, outputs={
            "features": {"columns": ["f000..f003"], "dtype": "float32",
                         "transforms": [{"fill_null": 0}]},
            "id": {"columns": "id"},
        },
    )  # fmt: skip
    (work / "reader.py").write_text(READER)
    out = work / "serve.out"
    err = work / "serve.err"
    with open(out, "wb") as o, open(err, "wb") as e:
        serve = subprocess.Popen(
            ["shmloader", "serve", "--config", str(config), "--dir", str(shm_dir),
             "--job", job, "--progress", "0"],
            cwd=work, env=env, stdin=subprocess.DEVNULL, stdout=o, stderr=e,
        )  # fmt: skip
    readers: list[subprocess.Popen[str]] = []
    try:
        # The console script execs the producer: the process started is the producer.
        exe = _exe_after_exec(serve.pid, py)
        assert exe == Path(got["binary"]).resolve(), exe
        readers = [
            subprocess.Popen(
                [str(py), "reader.py", job, str(r), str(shm_dir), str(work / f"ids{r}.npy")],
                cwd=work,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for r in range(RANKS)
        ]
        seen = []
        for r, reader in enumerate(readers):
            stdout, stderr = reader.communicate(timeout=60)
            assert reader.returncode == 0, f"reader of rank {r}:\n{stderr}"
            seen.append(json.loads(stdout))
        rc = serve.wait(timeout=30)
        assert rc == 0, f"serve exited {rc}:\n{err.read_text()}"
    finally:
        procs: list[subprocess.Popen[Any]] = [*readers, serve]
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(timeout=5)

    served = servekit.Serve(serve, "serve", out, err).results()
    assert sorted(served) == list(range(RANKS)), err.read_text()
    assert out.read_text() == "", "serve wrote to stdout"
    for r, got_r in enumerate(seen):
        assert (got_r["batches"], got_r["rows"]) == served[r], (r, got_r, served)
    assert [s["batches"] for s in seen] == [ROWS // BATCH // RANKS] * RANKS, seen
    ids = np.concatenate([np.load(work / f"ids{r}.npy") for r in range(RANKS)])
    np.testing.assert_array_equal(np.sort(ids), np.arange(ROWS))


def _pip_env() -> dict[str, str]:
    """The caller's environment (index and proxy settings) without the source tree's."""
    return {k: v for k, v in os.environ.items() if not _leaks(k)}


def _isolated_env(venv: Path) -> dict[str, str]:
    """Nothing of the source tree or of the test's own environment: the venv's bin first on
    a system $PATH, no SHMLOADER_* variables, no PYTHON* variables."""
    env = {k: v for k, v in os.environ.items() if not _leaks(k) and k != "PATH"}
    env["PATH"] = os.pathsep.join([str(venv / "bin"), os.defpath])
    return env


def _leaks(key: str) -> bool:
    return key.startswith(("SHMLOADER_", "PYTHON")) or key in ("VIRTUAL_ENV", "CONDA_PREFIX")


def _exe_after_exec(pid: int, python: Path, timeout: float = 10.0) -> Path:
    """/proc/PID/exe once the process no longer runs Python (the console script has
    exec'd what it runs)."""
    python = python.resolve()
    deadline = time.monotonic() + timeout
    while True:
        exe = Path(os.readlink(f"/proc/{pid}/exe"))
        if exe != python or time.monotonic() > deadline:
            return exe
        time.sleep(0.01)
