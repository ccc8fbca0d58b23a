"""The local-disk cache of `shmloader serve` (cache.dir): what a trainer receives never
depends on it. Real serve processes, real trainers (serveconsume.py), real cache dirs.

Each rank's stream, a list of (epoch, step, sha256 of the batch), is compared with a run of
the same config without a cache:
- cache cold, partly warm (left by a run with too small a --cache-size) and fully warm:
  byte-identical; a warm run holds every row group and decodes none;
- a changed transform, a Parquet file rewritten in place (other values, same size) and a
  file whose mtime changed: their entries miss, never a stale byte is served;
- entries with flipped bytes, a truncated entry, another key's entry under an entry's
  name, a corrupt manifest: dropped, said so on stderr, rebuilt byte for byte;
- a file rewritten with its old mtime restored (same path, size, mtime and footer): not
  served stale either;
- two serve processes sharing a dir concurrently; a serve killed with SIGKILL while it
  writes entries, then restarted; a cache disk that fills up mid-epoch (a small tmpfs, or
  where mount is not allowed an RLIMIT_FSIZE below an entry's size);
- `shmloader cache clear` refuses while a serve has the dir open, naming its pid.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
import servekit

RANKS = 2
EPOCHS = 3
BATCH = 250  # 20000 rows: 80 global batches, 40 steps per rank and epoch, nothing dropped
STEPS = 40
SHARDS = 4
ROW_GROUPS = 20  # gen_dataset: 2 files x 10 row groups of 1000 rows
PROGRESS = "40ms"
SLOW = "0.004"  # seconds per batch in trainers whose serve's status lines are checked
OUTPUTS: dict[str, Any] = {
    "x": {"columns": ["f000..f007"], "transforms": [{"fill_null": 0}]},
    "cats": {"columns": "c0*", "transforms": [{"hash_bucket": 1000}]},
    "strs": {"columns": "s0*", "transforms": [{"fill_null": ""}, {"hash_bucket": 99}]},
    "seq": {"columns": "seq", "transforms": [{"pad": 6}]},
    "label": "label",
    "id": "id",
}

STARTUP_RE = re.compile(
    r"^serve: cache (?P<dir>.+) \(config (?P<config>[0-9a-f]{12})\): budget (?P<budget>.+?) "
    r"for this node's (?P<need>.+?); holds "
    r"(?P<held>\d+) of its (?P<total>\d+) row groups \((?P<bytes>.+?)\) already$",
    re.M,
)
STATUS_RE = re.compile(
    r"^serve: \d+ rows/s [\d.]+ MB/s decode (?P<decode>\d+) rows/s \| cache hit (?P<hit>\d+) "
    r"miss (?P<miss>\d+) served (?P<bytes>.+?) evict (?P<evict>\d+)",
    re.M,
)
CLOSING_RE = re.compile(
    r"^serve: cache: (?P<hits>\d+) hits, (?P<misses>\d+) misses, (?P<bytes>.+?) served from it, "
    r"(?P<written>\d+) written, (?P<evicted>\d+) evicted, (?P<refused>\d+) not admitted, "
    r"(?P<corrupt>\d+) corrupt dropped$",
    re.M,
)
DISK_FULL = "cache disk full"
FSIZE = 120_000  # RLIMIT_FSIZE where no tmpfs can be mounted

Streams = list[list[tuple[int, int, str]]]


# -- processes -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def env(shmloader_bin: Path, gen_dataset: Path, tmp_path_factory, library):
    tmp = tmp_path_factory.mktemp("cache")
    shm_dir = Path(tempfile.mkdtemp(prefix="shmloader-test-", dir="/dev/shm"))
    with servekit.Group(shmloader_bin, shm_dir, tmp) as g:
        yield {"g": g, "tmp": tmp, "bin": shmloader_bin, "data": gen_dataset,
               "cfg": config(tmp / "base.yaml", gen_dataset)}  # fmt: skip
    shutil.rmtree(shm_dir, ignore_errors=True)


def config(path: Path, dataset: Path, outputs: dict[str, Any] | None = None) -> Path:
    """The config of every run here: 2 ranks, 3 epochs, shuffled, no filter, a 4-shard
    cache (cache.dir comes from --cache-dir)."""
    return servekit.write_config(
        path, dataset=str(dataset), batch_size=BATCH, seed=5, epochs=EPOCHS, ranks=RANKS,
        shuffle={"row_groups": True, "window": 3}, outputs=outputs or OUTPUTS,
        cache={"shards": SHARDS}, progress=PROGRESS,
    )  # fmt: skip


def new_job() -> str:
    return "cache-" + uuid.uuid4().hex[:12]


@dataclass
class Run:
    serve: servekit.Serve
    streams: Streams

    @property
    def stderr(self) -> str:
        return self.serve.stderr


def consumers(env: dict[str, Any], job: str, name: str, *args: str) -> list[servekit.Consumer]:
    g: servekit.Group = env["g"]
    return [g.consume(job, r, f"{name}-r{r}", "--keep", "none", *args) for r in range(RANKS)]


def finish(serve: servekit.Serve, cons: list[servekit.Consumer], name: str) -> Run:
    """Waits for the trainers and serve; both must end normally."""
    results = servekit.wait_all(cons, timeout=60)
    for r, res in enumerate(results):
        assert res.end == "stream_end", (
            f"{name}: rank {r} ended with {res.end!r} {res.meta.get('message', '')} after "
            f"{len(res.batches)} batches\n{serve.describe()}"
        )
    rc = serve.wait(timeout=30)
    servekit.assert_no_panic(serve.stderr)
    assert rc == 0, f"{name}: serve failed\n{serve.describe()}"
    return Run(serve, [res.stream() for res in results])


def serve_and_read(env: dict[str, Any], name: str, *flags: str, cache: Path | None = None,
                   cfg: Path | None = None, slow: str | None = None) -> Run:  # fmt: skip
    job = new_job()
    cons = consumers(env, job, name, *(["--slow", slow] if slow else []))
    if cache is not None:
        flags = ("--cache-dir", str(cache), *flags)
    serve = env["g"].serve(cfg or env["cfg"], job, "--drain-timeout", "20s", *flags)
    return finish(serve, cons, name)


def assert_same_streams(got: Streams, want: Streams, what: str) -> None:
    assert len(got) == len(want) == RANKS
    for r, (g, w) in enumerate(zip(got, want, strict=True)):
        diff = [i for i, (a, b) in enumerate(zip(g, w, strict=False)) if a != b]
        assert len(g) == len(w) and not diff, (
            f"{what}: rank {r}: {len(g)} batches vs {len(w)} without a cache; {len(diff)} "
            f"differ, first at (epoch, step) {g[diff[0]][:2] if diff else None}"
        )


# -- what serve and `cache ls` say ----------------------------------------------------------


@dataclass
class Startup:
    held: int
    total: int
    budget: str
    config: str
    line: str


def startup(serve: servekit.Serve, cache: Path) -> Startup:
    """The start-up line `serve: cache DIR: budget X for this node's Y; holds N of its M
    row groups (Z) already` (waits for it: serve may still be starting)."""
    deadline = time.monotonic() + 20
    while True:
        m = STARTUP_RE.search(serve.stderr)
        if m or time.monotonic() > deadline or not serve.running():
            break
        time.sleep(0.02)
    m = m or STARTUP_RE.search(serve.stderr)
    assert m, f"no cache start-up line\n{serve.describe()}"
    assert m["dir"] == str(cache), m.group(0)
    return Startup(int(m["held"]), int(m["total"]), m["budget"], m["config"], m.group(0))


@dataclass
class Status:
    decode: int
    hit: int
    miss: int
    evict: int


def statuses(serve: servekit.Serve) -> list[Status]:
    """The status lines' decode rate and cache counters. The counters are this run's
    totals so far; serve prints no final line, so the last one may lag the end a little."""
    found = [Status(int(m["decode"]), int(m["hit"]), int(m["miss"]), int(m["evict"]))
             for m in STATUS_RE.finditer(serve.stderr)]  # fmt: skip
    assert found, f"no status line with the cache's counters\n{serve.stderr}"
    return found


def closing(serve: servekit.Serve) -> dict[str, Any]:
    """serve's closing cache line: this run's totals."""
    m = CLOSING_RE.search(serve.stderr)
    assert m, f"no closing cache line\n{serve.stderr}"
    return {k: (v if k == "bytes" else int(v)) for k, v in m.groupdict().items()}


@dataclass
class Listing:
    text: str
    entries: int
    configs: dict[str, int]  # config -> entries
    manifests: dict[str, str]  # shard -> "ok", "missing" or what is wrong
    temps: int
    corrupt: int
    notes: list[str]


def cache_ls(env: dict[str, Any], cache: Path) -> Listing:
    proc = subprocess.run([str(env["bin"]), "cache", "ls", str(cache)], capture_output=True,
                          text=True, timeout=30)  # fmt: skip
    assert proc.returncode == 0, f"cache ls {cache} failed: {proc.stdout}{proc.stderr}"
    text = proc.stdout
    head = re.match(r"cache .+: format \d+, (\d+) shards, (\d+) entries, ", text)
    assert head and int(head[1]) == SHARDS, text
    configs = {m[1]: int(m[2]) for m in re.finditer(r"^\s*([0-9a-f]{12})\s+(\d+)\s", text, re.M)}
    manifests = {m[1]: m[2] for m in re.finditer(r"^\s*(s\d\d)\s+\d+\s+.+?\s+\d+\s{2,}(.+)$",
                                                 text, re.M)}  # fmt: skip
    assert len(manifests) == SHARDS, text
    temps = re.search(r"^temp files: (\d+)$", text, re.M)
    corrupt = re.search(r"^corrupt or stray files .*: (\d+)$", text, re.M)
    return Listing(text, int(head[2]), configs, manifests, int(temps[1]) if temps else 0,
                   int(corrupt[1]) if corrupt else 0,
                   re.findall(r"^note: (.*)$", text, re.M))  # fmt: skip


def assert_clean(ls: Listing, entries: int, configs: int = 1) -> None:
    """A cache dir at rest: `entries` entries of `configs` configs, nothing else."""
    assert ls.entries == entries, ls.text
    assert len(ls.configs) == configs, ls.text
    assert ls.temps == 0, f"temp files left:\n{ls.text}"
    assert ls.corrupt == 0 and not ls.notes, ls.text
    assert set(ls.manifests.values()) == {"ok"}, ls.text


def entry_files(cache: Path) -> list[Path]:
    return sorted(cache.glob("s[0-9][0-9]/*.ent"))


def temp_files(cache: Path) -> list[Path]:
    """Entries being written: <key>.<pid>.<seq>.<size>.tmp (not a manifest's temp file)."""
    return sorted(cache.glob("s[0-9][0-9]/[0-9a-f]*.tmp"))


def any_temp_files(cache: Path) -> list[Path]:
    """Every temp file: entries' and manifests'."""
    return sorted(cache.glob("s[0-9][0-9]/*.tmp"))


def warnings(stderr: str, text: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if text in ln]


# -- shared runs -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def baseline(env) -> Streams:
    """The streams without a cache."""
    run = serve_and_read(env, "off", "--workers", "1")
    assert "serve: cache: off (cache.dir is empty)" in run.stderr, run.stderr
    every = [(e, st) for e in range(EPOCHS) for st in range(STEPS)]
    for s in run.streams:
        assert [(e, st) for e, st, _ in s] == every
    hashes = [h for s in run.streams for _, _, h in s]
    assert len(set(hashes)) == len(hashes), "two batches hash alike: the hash sees too little"
    return run.streams


@pytest.fixture(scope="module")
def warm(env, baseline) -> dict[str, Any]:
    """A cold run on an empty dir, then a second run on the dir it left."""
    cache = env["tmp"] / "warm-cache"
    cold = serve_and_read(env, "cold", cache=cache, slow=SLOW)
    after_cold = cache_ls(env, cache)
    files = {p.relative_to(cache): p.read_bytes() for p in entry_files(cache)}
    again = serve_and_read(env, "warm", cache=cache, slow=SLOW)
    return {"cache": cache, "cold": cold, "warm": again, "ls_cold": after_cold,
            "ls_warm": cache_ls(env, cache), "files": files}  # fmt: skip


def copy_cache(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


# -- 1. cache off, cold, partly warm, warm: the same bytes -----------------------------------


def test_cold_cache_gives_the_same_stream_and_fills_the_cache(env, baseline, warm):
    cold: Run = warm["cold"]
    assert_same_streams(cold.streams, baseline, "cold cache")
    st = startup(cold.serve, warm["cache"])
    assert (st.held, st.total) == (0, ROW_GROUPS), st.line
    # serve names the config that `cache ls` lists its entries under
    assert set(warm["ls_cold"].configs) == {st.config}, (st.line, warm["ls_cold"].text)
    # Epoch 0 misses each row group once and writes it; epochs 1 and 2 hit.
    lines = statuses(cold.serve)
    assert max(s.miss for s in lines) == ROW_GROUPS, cold.stderr
    assert lines[-1].hit > 0, cold.stderr
    end = closing(cold.serve)
    counts = (end["misses"], end["written"], end["evicted"], end["corrupt"])
    assert counts == (ROW_GROUPS, ROW_GROUPS, 0, 0), end
    assert end["hits"] >= ROW_GROUPS * (EPOCHS - 1) and end["bytes"] != "0 B", end
    assert_clean(warm["ls_cold"], ROW_GROUPS)


def test_warm_cache_gives_the_same_stream_and_decodes_nothing(env, baseline, warm):
    run: Run = warm["warm"]
    assert_same_streams(run.streams, baseline, "warm cache")
    st = startup(run.serve, warm["cache"])
    assert (st.held, st.total) == (ROW_GROUPS, ROW_GROUPS), st.line
    lines = statuses(run.serve)
    assert all(s.miss == 0 and s.decode == 0 for s in lines), (
        f"a warm run decoded a row group:\n{run.stderr}"
    )
    assert lines[-1].hit > 0, run.stderr
    # It wrote nothing: the very files the cold run committed.
    end = closing(run.serve)
    assert (end["misses"], end["written"], end["evicted"]) == (0, 0, 0), end
    assert end["hits"] >= ROW_GROUPS * EPOCHS and end["bytes"] != "0 B", end
    assert_clean(warm["ls_warm"], ROW_GROUPS)
    assert {p.relative_to(warm["cache"]): p.read_bytes()
            for p in entry_files(warm["cache"])} == warm["files"]  # fmt: skip


def test_partly_warm_cache_left_by_a_too_small_cache_size(env, baseline):
    """A 1 MiB budget (evicting and refusing entries) leaves some entries; the next run
    holds exactly those, misses only the others, and both give the same stream."""
    cache = env["tmp"] / "small-cache"
    # 1 MiB over 4 shards holds one entry (137 KiB) per shard: evictions and refusals.
    small = serve_and_read(env, "small", "--cache-size", "1MiB", cache=cache)
    assert_same_streams(small.streams, baseline, "--cache-size 1MiB")
    assert startup(small.serve, cache).budget == "1.0 MiB", small.stderr
    end = closing(small.serve)
    assert end["evicted"] + end["refused"] > 0 and end["corrupt"] == 0, end
    left = cache_ls(env, cache)
    assert 0 < left.entries < ROW_GROUPS, left.text
    assert_clean(left, left.entries)

    run = serve_and_read(env, "partly-warm", cache=cache, slow=SLOW)
    assert_same_streams(run.streams, baseline, "partly warm cache")
    st = startup(run.serve, cache)
    assert (st.held, st.total) == (left.entries, ROW_GROUPS), st.line
    lines = statuses(run.serve)
    assert max(s.miss for s in lines) == ROW_GROUPS - left.entries, run.stderr
    assert lines[-1].hit > 0, run.stderr
    assert_clean(cache_ls(env, cache), ROW_GROUPS)


# -- 2. invalidation -------------------------------------------------------------------------


def test_changed_transform_misses_every_row_group(env, warm):
    """hash_bucket 1000 -> 997 on a warm dir: holds 0, misses all 20, same bytes as a
    cache-off run of the new config; the new entries sit beside the old config's."""
    outputs = dict(OUTPUTS, cats={"columns": "c0*", "transforms": [{"hash_bucket": 997}]})
    cfg = config(env["tmp"] / "buckets997.yaml", env["data"], outputs)
    want = serve_and_read(env, "b997-off", cfg=cfg).streams
    old_config = set(warm["ls_cold"].configs)
    cache = copy_cache(warm["cache"], env["tmp"] / "b997-cache")
    run = serve_and_read(env, "b997", cache=cache, cfg=cfg, slow=SLOW)
    assert_same_streams(run.streams, want, "hash_bucket 997 on a cache of hash_bucket 1000")
    st = startup(run.serve, cache)
    assert (st.held, st.total) == (0, ROW_GROUPS), st.line
    assert max(s.miss for s in statuses(run.serve)) == ROW_GROUPS, run.stderr
    ls = cache_ls(env, cache)
    new = set(ls.configs) - old_config
    assert len(new) == 1 and ls.configs[new.pop()] == ROW_GROUPS, ls.text


def write_plain(table: pa.Table, path: Path) -> None:
    """Uncompressed, plain, no statistics: a value change keeps every byte count (and the
    footer) as it was."""
    pq.write_table(table, path, row_group_size=1000, compression="none", use_dictionary=False,
                   write_statistics=False)  # fmt: skip


def test_rewritten_or_touched_parquet_file_misses_only_its_row_groups(env, tmp_path):
    """A file rewritten in place with other labels (1 - label), the same size and the same
    footer, then the other file only touched: each time that file's 10 row groups miss,
    the other 10 hit, and the stream is the cache-off stream of the files as they are."""
    data = tmp_path / "data"
    data.mkdir()
    kept, victim = data / "part-00000.parquet", data / "part-00001.parquet"
    shutil.copy(env["data"] / kept.name, kept)
    table = pq.read_table(env["data"] / victim.name).replace_schema_metadata(None)
    write_plain(table, victim)
    before = victim.stat()
    cfg = config(tmp_path / "rewrite.yaml", data)
    cache = tmp_path / "cache"
    first = serve_and_read(env, "rw-first", cache=cache, cfg=cfg)
    assert startup(first.serve, cache).held == 0
    assert cache_ls(env, cache).entries == ROW_GROUPS

    i = table.schema.get_field_index("label")
    flipped = pc.subtract(pa.scalar(1.0, pa.float32()), table.column("label"))
    time.sleep(0.01)
    write_plain(table.set_column(i, table.schema.field(i), flipped), victim)
    after = victim.stat()
    assert after.st_size == before.st_size and after.st_ino == before.st_ino
    if after.st_mtime_ns == before.st_mtime_ns:  # a coarse clock: the rewrite still moves it
        os.utime(victim, ns=(after.st_atime_ns, after.st_mtime_ns + 10**9))
    want = serve_and_read(env, "rw-off", cfg=cfg).streams
    assert any(
        a != b for s, t in zip(want, first.streams, strict=True) for a, b in zip(s, t, strict=False)
    ), "the rewrite changed no batch: the test would not see stale data"
    run = serve_and_read(env, "rw-rewritten", cache=cache, cfg=cfg, slow=SLOW)
    assert_same_streams(run.streams, want, "a file rewritten in place")
    st = startup(run.serve, cache)
    assert (st.held, st.total) == (ROW_GROUPS // 2, ROW_GROUPS), st.line
    assert max(s.miss for s in statuses(run.serve)) == ROW_GROUPS // 2, run.stderr

    st_kept = kept.stat()
    os.utime(kept, ns=(st_kept.st_atime_ns, st_kept.st_mtime_ns + 10**9))
    run = serve_and_read(env, "rw-touched", cache=cache, cfg=cfg, slow=SLOW)
    assert_same_streams(run.streams, want, "a file with a new mtime")
    st = startup(run.serve, cache)
    assert (st.held, st.total) == (ROW_GROUPS // 2, ROW_GROUPS), st.line
    assert max(s.miss for s in statuses(run.serve)) == ROW_GROUPS // 2, run.stderr
    ls = cache_ls(env, cache)
    assert ls.temps == 0 and ls.corrupt == 0 and ls.entries >= ROW_GROUPS, ls.text


def test_rewritten_file_with_its_old_mtime_restored_is_not_served_stale(env, tmp_path):
    """The rewrite above, then the file's mtime set back (as `cp -p`, `rsync -t` or
    `touch -r` do): path, size, mtime and footer are all as before, only the values (and
    the ctime, which no one can set) changed. The cache must not serve the old values."""
    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(env["data"] / "part-00000.parquet", data / "part-00000.parquet")
    victim = data / "part-00001.parquet"
    table = pq.read_table(env["data"] / victim.name).replace_schema_metadata(None)
    write_plain(table, victim)
    before = victim.stat()
    cfg = config(tmp_path / "restored.yaml", data)
    cache = tmp_path / "cache"
    first = serve_and_read(env, "restored-first", cache=cache, cfg=cfg)

    i = table.schema.get_field_index("label")
    flipped = pc.subtract(pa.scalar(1.0, pa.float32()), table.column("label"))
    write_plain(table.set_column(i, table.schema.field(i), flipped), victim)
    os.utime(victim, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = victim.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert after.st_ctime_ns != before.st_ctime_ns
    want = serve_and_read(env, "restored-off", cfg=cfg).streams
    assert any(
        a != b for s, t in zip(want, first.streams, strict=True) for a, b in zip(s, t, strict=False)
    )
    run = serve_and_read(env, "restored", cache=cache, cfg=cfg)
    st = startup(run.serve, cache)
    assert_same_streams(run.streams, want, f"a rewritten file with its old mtime ({st.line})")
    assert st.held == ROW_GROUPS // 2, st.line


# -- 3. corruption ---------------------------------------------------------------------------


def flip(path: Path, offset: int, n: int = 8) -> None:
    with open(path, "r+b") as f:
        f.seek(offset)
        b = f.read(n)
        f.seek(offset)
        f.write(bytes(x ^ 0x5A for x in b))


def test_corrupt_entries_and_manifest_are_dropped_and_rebuilt(env, baseline, warm, tmp_path):
    """Bytes flipped in the data regions of two entries, one entry truncated, one holding
    another key's valid entry, one shard's manifest with a flipped byte: the same stream,
    exactly those four entries miss, stderr says so, and the dir ends as it was."""
    cache = copy_cache(warm["cache"], tmp_path / "cache")
    files = entry_files(cache)
    assert len(files) == ROW_GROUPS
    flip(files[0], 4096 + 5)
    flip(files[1], 4096 + 60_000)
    os.truncate(files[2], files[2].stat().st_size // 2)
    shutil.copy(files[4], files[3])  # a valid entry under another key's name
    shard = files[-1].parent.name
    flip(cache / shard / "manifest", 40, 1)
    assert cache_ls(env, cache).manifests[shard] != "ok"

    run = serve_and_read(env, "corrupt", cache=cache, slow=SLOW)
    assert_same_streams(run.streams, baseline, "corrupted cache")
    assert warnings(run.stderr, "corrupt entry"), f"no word of corrupt entries:\n{run.stderr}"
    assert warnings(run.stderr, "rebuilt"), f"no word of the corrupt manifest:\n{run.stderr}"
    assert max(s.miss for s in statuses(run.serve)) == 4, run.stderr
    ls = cache_ls(env, cache)
    assert_clean(ls, ROW_GROUPS)
    # Rebuilt byte for byte: an entry is a pure function of its key.
    got = {p.relative_to(cache): p.read_bytes() for p in entry_files(cache)}
    assert got == warm["files"], [str(k) for k in got if got[k] != warm["files"].get(k)]


# -- 4. two processes on one dir -------------------------------------------------------------


def test_two_serve_processes_share_one_cache_dir(env, baseline, tmp_path):
    """Two jobs with the same transforms (seeds 5 and 6) on one dir at once: the second
    starts holding entries the first wrote; both streams are their cache-off streams."""
    cache = tmp_path / "cache"
    want6 = serve_and_read(env, "seed6-off", "--seed", "6").streams
    job_a, job_b = new_job(), new_job()
    cons_a = consumers(env, job_a, "shared-a", "--slow", "0.01")
    serve_a = env["g"].serve(env["cfg"], job_a, "--drain-timeout", "20s", "--cache-dir",
                             str(cache))  # fmt: skip
    deadline = time.monotonic() + 20
    while len(entry_files(cache)) < 3:
        assert time.monotonic() < deadline and serve_a.running(), serve_a.describe()
        time.sleep(0.005)
    cons_b = consumers(env, job_b, "shared-b")
    serve_b = env["g"].serve(env["cfg"], job_b, "--drain-timeout", "20s", "--cache-dir",
                             str(cache), "--seed", "6")  # fmt: skip
    b = finish(serve_b, cons_b, "shared-b")
    a = finish(serve_a, cons_a, "shared-a")
    assert_same_streams(a.streams, baseline, "first of two processes on one cache")
    assert_same_streams(b.streams, want6, "second of two processes on one cache")
    held = startup(b.serve, cache).held
    assert held >= 3, f"the second process does not see the first one's entries: {held}"
    assert statuses(b.serve)[-1].hit > 0, b.stderr
    assert_clean(cache_ls(env, cache), ROW_GROUPS)
    assert any_temp_files(cache) == []


# -- 5. kill -9 while writing ----------------------------------------------------------------


def test_serve_killed_while_writing_entries_then_restarted(env, baseline, tmp_path):
    """kill -9 in epoch 0 while an entry is being written: the restart on the same dir
    holds exactly the entries that were committed, removes the dead writer's temp files
    and serves the same stream."""
    cache = tmp_path / "cache"
    job = new_job()
    ready = [tmp_path / f"ready{r}" for r in range(RANKS)]
    cons = [env["g"].consume(job, r, f"killed-r{r}", "--keep", "none", "--slow", "0.02",
                             "--ready", str(ready[r])) for r in range(RANKS)]  # fmt: skip
    serve = env["g"].serve(env["cfg"], job, "--drain-timeout", "20s", "--cache-dir", str(cache))
    deadline = time.monotonic() + 20
    while not all(p.exists() for p in ready):  # every trainer reads: the epoch is under way
        assert time.monotonic() < deadline and serve.running(), serve.describe()
        time.sleep(0.005)
    # Kill it while an entry is being written, after it committed a few. An entry's write
    # can end between seeing its temp file and the kill, so serve is stopped first and
    # killed only if the temp file is still there (else it goes on and is caught later).
    while True:
        while not (temp_files(cache) and len(entry_files(cache)) >= 2):
            assert time.monotonic() < deadline and serve.running(), serve.describe()
            time.sleep(0.0005)
        servekit.stop_and_wait(serve)  # kill(2) returns before every thread has stopped
        if temp_files(cache):
            break
        serve.popen.send_signal(signal.SIGCONT)
    serve.kill()
    assert serve.popen.returncode == -9
    for c in cons:
        res = c.result(timeout=10)
        assert res.end == "gone" and 0 < len(res.batches) < STEPS, (res.end, len(res.batches))
    committed = len(entry_files(cache))
    left = cache_ls(env, cache)
    assert 2 <= committed < ROW_GROUPS, left.text
    assert left.entries == committed, left.text
    # What the kill cut short: temp files nobody holds any more.
    assert left.temps >= 1 and "left by a dead process" in left.text, left.text

    run = serve_and_read(env, "restarted", cache=cache)
    assert_same_streams(run.streams, baseline, "restart after kill -9 mid-write")
    st = startup(run.serve, cache)
    assert (st.held, st.total) == (committed, ROW_GROUPS), st.line
    assert_clean(cache_ls(env, cache), ROW_GROUPS)
    assert any_temp_files(cache) == []


# -- 6. the disk fills up --------------------------------------------------------------------


def fill(path: Path, leave: int) -> None:
    """Fills the file system of path's dir, then frees `leave` bytes of it again."""
    chunk = b"\0" * (64 << 10)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        while True:
            try:
                if os.write(fd, chunk) < len(chunk):
                    break
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
                break
        os.ftruncate(fd, max(0, os.fstat(fd).st_size - leave))
    finally:
        os.close(fd)


@contextlib.contextmanager
def small_disk(where: Path) -> Iterator[Path | None]:
    """An 8 MiB tmpfs mounted at `where`, unmounted at the end; None where this process
    may not mount (or SHMLOADER_TEST_NO_MOUNT is set, to exercise the fallback)."""
    where.mkdir()
    try:
        proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(where)],
                              capture_output=True, text=True, timeout=30)  # fmt: skip
        rc, err = proc.returncode, proc.stderr
    except FileNotFoundError as exc:
        rc, err = 127, f"{exc} (permission: no mount command)"
    if rc != 0 or os.environ.get("SHMLOADER_TEST_NO_MOUNT"):
        assert os.environ.get("SHMLOADER_TEST_NO_MOUNT") or re.search(
            r"permission|not permitted|superuser|only root", err, re.I
        ), err
        if rc == 0:
            subprocess.run(["umount", str(where)], check=True, timeout=30)
        yield None
        return
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], timeout=30)


def test_a_cache_dir_that_cannot_be_made_warns_and_serves_uncached(env, baseline, tmp_path):
    """cache.dir under a regular file (so it cannot be created, even by root): serve says
    so once at start, names the dir, serves every byte uncached and writes nothing."""
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache's parent should be")
    cache = blocker / "cache"
    run = serve_and_read(env, "nodir", cache=cache)
    assert_same_streams(run.streams, baseline, "a cache dir that cannot be made")
    said = [ln for ln in run.stderr.splitlines() if "warning: cache" in ln]
    assert len(said) == 1 and str(cache) in said[0] and "uncached" in said[0], run.stderr
    assert "cache: off" in run.stderr and "cache hit" not in run.stderr, run.stderr
    assert blocker.read_text().startswith("a file")


def test_cache_disk_full_mid_epoch_warns_once_and_loses_nothing(env, baseline, tmp_path):
    """The cache's disk fills up mid-epoch (another file takes the space serve counted
    on at start-up): one warning, every batch as without a cache, no temp file left."""
    with small_disk(tmp_path / "disk") as disk:
        if disk is not None:
            cache = disk / "cache"
            job = new_job()
            serve = env["g"].serve(env["cfg"], job, "--drain-timeout", "20s", "--cache-dir",
                                   str(cache), "--cache-size", "64MiB")  # fmt: skip
            assert startup(serve, cache).budget == "8.0 MiB"  # lowered to what the disk has
            # No trainer yet: serve fills its rings and stops after a few row groups.
            deadline = time.monotonic() + 20
            while not entry_files(cache):
                assert time.monotonic() < deadline and serve.running(), serve.describe()
                time.sleep(0.005)
            fill(disk / "filler", leave=300 << 10)  # room for about two more entries
            run = finish(serve, consumers(env, job, "full"), "disk full")
            stored = len(entry_files(cache))
        else:
            # No mount: a file size limit below an entry's size (137 KiB) and above a ring
            # segment's (76 KiB at depth 2) makes every entry's fallocate fail with EFBIG.
            cache = tmp_path / "cache"
            wrapper = tmp_path / "limited"
            wrapper.write_text(
                f"#!{sys.executable}\nimport os, resource, sys\n"
                f"resource.setrlimit(resource.RLIMIT_FSIZE, ({FSIZE}, {FSIZE}))\n"
                f"os.execv({str(env['bin'])!r}, [{str(env['bin'])!r}, *sys.argv[1:]])\n"
            )
            wrapper.chmod(0o755)
            limited = servekit.Group(wrapper, env["g"].shm_dir, tmp_path)
            with limited:
                job = new_job()
                cons = consumers(env, job, "full")
                serve = limited.serve(env["cfg"], job, "--drain-timeout", "20s", "--depth",
                                      "2", "--cache-dir", str(cache), "--cache-size",
                                      "64MiB")  # fmt: skip
                run = finish(serve, cons, "file size limit")
            stored = len(entry_files(cache))
    assert_same_streams(run.streams, baseline, "cache disk full")
    said = warnings(run.stderr, DISK_FULL)
    assert len(said) == 1, f"want one {DISK_FULL!r} warning, got {len(said)}:\n{run.stderr}"
    full = [ln for ln in run.stderr.splitlines() if "no space" in ln or "file too large" in ln]
    assert full == said, f"one full disk, one line about it:\n{run.stderr}"
    assert stored < ROW_GROUPS, f"all {stored} entries fit: the disk never filled"
    if disk is not None:
        assert stored >= 1, run.stderr
    assert any_temp_files(cache) == []


# -- 7. cache clear --------------------------------------------------------------------------


def test_cache_clear_refuses_while_serve_has_the_dir_open(env, tmp_path):
    """While a serve has the dir open, clear exits non-zero naming its pid and removes
    nothing; once it has exited, clear empties the dir."""
    cache = tmp_path / "cache"
    bin_ = str(env["bin"])
    job = new_job()
    serve = env["g"].serve(env["cfg"], job, "--drain-timeout", "20s", "--cache-dir", str(cache))
    startup(serve, cache)  # the cache is open: the line comes after cache.Open
    deadline = time.monotonic() + 20
    while not entry_files(cache):  # and it has written something to lose
        assert time.monotonic() < deadline and serve.running(), serve.describe()
        time.sleep(0.005)
    proc = subprocess.run([bin_, "cache", "clear", str(cache)], capture_output=True, text=True,
                          timeout=30)  # fmt: skip
    said = proc.stdout + proc.stderr
    assert proc.returncode != 0, f"cache clear emptied a dir serve has open: {said}"
    assert f"pid {serve.popen.pid}" in said, f"the refusal does not name serve: {said}"
    assert entry_files(cache), "the refused clear removed entries"
    finish(serve, consumers(env, job, "clear"), "serve during a refused clear")

    proc = subprocess.run([bin_, "cache", "clear", str(cache)], capture_output=True, text=True,
                          timeout=30)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    left = sorted(p.name for p in cache.iterdir()) if cache.exists() else []
    assert not any(n.startswith("s") or n == "shmloader-cache" for n in left), left
    assert not list(cache.rglob("*.ent")), left
    proc = subprocess.run([bin_, "cache", "ls", str(cache)], capture_output=True, text=True,
                          timeout=30)  # fmt: skip
    said = proc.stdout + proc.stderr
    empty = "not a cache dir" if proc.returncode else " 0 shards, 0 entries, "
    assert empty in said, said
