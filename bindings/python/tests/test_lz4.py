"""Parquet's deprecated LZ4 codec, as `shmloader gen --compression lz4` writes it (Hadoop
framing: each raw LZ4 block behind its big-endian decompressed and compressed sizes).

- pyarrow (Arrow C++) reads those files, with pages of several blocks, to the very values
  of the snappy files of the same flags: our framing is the one Arrow C++ expects, not
  just one our own reader accepts;
- `shmloader serve` over the LZ4 dataset delivers the byte-identical batch stream it
  delivers over the snappy one.

pyarrow itself cannot write this codec: its compression="lz4" writes LZ4_RAW (checked
below), so files of other writers are covered by the Go tests' raw-block and frame pages.
"""

from __future__ import annotations

import re
import subprocess
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import servekit

# Input bytes per Hadoop block that shmloader writes (producer/pages/lz4.go).
HADOOP_BLOCK = 256 * 1024 - (256 * 1024) // 255 - 16

# One file of 60000-row groups: column id (int64, no dictionary) is 480 kB per row group,
# in pages of arrow-go's 1 MiB default, so its pages hold two blocks.
BIG_PAGES = [
    "--rows", "120000", "--files", "1", "--row-group-rows", "60000", "--features", "3",
    "--categoricals", "2", "--strings", "1", "--list-max", "5", "--null-fraction", "0.1",
    "--seed", "11", "--quiet",
]  # fmt: skip


def gen(shmloader_bin: Path, out: Path, codec: str, flags: list[str]) -> Path:
    proc = subprocess.run(
        [str(shmloader_bin), "gen", "--out", str(out), "--compression", codec, *flags],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, f"gen --compression {codec}: {proc.stderr}"
    return out


def codecs(shmloader_bin: Path, path: Path) -> str:
    """The COMPRESSION column of `shmloader inspect`, which, unlike pyarrow's metadata
    (LZ4 for both), tells LZ4 from LZ4_RAW."""
    proc = subprocess.run([str(shmloader_bin), "inspect", str(path)],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    m = re.search(r"\.parquet +\d+ +\d+ +[0-9.]+ (?:[KMGT]iB|B) +(\S+)", proc.stdout)
    assert m, proc.stdout
    return m.group(1)


@pytest.fixture(scope="module")
def datasets(shmloader_bin: Path, tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("lz4")
    return {
        "lz4": gen(shmloader_bin, tmp / "lz4", "lz4", servekit.GEN_FLAGS),
        "snappy": gen(shmloader_bin, tmp / "snappy", "snappy", servekit.GEN_FLAGS),
        "lz4-big": gen(shmloader_bin, tmp / "lz4-big", "lz4", BIG_PAGES),
        "snappy-big": gen(shmloader_bin, tmp / "snappy-big", "snappy", BIG_PAGES),
    }


@pytest.mark.parametrize("name", ["lz4", "lz4-big"])
def test_pyarrow_reads_the_lz4_of_gen_to_the_values_of_snappy(shmloader_bin, datasets, name):
    lz4, snappy = datasets[name], datasets[name.replace("lz4", "snappy")]
    assert codecs(shmloader_bin, lz4) == "LZ4"
    got, want = pq.read_table(lz4), pq.read_table(snappy)
    assert got.num_rows == want.num_rows > 0
    assert got.equals(want), f"{name}: pyarrow reads other values from the LZ4 files"
    if name == "lz4-big":
        meta = pq.ParquetFile(next(lz4.glob("*.parquet"))).metadata
        col = meta.row_group(0).column(meta.schema.names.index("id"))
        assert col.total_uncompressed_size > 1.5 * HADOOP_BLOCK, "no page of several blocks"


def test_serve_delivers_the_same_batches_from_lz4_as_from_snappy(group, datasets):
    streams = {}
    for name in ("lz4", "snappy"):
        cfg = servekit.write_config(
            group.tmp / f"{name}.yaml", dataset=str(datasets[name]), batch_size=500, seed=5,
            epochs=1, ranks=1, shuffle={"row_groups": True, "window": 3},
            outputs={
                "x": {"columns": ["f000..f007"], "transforms": [{"fill_null": 0}]},
                "strs": {"columns": "s0*", "transforms": [{"fill_null": ""}, {"hash_bucket": 99}]},
                "seq": {"columns": "seq", "transforms": [{"pad": 6}]},
                "id": "id",
            },
        )  # fmt: skip
        job = f"lz4-{name}-" + uuid.uuid4().hex[:8]
        consumer = group.consume(job, 0, f"{name}-r0")
        serve = group.serve(cfg, job, "--drain-timeout", "20s")
        res = consumer.result(timeout=60)
        assert serve.wait(timeout=30) == 0, serve.describe()
        servekit.assert_no_panic(serve.stderr)
        assert res.end == "stream_end", res.meta
        streams[name] = res.stream()
    assert len(streams["lz4"]) == servekit.GEN_ROWS // 500
    assert streams["lz4"] == streams["snappy"]


def test_pyarrow_writes_lz4_raw_for_lz4(shmloader_bin, tmp_path):
    """Why no file here comes from pyarrow: for compression="lz4" it writes LZ4_RAW. Should
    that change, read such a file here too."""
    path = tmp_path / "pyarrow.parquet"
    pq.write_table(pa.table({"x": list(range(1000))}), path, compression="lz4")
    assert codecs(shmloader_bin, path) == "LZ4_RAW"
