"""Bad input to `shmloader serve`: every case exits non-zero with a clear message on stderr
that names the file / row group / column / config key as applicable, without a Go panic,
leaves no segment behind, and never hands a waiting trainer a batch (or, for a corrupt row
group in the middle of the data, never a batch with wrong bytes: the trainer gets the
correct batches before it and then an error).
"""

from __future__ import annotations

import re
import shutil
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import servekit

OUTPUTS = {
    "x": {"columns": ["f000..f007"], "dtype": "float32", "transforms": [{"fill_null": 0}]},
    "id": "id",
}
IN_ORDER = {"row_groups": False, "window": 0}


def expect_failure(group: servekit.Group, cfg: Path, *flags: str,
                   mentions: list[str], batches_ok: bool = False,
                   ) -> tuple[servekit.Serve, servekit.Result]:  # fmt: skip
    """Serve ``cfg`` with a trainer waiting on rank 0; check the failure; return both."""
    job = "bad-" + uuid.uuid4().hex[:12]
    flag = group.tmp / f"{job}.done"
    waiter = group.consume(job, 0, f"waiter-{job}", "--until-file", str(flag),
                           "--attach-timeout", "30", "--batch-timeout", "10")  # fmt: skip
    serve = group.serve(cfg, job, "--drain-timeout", "5s", *flags)
    try:
        rc = serve.wait(timeout=20)
    finally:
        flag.touch()
    res = waiter.result(timeout=15)
    stderr = serve.stderr
    servekit.assert_no_panic(stderr)
    assert rc != 0, f"serve exited 0 on bad input\n{serve.describe()}"
    err = error_line(serve)
    for word in mentions:
        assert word in err, f"the error does not name {word!r}: {err}\n{stderr}"
    assert servekit.segments(group.shm_dir) == [], (
        f"segments left in {group.shm_dir}: {servekit.segments(group.shm_dir)}"
    )
    if not batches_ok:
        assert res.batches == [], f"a trainer got {len(res.batches)} batches from bad input"
    if res.end == "gone":  # it attached: it is told why serve stopped, as serve says it
        assert res.meta["stop"] == "error", res.meta
        for word in mentions:
            assert word in res.meta["reason"], f"the trainer's reason lacks {word!r}: {res.meta}"
            assert word in res.meta["message"], f"ProducerGone's message lacks {word!r}: {res.meta}"
    assert res.end in ("never-attached", "gone") or res.end.startswith("error:"), (
        f"the waiting trainer ended with {res.end!r}"
    )
    return serve, res


def error_line(serve: servekit.Serve) -> str:
    """The error serve exits with: its last `shmloader serve:` line, with the one before
    it when that is one too (the error, then what to do: dataset.Remedy)."""
    lines = serve.stderr.splitlines()
    at = [i for i, ln in enumerate(lines) if ln.startswith("shmloader serve:")]
    assert at, f"no error line on stderr:\n{serve.stderr}"
    first = at[-2] if len(at) > 1 and at[-2] == at[-1] - 1 else at[-1]
    return "\n".join(lines[first : at[-1] + 1])


def config(path: Path, dataset: Path | str, **keys: Any) -> Path:
    keys.setdefault("outputs", OUTPUTS)
    keys.setdefault("batch_size", 500)
    return servekit.write_config(path, dataset=str(dataset), **keys)


def copy_dataset(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


# -- config ----------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["output", "filter"])
def test_missing_column(group, gen_dataset, tmp_path, where):
    if where == "output":
        cfg = config(tmp_path / "c.yaml", gen_dataset,
                     outputs={**OUTPUTS, "y": {"columns": ["f000", "nope"]}})  # fmt: skip
    else:
        cfg = config(tmp_path / "c.yaml", gen_dataset,
                     filter=[{"column": "nope", "op": "not_null"}])  # fmt: skip
    expect_failure(group, cfg, mentions=["nope"])


@pytest.mark.parametrize(
    "text, key, line",
    [
        ("dataset: {ds}\nbatch_size: 10\nbatchsize: 10\noutputs:\n  id: id\n", "batchsize", 3),
        ("dataset: {ds}\nshuffle:\n  row_groups: false\n  windw: 2\noutputs:\n  id: id\n",
         "windw", 4),
        ("dataset: {ds}\noutputs:\n  id:\n    columns: id\n    transform: []\n",
         "transform", 5),
    ],
    ids=["top-level", "nested", "output"],
)  # fmt: skip
def test_unknown_config_key_names_the_key_and_its_line(group, gen_dataset, tmp_path, text, key,
                                                       line):  # fmt: skip
    cfg = tmp_path / "typo.yaml"
    cfg.write_text(text.format(ds=gen_dataset))
    serve, _ = expect_failure(group, cfg, mentions=[key])
    assert re.search(rf"{re.escape(str(cfg))}:{line}\b|line {line}\b", error_line(serve)), (
        f"stderr does not give line {line}:\n{serve.stderr}"
    )


# -- dataset -----------------------------------------------------------------------------------


# What serve says to do, on the line under the error (dataset.Remedy).
DAMAGED_HINT = "the file is damaged (or is not Parquet as written): copy it again or write it again"
SCHEMA_HINT = "every file of a dataset must have the columns of the first, with the same types"


def test_type_differs_across_files(group, tmp_path):
    ds = tmp_path / "mixed"
    ds.mkdir()
    pq.write_table(pa.table({"id": pa.array(range(100), pa.int64()),
                             "x": pa.array(range(100), pa.int64())}), ds / "a.parquet")  # fmt: skip
    pq.write_table(pa.table({"id": pa.array(range(100, 200), pa.int64()),
                             "x": pa.array(np.arange(100.0), pa.float64())}),
                   ds / "b.parquet")  # fmt: skip
    cfg = config(tmp_path / "c.yaml", ds, batch_size=10, outputs={"x": "x", "id": "id"})
    expect_failure(group, cfg, mentions=["b.parquet", "x", SCHEMA_HINT])


@pytest.mark.parametrize("damage", ["truncated", "not-parquet"])
def test_unreadable_file(group, gen_dataset, tmp_path, damage):
    ds = copy_dataset(gen_dataset, tmp_path / "ds")
    victim = ds / "part-00001.parquet"
    if damage == "truncated":
        with open(victim, "r+b") as f:
            f.truncate(victim.stat().st_size * 6 // 10)
    else:
        victim.write_bytes(b"this is not a parquet file\n" * 100)
    cfg = config(tmp_path / "c.yaml", ds)
    expect_failure(group, cfg, mentions=["part-00001.parquet", DAMAGED_HINT])


def check_delivered(res: servekit.Result, reference: dict[str, np.ndarray],
                    bad_ids: range) -> None:  # fmt: skip
    """Batches a trainer got before the error: all of them correct, none from the bad part."""
    if not res.batches:
        return
    ids = res.tensors["id"]
    assert not np.isin(ids, np.asarray(bad_ids)).any(), "rows of the corrupt row group served"
    for name, want in reference.items():
        got = res.tensors[name]
        assert np.array_equal(got, want[ids], equal_nan=True), f"{name}: wrong bytes served"


def test_flipped_bytes_in_a_column_chunk_of_a_gen_file(group, gen_dataset, tmp_path):
    """gen files carry a CRC per column chunk in the footer."""
    ds = copy_dataset(gen_dataset, tmp_path / "ds")
    victim = ds / "part-00001.parquet"
    servekit.flip_middle_of_chunk(victim, 5, "f003")
    cfg = config(tmp_path / "c.yaml", ds, shuffle=IN_ORDER)
    _, res = expect_failure(
        group,
        cfg,
        mentions=["part-00001.parquet", "row group 5", "f003", DAMAGED_HINT],
        batches_ok=True,
    )
    assert res.end == "gone", res.meta  # the trainer attached and learnt why serve stopped
    clean = pq.read_table(gen_dataset)
    x = np.stack([np.nan_to_num(clean[f"f{j:03d}"].to_numpy(zero_copy_only=False), nan=0.0)
                  for j in range(8)], axis=1).astype(np.float32)  # fmt: skip
    check_delivered(res, {"x": x, "id": clean["id"].to_numpy()}, range(15000, 16000))


def random_values_file(ds: Path, compression: str, crc: bool) -> pa.Table:
    """3 row groups of 1,000 ids and random float64s (which snappy stores as literals)."""
    ds.mkdir()
    rng = np.random.default_rng(1)
    n = 3000
    table = pa.table({"id": pa.array(np.arange(n), pa.int64()),
                      "v": pa.array(rng.normal(size=n), pa.float64())})  # fmt: skip
    pq.write_table(table, ds / "data.parquet", row_group_size=1000, compression=compression,
                   use_dictionary=False, write_page_checksum=crc)  # fmt: skip
    return table


@pytest.mark.parametrize("compression", ["none", "snappy"])
def test_flipped_bytes_in_a_page_with_a_standard_page_crc(group, tmp_path, compression):
    """A file of another writer (pyarrow, page CRCs written)."""
    ds = tmp_path / "crc"
    table = random_values_file(ds, compression, crc=True)
    victim = ds / "data.parquet"
    servekit.flip_middle_of_chunk(victim, 1, "v")
    cfg = config(tmp_path / "c.yaml", ds, batch_size=100, shuffle=IN_ORDER,
                 outputs={"v": {"columns": "v", "dtype": "float64"}, "id": "id"})  # fmt: skip
    _, res = expect_failure(
        group, cfg, mentions=["data.parquet", "row group 1", '"v"', DAMAGED_HINT], batches_ok=True
    )
    check_delivered(res, {"v": table["v"].to_numpy(), "id": table["id"].to_numpy()},
                    range(1000, 2000))  # fmt: skip


@pytest.mark.parametrize("compression", ["none", "snappy"])
def test_overwritten_values_in_a_page_without_a_crc_are_served(group, tmp_path, compression):
    """What docs/serving.md says no reader can catch without a page CRC: 16 bytes
    overwritten in the middle of a page's values, uncompressed or inside a snappy literal
    (the page still decompresses to the size its header gives), are served as data, as
    pyarrow reads them."""
    ds = tmp_path / "nocrc"
    table = random_values_file(ds, compression, crc=False)
    servekit.flip_middle_of_chunk(ds / "data.parquet", 1, "v")
    cfg = config(tmp_path / "c.yaml", ds, batch_size=100, shuffle=IN_ORDER,
                 outputs={"v": {"columns": "v", "dtype": "float64"}, "id": "id"})  # fmt: skip
    t = read_all(group, cfg).tensors
    assert np.array_equal(t["id"], np.arange(3000))
    changed = np.flatnonzero(t["v"] != table["v"].to_numpy())
    assert 2 <= len(changed) <= 3 and all(1000 <= i < 2000 for i in changed), changed
    as_pyarrow_reads = pq.read_table(ds / "data.parquet")["v"].to_numpy()
    assert np.array_equal(t["v"], as_pyarrow_reads, equal_nan=True)


def test_empty_directory(group, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    cfg = config(tmp_path / "c.yaml", empty)
    expect_failure(group, cfg, mentions=[str(empty)])


def test_glob_matching_nothing(group, gen_dataset, tmp_path):
    pattern = str(gen_dataset / "*.nothing")
    cfg = config(tmp_path / "c.yaml", pattern)
    expect_failure(group, cfg, mentions=[pattern])


@pytest.mark.parametrize(
    "flt",
    [
        # Every row group is pruned by its statistics (ids are >= 0).
        [{"column": "id", "op": "<", "value": 0}],
        # Statistics cannot prune (c00 spans 0..9 in every row group); no row passes.
        [{"column": "c00", "op": "==", "value": 5}, {"column": "c00", "op": "==", "value": 6}],
    ],
    ids=["pruned-by-stats", "read-and-counted"],
)
def test_zero_rows_left_after_the_filter(group, gen_dataset, tmp_path, flt):
    cfg = config(tmp_path / "c.yaml", gen_dataset, filter=flt)
    serve, _ = expect_failure(group, cfg, mentions=[])
    assert "filter" in error_line(serve), serve.stderr


def test_batch_larger_than_the_dataset(group, gen_dataset, tmp_path):
    cfg = config(tmp_path / "c.yaml", gen_dataset, batch_size=30000)
    serve, _ = expect_failure(group, cfg, mentions=["30000"])
    assert "batch_size" in error_line(serve), serve.stderr


@pytest.mark.parametrize(
    "flags, key",
    [(["--ranks", "0"], "ranks"), (["--batch-size", "0"], "batch_size"),
     (["--node-rank", "2", "--node-count", "2"], "node.rank"), (["--epochs", "x"], "epochs")],
    ids=["ranks-0", "batch-size-0", "node-rank-past-count", "epochs-not-a-number"],
)  # fmt: skip
def test_bad_flag_names_the_key(group, gen_dataset, tmp_path, flags, key):
    cfg = config(tmp_path / "c.yaml", gen_dataset)
    expect_failure(group, cfg, *flags, mentions=[key])


# -- unusual but valid input is served exactly -------------------------------------------------


def read_all(group: servekit.Group, cfg: Path) -> servekit.Result:
    job = "odd-" + uuid.uuid4().hex[:12]
    consumer = group.consume(job, 0, "r0")
    serve = group.serve(cfg, job, "--drain-timeout", "10s")
    rc = serve.wait(timeout=20)
    servekit.assert_no_panic(serve.stderr)
    assert rc == 0, serve.describe()
    res = consumer.result(timeout=20)
    assert res.end == "stream_end", res.end
    return res


def test_columns_in_another_order_in_another_file_are_matched_by_name(group, tmp_path):
    ds = tmp_path / "perm"
    ds.mkdir()
    n = 100
    ids = np.arange(2 * n)
    pq.write_table(pa.table({"id": ids[:n], "x": ids[:n] + 1000, "y": ids[:n] + 5000}),
                   ds / "a.parquet")  # fmt: skip
    pq.write_table(pa.table({"id": ids[n:], "y": ids[n:] + 5000, "x": ids[n:] + 1000}),
                   ds / "b.parquet")  # fmt: skip
    cfg = config(tmp_path / "c.yaml", ds, batch_size=10, shuffle=IN_ORDER,
                 outputs={"x": "x", "y": "y", "id": "id"})  # fmt: skip
    t = read_all(group, cfg).tensors
    assert np.array_equal(t["id"], ids)
    assert np.array_equal(t["x"], ids + 1000), "x mixed up with y in the second file"
    assert np.array_equal(t["y"], ids + 5000)


def test_an_empty_file_and_uneven_row_groups(group, tmp_path):
    ds = tmp_path / "uneven"
    ds.mkdir()
    n = 100
    t = pa.table({"id": pa.array(np.arange(n), pa.int64()),
                  "x": pa.array(np.arange(n) * 2, pa.int64())})  # fmt: skip
    pq.write_table(t.slice(0, 0), ds / "a.parquet")
    pq.write_table(t.slice(0, 37), ds / "b.parquet", row_group_size=30)
    pq.write_table(t.slice(37, 1), ds / "c.parquet")
    pq.write_table(t.slice(38), ds / "d.parquet", row_group_size=7)
    cfg = config(tmp_path / "c.yaml", ds, batch_size=10, shuffle=IN_ORDER,
                 outputs={"x": "x", "id": "id"})  # fmt: skip
    got = read_all(group, cfg).tensors
    assert np.array_equal(got["id"], np.arange(n))
    assert np.array_equal(got["x"], np.arange(n) * 2)
