"""`shmloader inspect --verify`, the real binary, on files of other writers and under a
signal: what the Go tests (cmd/shmloader/verify_test.go, producer/serve/verify_test.go)
cannot make or do. pyarrow writes standard page CRCs, which arrow-go cannot, so a flipped
value byte in an uncompressed page is found and its page named; a chunk checksum of a gen
file that no page check explains is reported as such; Ctrl-C ends a long run at once,
with what it found so far.
"""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import servekit

DAMAGED_HINT = "what to do: the file is damaged (or is not Parquet as written)"


def verify(shmloader_bin: Path, *args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([str(shmloader_bin), "inspect", "--verify", *args],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    servekit.assert_no_panic(proc.stderr)
    return proc


def damaged_lines(stdout: str) -> list[str]:
    return [ln[2:] for ln in stdout.splitlines() if ln.startswith("  ")]


def test_page_crcs_of_another_writer_name_the_page(shmloader_bin, tmp_path):
    """Two pyarrow files, uncompressed and without dictionaries, with page CRCs: a value
    byte flipped in a page of another column of each is found by the CRC alone, and both
    are reported with file, row group, column and page."""
    ds = tmp_path / "crc"
    ds.mkdir()
    rng = np.random.default_rng(2)
    n = 3000
    for name in ("a.parquet", "b.parquet"):
        table = pa.table({"id": pa.array(np.arange(n), pa.int64()),
                          "v": pa.array(rng.normal(size=n), pa.float64()),
                          "w": pa.array(rng.integers(0, 1 << 40, size=n), pa.int64())})  # fmt: skip
        pq.write_table(table, ds / name, row_group_size=1000, compression="none",
                       use_dictionary=False, write_page_checksum=True,
                       data_page_size=2048)  # fmt: skip
    servekit.flip_middle_of_chunk(ds / "a.parquet", 1, "v", n=1)
    servekit.flip_middle_of_chunk(ds / "b.parquet", 2, "w", n=1)
    proc = verify(shmloader_bin, str(ds))
    assert proc.returncode == 1, proc
    lines = damaged_lines(proc.stdout)
    assert len(lines) == 2, proc.stdout
    want = [("a.parquet", 1, "v"), ("b.parquet", 2, "w")]
    for line, (file, rg, col) in zip(lines, want, strict=True):
        assert re.match(rf'{re.escape(str(ds / file))}: row group {rg}: column "{col}": '
                        r"page \d+ \(chunk offset \d+\): "
                        r"page CRC [0-9a-f]{8}, computed [0-9a-f]{8}", line), line  # fmt: skip
    assert proc.stdout.count(DAMAGED_HINT) == 1, proc.stdout
    assert "2 damaged column chunks, in 2 files" in proc.stderr, proc.stderr
    # With the config that serve would run, the same two are found, by serve's own roads.
    outputs = {"v": {"columns": "v", "dtype": "float64"}, "w": "w", "id": "id"}
    cfg = servekit.write_config(tmp_path / "c.yaml", dataset=str(ds), batch_size=100,
                                outputs=outputs)  # fmt: skip
    proc = verify(shmloader_bin, "--config", str(cfg), "--quiet")
    assert proc.returncode == 1 and damaged_lines(proc.stdout) == lines, proc


def test_gen_checksum_without_a_page_at_fault(shmloader_bin, gen_dataset, tmp_path):
    """Flipped bytes inside snappy literals of a gen file decompress into other values:
    only the footer's chunk checksum sees them, which is reported, saying that no page
    check can tell which page, for the chunk serve fails on (test_serve_badinput)."""
    ds = tmp_path / "ds"
    shutil.copytree(gen_dataset, ds)
    servekit.flip_middle_of_chunk(ds / "part-00001.parquet", 5, "f003")
    proc = verify(shmloader_bin, "--workers", "2", str(ds))
    assert proc.returncode == 1, proc
    (line,) = damaged_lines(proc.stdout)
    assert re.match(rf'{re.escape(str(ds / "part-00001.parquet"))}: row group 5: column "f003": '
                    r"column chunk at offset \d+: footer CRC [0-9a-f]{8}, computed [0-9a-f]{8}; "
                    r"every page passes the page checks", line), line  # fmt: skip


def test_ctrl_c_stops_at_once_with_what_was_found(shmloader_bin, tmp_path):
    """SIGINT during a long run: the process ends within a second, exit status 1, with the
    damage found so far and how far it got on stdout."""
    ds = tmp_path / "big"
    subprocess.run([str(shmloader_bin), "gen", "--out", str(ds), "--rows", "800000", "--files", "2",
                    "--row-group-rows", "1000", "--features", "40", "--categoricals", "4",
                    "--strings", "1", "--quiet"], check=True, timeout=300)  # fmt: skip
    servekit.flip_middle_of_chunk(ds / "part-00000.parquet", 0, "c01", n=64)
    argv = [str(shmloader_bin), "inspect", "--verify", "--workers", "1", str(ds)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.3)  # of about 2 s on one core here
    assert proc.poll() is None, "the run ended before the signal: make the dataset larger"
    proc.send_signal(signal.SIGINT)
    sent = time.monotonic()
    stdout, stderr = proc.communicate(timeout=30)
    took = time.monotonic() - sent
    servekit.assert_no_panic(stderr)
    assert took < 1.0, f"{took:.2f} s from SIGINT to exit"
    assert proc.returncode == 1, (stdout, stderr)
    m = re.search(r"^stopped by a signal: checked (\d+) of 800 row groups, "
                  r".*: 1 damaged column chunk, in 1 file$", stdout, re.M)  # fmt: skip
    assert m and 0 < int(m.group(1)) < 800, stdout
    (line,) = damaged_lines(stdout)
    assert line.startswith(f'{ds / "part-00000.parquet"}: row group 0: column "c01": '), line
    assert "stopped by a signal after" in stderr, stderr


@pytest.mark.parametrize("flags", [[], ["--quiet"]], ids=["progress", "quiet"])
def test_clean_dataset(shmloader_bin, gen_dataset, flags):
    proc = verify(shmloader_bin, *flags, str(gen_dataset))
    assert proc.returncode == 0, proc
    assert re.search(r"^checked 20 row groups, \d+ column chunks, \d+ pages, .*: nothing damaged$",
                     proc.stdout, re.M), proc.stdout  # fmt: skip
    assert all(ln.startswith("inspect --verify: ") for ln in proc.stderr.splitlines()), proc.stderr


@pytest.mark.parametrize("crc", [True, False], ids=["page CRCs", "no CRCs"])
def test_pages_no_crc_covers_are_said(shmloader_bin, tmp_path, crc):
    """A clean pyarrow file: with page CRCs, plain "nothing damaged"; without (pyarrow's
    default), the summary says how many pages no check could fully see, and why."""
    ds = tmp_path / "ds"
    ds.mkdir()
    table = pa.table({"id": pa.array(np.arange(2000), pa.int64())})
    pq.write_table(table, ds / "a.parquet", row_group_size=1000, write_page_checksum=crc)
    proc = verify(shmloader_bin, str(ds), "--quiet")
    assert proc.returncode == 0, proc
    if crc:
        assert re.search(r": nothing damaged$", proc.stdout, re.M), proc.stdout
        assert "no CRC" not in proc.stdout
    else:
        m = re.search(
            r"pages, .*: nothing damaged that a check can see "
            r"\((\d+) of (\d+) pages carry no CRC\)$",
            proc.stdout,
            re.M,
        )
        assert m and m.group(1) == m.group(2) and int(m.group(1)) >= 2, proc.stdout
        assert "write_page_checksum=True" in proc.stdout
