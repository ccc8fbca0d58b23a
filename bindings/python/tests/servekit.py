"""Helpers for the `shmloader serve` tests (test_serve_*.py): configs, the serve process,
consumer processes (serveconsume.py) and independent reference implementations of the
transforms (FNV-1a hash_bucket, float conversions) written from producer/transform/doc.go.

Every wait here has a timeout, and every process is started inside a :class:`Group`, whose
exit kills whatever is still running, so a bug fails a test instead of hanging it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

TESTS = Path(__file__).resolve().parent
PYTHON_ROOT = TESTS.parent
REPO = PYTHON_ROOT.parent.parent
CONSUME = TESTS / "serveconsume.py"
HASH_VECTORS = REPO / "producer" / "transform" / "testdata" / "hash_vectors.json"

SUMMARY_RE = re.compile(
    r"plan v2: (?P<partitions>\d+) partitions; node (?P<node>\d+)/(?P<nodes>\d+) serves "
    r"partitions [-0-9, ]+: (?P<node_rows>\d+) rows, in every epoch\n"
    r"serve: epoch: (?P<global>\d+) global batches of (?P<batch>\d+) rows over "
    r"(?P<world>\d+) trainers; (?:(?P<steps_lo>\d+) to )?(?P<steps>\d+) steps per rank; "
    r"(?:(?P<dropped>\d+) rows dropped \(drop_last\)|each partition's last batch may be short "
    r"\(drop_last: false\))"
)
RESULT_RE = re.compile(r"^rank=(\d+) batches=(\d+) rows=(\d+)$")
PANIC_RE = re.compile(r"panic:|goroutine \d+|runtime error")

# The synthetic dataset of the serve tests (conftest's gen_dataset): small enough for a
# 2-core machine, with several files and row groups so that shuffling, windows and
# multi-file reads all matter.
GEN_ROWS = 20_000
GEN_FLAGS = [
    "--rows", str(GEN_ROWS), "--files", "2", "--row-group-rows", "1000",
    "--features", "8", "--categoricals", "3", "--strings", "2", "--list-max", "12",
    "--null-fraction", "0.1", "--seed", "3", "--quiet",
]  # fmt: skip


# -- configs -------------------------------------------------------------------------------


def write_config(path: Path, **keys: Any) -> Path:
    """A serve config: one top-level key per line, each value in JSON flow style (which is
    YAML). ``node_rank=``/``node_count=`` become the ``node:`` mapping."""
    node = {}
    for k in ("node_rank", "node_count"):
        if k in keys:
            node[k.split("_")[1]] = keys.pop(k)
    if node:
        keys["node"] = node
    keys.setdefault("progress", 0)
    lines = [f"{key}: {json.dumps(value)}" for key, value in keys.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


# -- damaged files -------------------------------------------------------------------------


def flip_middle_of_chunk(path: Path, row_group: int, column: str, n: int = 16) -> int:
    """XOR ``n`` bytes in the middle of a column chunk (found from the footer); returns
    the file offset of the first."""
    import pyarrow.parquet as pq

    md = pq.ParquetFile(path).metadata
    rg = md.row_group(row_group)
    col = next(rg.column(i) for i in range(rg.num_columns) if rg.column(i).path_in_schema == column)
    start = col.data_page_offset
    if col.has_dictionary_page and col.dictionary_page_offset:
        start = min(start, col.dictionary_page_offset)
    mid = start + col.total_compressed_size // 2
    with open(path, "r+b") as f:
        f.seek(mid)
        raw = bytearray(f.read(n))
        f.seek(mid)
        f.write(bytes(b ^ 0xFF for b in raw))
    return mid


# -- processes -----------------------------------------------------------------------------


def child_env(shm_dir: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    if shm_dir is not None:
        env["SHMLOADER_SHM_DIR"] = str(shm_dir)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(PYTHON_ROOT), os.environ.get("PYTHONPATH")) if p
    )
    env["PYTHONUNBUFFERED"] = "1"
    env.setdefault("GOTRACEBACK", "all")
    return env


@dataclass
class Child:
    """A process whose stdout and stderr go to files."""

    popen: subprocess.Popen[bytes]
    name: str
    out_path: Path
    err_path: Path
    rc: int | None = None

    @property
    def stdout(self) -> str:
        return self.out_path.read_text(errors="replace")

    @property
    def stderr(self) -> str:
        return self.err_path.read_text(errors="replace")

    def running(self) -> bool:
        return self.popen.poll() is None

    def wait(self, timeout: float) -> int:
        """The exit code; kills the process and fails if it runs past ``timeout``."""
        try:
            self.rc = self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(
                f"{self.name} still running after {timeout} s\nstdout: {self.stdout[-2000:]}"
                f"\nstderr: {self.stderr[-3000:]}"
            ) from None
        return self.rc

    def signal(self, sig: int) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(sig)

    def kill(self) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=5)

    def describe(self) -> str:
        return (
            f"{self.name} rc={self.popen.poll()}\nstdout: {self.stdout[-2000:]}\n"
            f"stderr: {self.stderr[-3000:]}"
        )


C = TypeVar("C", bound=Child)


@dataclass
class Serve(Child):
    def summary(self) -> dict[str, int]:
        m = SUMMARY_RE.search(self.stderr)
        assert m, f"no start-up summary of the epoch in\n{self.stderr}"
        return {k: int(v or 0) for k, v in m.groupdict().items()}

    def results(self) -> dict[int, tuple[int, int]]:
        """rank -> (batches, rows), from the `rank=R batches=N rows=M` lines (on stderr:
        serve writes nothing to stdout)."""
        found = {}
        for line in self.stderr.splitlines():
            m = RESULT_RE.match(line.strip())
            if m:
                found[int(m.group(1))] = (int(m.group(2)), int(m.group(3)))
        return found


@dataclass
class Consumer(Child):
    prefix: Path = field(default=Path())

    def result(self, timeout: float) -> Result:
        rc = self.wait(timeout)
        if rc != 0:
            path = Path(f"{self.prefix}.json")
            end = json.loads(path.read_text()).get("end") if path.exists() else None
            raise AssertionError(f"consumer failed: {end}\n{self.describe()}")
        return Result.load(self.prefix)


class Group:
    """Starts the processes of one test; leaving the ``with`` block kills what is left."""

    def __init__(self, bin: Path, shm_dir: Path, tmp: Path) -> None:
        self.bin = bin
        self.shm_dir = shm_dir
        self.tmp = tmp
        self.children: list[Child] = []
        self.env = child_env(shm_dir)

    def __enter__(self) -> Group:
        return self

    def __exit__(self, *exc: object) -> None:
        for child in reversed(self.children):
            child.kill()

    def _files(self, name: str) -> tuple[Path, Path]:
        n = len(self.children)
        return self.tmp / f"{name}.{n}.stdout", self.tmp / f"{name}.{n}.stderr"

    def serve(self, config: Path, job: str, *flags: str, quiet: bool = False) -> Serve:
        argv = [str(self.bin), "serve", "--config", str(config), "--dir", str(self.shm_dir),
                "--job", job, *flags]  # fmt: skip
        if quiet:
            argv.append("--quiet")
        return self._spawn(Serve, "serve", "serve " + " ".join(argv[2:]), argv)

    def _spawn(self, cls: type[C], file: str, name: str, argv: Sequence[str], **kw: Any) -> C:
        """Starts argv with stdout and stderr in tmp/FILE.N.stdout and .stderr."""
        out, err = self._files(file)
        with open(out, "wb") as o, open(err, "wb") as e:
            popen = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=o, stderr=e,
                                     env=self.env)  # fmt: skip
        child = cls(popen, name, out, err, **kw)
        self.children.append(child)
        return child

    def run(self, argv: Sequence[str], timeout: float) -> Child:
        """Runs a command to its end."""
        child = self._spawn(Child, "cmd", " ".join(argv[:2]), argv)
        child.wait(timeout)
        return child

    def consume(self, job: str, rank: int, name: str, *args: str) -> Consumer:
        """Starts serveconsume.py; its results go to tmp/NAME.json and tmp/NAME.npz."""
        prefix = self.tmp / name
        argv = [sys.executable, str(CONSUME), "--job", job, "--rank", str(rank),
                "--dir", str(self.shm_dir), "--out", str(prefix), *args]  # fmt: skip
        return self._spawn(Consumer, name, f"consumer {name} (job {job} rank {rank})", argv,
                           prefix=prefix)  # fmt: skip

    def python(self, name: str, script: Path, *args: str) -> Child:
        """Starts a Python script of this directory with the tests' environment."""
        return self._spawn(Child, name, name, [sys.executable, str(script), *args])


def serve_in_order(bin: Path, tmp: Path, cfg: Path, name: str,
                   env: dict[str, str] | None = None) -> Result:  # fmt: skip
    """Serves cfg (one rank) to one consumer named name, in its own shared-memory dir;
    checks that serve exits 0 without a panic and the consumer reads to the stream's end;
    returns what the consumer read."""
    shm_dir = Path(tempfile.mkdtemp(prefix="shmloader-test-", dir="/dev/shm"))
    job = "ord-" + uuid.uuid4().hex[:12]
    try:
        with Group(bin, shm_dir, tmp) as g:
            g.env.update(env or {})
            consumer = g.consume(job, 0, name)
            proc = g.serve(cfg, job, "--drain-timeout", "20s")
            rc = proc.wait(timeout=60)
            assert_no_panic(proc.stderr)
            assert rc == 0, proc.describe()
            res = consumer.result(timeout=30)
    finally:
        shutil.rmtree(shm_dir, ignore_errors=True)
    assert res.end == "stream_end", res.end
    return res


@dataclass
class Result:
    """What one serveconsume.py process saw."""

    meta: dict[str, Any]
    tensors: dict[str, np.ndarray]

    @classmethod
    def load(cls, prefix: Path) -> Result:
        meta = json.loads(Path(f"{prefix}.json").read_text())
        tensors: dict[str, np.ndarray] = {}
        npz = Path(f"{prefix}.npz")
        if npz.exists():
            with np.load(npz) as z:
                tensors = {k: z[k] for k in z.files}
        return cls(meta, tensors)

    @property
    def batches(self) -> list[dict[str, Any]]:
        return self.meta["batches"]

    @property
    def end(self) -> str:
        return self.meta["end"]

    def stream(self) -> list[tuple[int, int, str]]:
        """(epoch, step, sha256) of every batch, in delivery order."""
        return [(b["epoch"], b["step"], b["sha"]) for b in self.batches]

    def epoch_rows(self, epoch: int, name: str = "id") -> np.ndarray:
        """The ``name`` tensor's rows of the batches of ``epoch`` (needs --keep all)."""
        sel = np.concatenate(
            [np.full(b["rows"], b["epoch"] == epoch) for b in self.batches] or [np.zeros(0, bool)]
        )
        return self.tensors[name][sel]


def stop_and_wait(child: Child) -> None:
    """SIGSTOP, then wait until every thread has stopped: kill(2) returns before a thread
    running on another CPU does."""
    child.signal(signal.SIGSTOP)
    tasks = Path(f"/proc/{child.popen.pid}/task")
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            states = [(t / "stat").read_text().rsplit(")", 1)[1].split()[0]
                      for t in tasks.iterdir()]  # fmt: skip
        except OSError:
            return  # it died
        if all(st in "tTZX" for st in states):
            return
        time.sleep(0.0002)
    raise AssertionError(f"{child.name}: not stopped 5 s after SIGSTOP")


def wait_all(consumers: Iterable[Consumer], timeout: float) -> list[Result]:
    deadline = time.monotonic() + timeout
    return [c.result(max(0.1, deadline - time.monotonic())) for c in consumers]


def segments(shm_dir: Path) -> list[str]:
    return sorted(p.name for p in shm_dir.iterdir())


def assert_no_panic(stderr: str) -> None:
    m = PANIC_RE.search(stderr)
    assert not m, f"the Go producer panicked or dumped goroutines:\n{stderr[-4000:]}"


# -- reference transforms ------------------------------------------------------------------

FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
M64 = (1 << 64) - 1


def fnv1a64(data: bytes, h: int = FNV_OFFSET) -> int:
    for b in data:
        h = ((h ^ b) * FNV_PRIME) & M64
    return h


def hash_bytes(seed: int, value: bytes) -> int:
    """FNV-1a-64(seed as 8 bytes LE ‖ value) as an unsigned integer."""
    return fnv1a64(value, fnv1a64((seed & M64).to_bytes(8, "little")))


def int_bytes(value: int) -> bytes:
    return (value & M64).to_bytes(8, "little")


def hash_bucket_value(value: str | bytes | int, buckets: int, seed: int = 0) -> int:
    if isinstance(value, str):
        raw = value.encode("utf-8")
    elif isinstance(value, bytes):
        raw = value
    else:
        raw = int_bytes(int(value))
    return hash_bytes(seed, raw) % buckets


def hash_bucket_column(values: Sequence[Any], buckets: int, seed: int = 0,
                       null: int = 0) -> np.ndarray:  # fmt: skip
    """hash_bucket of every value (None -> ``null``, the output of an unfilled null)."""
    cache: dict[Any, int] = {}
    out = np.empty(len(values), np.int64)
    for i, v in enumerate(values):
        if v is None:
            out[i] = null
            continue
        if isinstance(v, bool):
            v = int(v)
        got = cache.get(v)
        if got is None:
            got = cache[v] = hash_bucket_value(v, buckets, seed)
        out[i] = got
    return out


def float_to_int(x: np.ndarray, dtype: Any) -> np.ndarray:
    """doc.go: truncate toward zero, NaN gives 0, out of range saturates."""
    info = np.iinfo(dtype)
    x = np.asarray(x, np.float64)
    out = np.zeros(x.shape, dtype)
    ok = ~np.isnan(x)
    t = np.trunc(x[ok])
    # Compare in float64 before converting, so the limits themselves never overflow.
    hi = t >= float(info.max)
    lo = t <= float(info.min)
    mid = ~(hi | lo)
    vals = np.empty(t.shape, dtype)
    vals[mid] = t[mid].astype(dtype)
    vals[hi] = info.max
    vals[lo] = info.min
    out[ok] = vals
    return out


def to_bfloat16_bits(x32: np.ndarray) -> np.ndarray:
    """float32 values (exact) to bfloat16 bits, round to nearest even; NaN canonical."""
    bits = np.asarray(x32, np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    rounded[np.isnan(x32)] = 0x7FC0
    return rounded


def canonical_nan_bits(dtype: Any) -> int:
    return {np.dtype(np.float16): 0x7E00, np.dtype(np.float32): 0x7FC00000,
            np.dtype(np.float64): 0x7FF8000000000000}[np.dtype(dtype)]  # fmt: skip


def assert_same_floats(got: np.ndarray, want: np.ndarray, what: str, *, rtol: float = 0.0,
                       maxulp: int | None = None) -> None:  # fmt: skip
    """NaN where the reference has NaN (canonical bits), equal (or close) elsewhere,
    infinities and signs included."""
    got = np.asarray(got)
    want = np.asarray(want, got.dtype)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    gn, wn = np.isnan(got), np.isnan(want)
    bad = np.flatnonzero((gn != wn).ravel())
    assert bad.size == 0, (
        f"{what}: NaN mismatch at {bad[:10].tolist()}: got {got.ravel()[bad[:10]]} "
        f"want {want.ravel()[bad[:10]]}"
    )
    if gn.any():
        nan_bits = got[gn].view(f"u{got.dtype.itemsize}")
        want_bits = canonical_nan_bits(got.dtype)
        assert (nan_bits == want_bits).all(), (
            f"{what}: non-canonical NaN bits {[hex(int(b)) for b in set(nan_bits.tolist())]}"
        )
    g, w = got[~gn], want[~wn]
    if maxulp is not None:
        fin = np.isfinite(w)
        assert np.array_equal(g[~fin], w[~fin]), f"{what}: infinities differ"
        np.testing.assert_array_max_ulp(g[fin], w[fin], maxulp=maxulp)
    elif rtol:
        fin = np.isfinite(w)
        assert np.array_equal(g[~fin], w[~fin]), f"{what}: infinities differ"
        np.testing.assert_allclose(g[fin], w[fin], rtol=rtol, atol=0, err_msg=what)
    else:
        diff = np.flatnonzero(~((g == w) & (np.signbit(g) == np.signbit(w))))
        assert diff.size == 0, (
            f"{what}: {diff.size} values differ, first at {diff[:10].tolist()}: "
            f"got {g[diff[:10]]} want {w[diff[:10]]}"
        )
