"""Watching a running job from outside serve: `shmloader status` (list, --once, --json)
and the Prometheus endpoint parse, name what the docs promise, and their counters move
while a trainer reads; the trainer's own loader.stats() agrees with the ring's counters."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from pathlib import Path

import servekit

import shmloader

OUTPUTS = {"id": "id", "x": {"columns": ["f000..f003"], "transforms": [{"fill_null": 0}]}}
SAMPLE = re.compile(r'^(shmloader_[a-z_]+)\{job="([^"]+)"(?:,rank="(\d+)")?\} (\S+)$')


def status(bin: Path, shm_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`shmloader status`, checked to exit 0 (unless asked for a missing job)."""
    out = subprocess.run([str(bin), "status", "--dir", str(shm_dir), *args],
                         capture_output=True, text=True, timeout=30)  # fmt: skip
    assert out.returncode == 0 or "nosuchjob" in args, out.stderr
    return out


def scrape(addr: str) -> dict[tuple[str, str | None], float]:
    """/metrics as {(name, rank): value}; every line must be a comment or a sample."""
    with urllib.request.urlopen(f"http://{addr}/metrics", timeout=10) as r:
        assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text = r.read().decode()
    out: dict[tuple[str, str | None], float] = {}
    types: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            types[name] = kind
            continue
        if line.startswith("# HELP "):
            continue
        m = SAMPLE.match(line)
        assert m, f"not a Prometheus sample: {line!r}"
        assert m.group(1) in types, f"{m.group(1)} has no TYPE line"
        out[(m.group(1), m.group(3))] = float(m.group(4))
    return out


def test_status_and_metrics_follow_a_running_job(
    group, gen_dataset: Path, tmp_path: Path, shm_dir: Path, shmloader_bin: Path
) -> None:
    cfg = servekit.write_config(tmp_path / "o.yaml", dataset=str(gen_dataset), batch_size=250,
                                epochs=3, ranks=2, outputs=OUTPUTS,
                                cache={"dir": str(tmp_path / "cache")})  # fmt: skip
    job = "obs-" + uuid.uuid4().hex[:12]
    serve = group.serve(cfg, job, "--drain-timeout", "30s")
    loaders = [
        shmloader.attach(job, r, dir=shm_dir, timeout=20, batch_timeout=20) for r in range(2)
    ]

    def read(loader: shmloader.Loader) -> None:  # a trainer with a 20 ms step
        for _ in loader:
            time.sleep(0.02)

    threads = [threading.Thread(target=read, args=(ld,)) for ld in loaders]
    for t in threads:
        t.start()
    try:
        listing = json.loads(status(shmloader_bin, shm_dir, "--json").stdout)
        mine = [j for j in listing if j["job"] == job]
        assert len(mine) == 1 and mine[0]["ranks"] == [0, 1] and mine[0]["metrics"], listing
        addr = mine[0]["metrics"]

        first = json.loads(
            status(shmloader_bin, shm_dir, job, "--json", "--interval", "0.3").stdout
        )
        m1 = scrape(addr)
        # Wait until both trainers are in a later epoch, which serve reads from its cache
        # (status's cache figures come from a file rewritten each second).
        deadline = time.monotonic() + 30
        while True:
            second = json.loads(
                status(shmloader_bin, shm_dir, "--json", job, "--interval", "0.3").stdout
            )
            later = min(r["epoch"] for r in second["rings"]) >= 1
            if (later and second["cache"]["hits"] > 0) or time.monotonic() > deadline:
                break
        m2 = scrape(addr)
        once = status(shmloader_bin, shm_dir, job, "--once", "--interval", "1.1")
    finally:
        for t in threads:
            t.join(timeout=60)
    stats = [ld.stats() for ld in loaders]
    for ld in loaders:
        ld.close()
    assert serve.wait(timeout=30) == 0, serve.describe()

    for doc in (first, second):
        assert doc["job"] == job and doc["epochs"] == 3 and len(doc["rings"]) == 2
        assert doc["cache"] is not None and doc["cache"]["budget_bytes"] > 0
        for r in doc["rings"]:
            assert r["steps_per_epoch"] == 40 and 0 <= r["occupancy"] <= r["slots"]
            assert 0 <= r["producer_wait_pct"] <= 100 and 0 <= r["consumer_wait_pct"] <= 100
            assert r["trainer_pid"] > 0
    assert second["rings"][0]["rows_read"] > first["rings"][0]["rows_read"], (
        "status counters did not move"
    )
    assert min(r["epoch"] for r in second["rings"]) >= 1, "the trainers never reached epoch 1"
    assert second["cache"]["hits"] > first["cache"]["hits"], "cache hits did not move"
    assert first["rows_per_s"] > 0 and second["rows_per_s"] > 0

    for rank in ("0", "1"):
        for name in (
            "shmloader_rows_total",
            "shmloader_rows_read_total",
            "shmloader_batches_total",
            "shmloader_bytes_total",
            "shmloader_producer_wait_seconds_total",
            "shmloader_consumer_wait_seconds_total",
            "shmloader_ring_occupancy",
        ):
            assert (name, rank) in m1, f"{name} rank {rank} missing"
        assert m2[("shmloader_rows_read_total", rank)] > m1[("shmloader_rows_read_total", rank)]
    for name in ("shmloader_cache_hits_total", "shmloader_cache_misses_total",
                 "shmloader_decoded_rows_total", "shmloader_decode_cpu_seconds_total"):  # fmt: skip
        assert (name, None) in m2, f"{name} missing"
    assert (
        m2[("shmloader_cache_misses_total", None)] > 0
        and m2[("shmloader_decode_cpu_seconds_total", None)] > 0
    )
    assert m2[("shmloader_cache_hits_total", None)] > m1[("shmloader_cache_hits_total", None)]

    text = once.stdout
    assert once.returncode == 0 and f"job {job}" in text and "RANK" in text and "cache " in text, (
        text
    )
    assert (
        len(re.findall(r"^\d+\s+\d+\s+\d+/40\s+e\d+ \d+\s+\d+/\d+\s+\d+%\s+\d+%", text, re.M)) == 2
    ), text

    assert "decode" in text and "cores of CPU)" in text, "a 1.1 s span sees two status files"
    # The trainers' own view: every row of the 3 epochs; with a 20 ms step they are the
    # slower side, so they barely wait (test_api has a starved trainer's stall).
    assert sum(s.rows for s in stats) == 3 * servekit.GEN_ROWS
    assert all(0.0 <= s.stall < 0.5 for s in stats), stats


def test_log_formats(group, gen_dataset: Path, tmp_path: Path, shm_dir: Path) -> None:
    """--log-format json: every line on stderr is a record, the status lines carry their
    figures and the per-rank lines theirs; text: slog's key=value records."""
    cfg = servekit.write_config(tmp_path / "l.yaml", dataset=str(gen_dataset), batch_size=1000,
                                epochs=1, ranks=1, outputs=OUTPUTS)  # fmt: skip
    for fmt in ("json", "text"):
        job = f"log{fmt}-" + uuid.uuid4().hex[:8]
        serve = group.serve(cfg, job, "--log-format", fmt, "--progress", "50ms")
        with shmloader.attach(job, dir=shm_dir, timeout=20, batch_timeout=20) as loader:
            for _ in loader:
                time.sleep(0.01)
        assert serve.wait(timeout=30) == 0, serve.describe()
        lines = serve.stderr.strip().splitlines()
        if fmt == "json":
            recs = [json.loads(line) for line in lines]
            assert all({"time", "level", "msg"} <= rec.keys() for rec in recs)
            status_recs = [rec for rec in recs if "rows_per_s" in rec]
            assert status_recs, "no status record"
            ring = status_recs[-1]["rings"][0]
            assert {
                "rank",
                "epoch",
                "step",
                "steps",
                "occupancy",
                "slots",
                "trainer",
                "wait_pct",
            } <= ring.keys()
            assert any(rec.get("steps_per_rank") == 20 for rec in recs), "no plan record"
            done = [rec for rec in recs if rec.get("rank") == 0 and "batches" in rec]
            assert done and done[0]["batches"] == 20 and done[0]["rows"] == servekit.GEN_ROWS
        else:
            assert all(line.startswith("time=") and " level=" in line for line in lines), lines[:3]
            assert any("rows_per_s=" in line for line in lines)


def test_status_without_jobs_and_of_a_job_that_is_not_live(
    shm_dir: Path, shmloader_bin: Path
) -> None:
    out = status(shmloader_bin, shm_dir)
    assert out.returncode == 0 and "no live jobs" in out.stdout
    assert json.loads(status(shmloader_bin, shm_dir, "--json").stdout) == []
    out = status(shmloader_bin, shm_dir, "nosuchjob", "--once")
    assert (
        out.returncode == 1 and "no live producer" in out.stderr and "live jobs: none" in out.stderr
    )
    out = status(shmloader_bin, shm_dir, "-h")
    assert out.returncode == 0 and "usage: shmloader status" in out.stdout


LEAVER = """
import sys, shmloader
loader = shmloader.attach(sys.argv[1], 1, dir=sys.argv[2], timeout=20)
kept = [loader.next(), loader.next()]  # still referenced at exit: no detach runs
print("read", flush=True)
"""


def test_a_trainer_that_exits_without_detaching_holds_nobody_back(
    group, gen_dataset: Path, tmp_path: Path, shm_dir: Path, shmloader_bin: Path
) -> None:
    """Its ring header still names its pid, but its consumer lock went with the process:
    serve, status and the metrics count it gone, and the other rank reads on."""
    cfg = servekit.write_config(tmp_path / "x.yaml", dataset=str(gen_dataset), batch_size=250,
                                epochs=0, ranks=2, outputs=OUTPUTS)  # fmt: skip
    job = "leave-" + uuid.uuid4().hex[:8]
    serve = group.serve(cfg, job)
    leaver = group.run([sys.executable, "-c", LEAVER, job, str(shm_dir)], timeout=60)
    assert leaver.rc == 0 and "read" in leaver.stdout, leaver.describe()
    with shmloader.attach(job, 0, dir=shm_dir, timeout=20, batch_timeout=10) as loader:
        taken = 0
        for _ in loader:  # 5 epochs' worth: many windows past where rank 1 stopped
            taken += 1
            if taken == 200:
                break
        doc = json.loads(status(shmloader_bin, shm_dir, job, "--json", "--interval", "0.2").stdout)
    assert taken == 200
    assert doc["rings"][1]["trainer_pid"] == 0, doc["rings"][1]
    serve.signal(signal.SIGTERM)
    assert serve.wait(timeout=20) == 0, serve.describe()
