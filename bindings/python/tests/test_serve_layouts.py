"""Dataset layouts real users have, through `shmloader serve`, on both read paths.

One dataset directory is written here with pyarrow the way tools write them: hive
partitions (``pyarrow.dataset.write_dataset`` with ``partitioning_flavor="hive"``, a
null partition value, a value that needs URI escaping), a file in a further folder
below its partition folders, Spark's and Dask's marker files (``_SUCCESS``,
``_common_metadata``, a hidden ``.crc``), structs nested two deep with nulls at every
level, and the same columns written in different layouts by different files: a pandas
categorical (dictionary<int32, string>) beside polars' large_string and a plain string,
list beside large_list. Serve runs once on the page path (the default: outputs of flat
columns decoded page by page straight into the transforms) and once on the array path
(SHMLOADER_DECODER=arrow: every output through Arrow arrays, flat columns decoded into
them by the same page decoder, nested ones by arrow-go); every tensor is checked value
by value against pyarrow.dataset's own reading of the directory, and the two runs
against each other byte for byte.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
import servekit

BATCH = 8
NAN = math.nan

OUTPUTS: dict[str, Any] = {
    "id": "id",
    "year_x": {"columns": ["year", "st.b.c"], "dtype": "float64"},
    "nested": {"columns": ["st.a", "st.b.c"], "dtype": "float64",
               "transforms": [{"fill_null": -1}]},
    "country": {"columns": "country", "transforms": [{"fill_null": "none"}, {"hash_bucket": 1000}]},
    "year_hash": {"columns": "year", "transforms": [{"hash_bucket": 7}]},
    "cat": {"columns": "cat", "transforms": [{"fill_null": "?"}, {"hash_bucket": 1000}]},
    "s": {"columns": "s", "transforms": [{"hash_bucket": 1000}]},
    "st_s": {"columns": "st.b.s", "transforms": [{"fill_null": ""}, {"hash_bucket": 100}]},
    "l": {"columns": "l", "transforms": [{"pad": {"length": 3, "value": -1}}]},
}  # fmt: skip


def row(i: int) -> dict[str, Any]:
    st: dict[str, Any] | None = {"a": i, "b": {"c": i / 4, "s": f"t{i % 5}"}}
    if i % 9 == 1:
        st = None
    elif i % 9 == 4:
        st = {"a": i, "b": None}
    elif i % 9 == 7:
        st = {"a": i, "b": {"c": None, "s": None}}
    return {
        "id": i,
        "cat": ["red", "blue", None, "green"][i % 4],
        "s": None if i % 5 == 2 else f"s{i % 7}",
        "l": None if i % 6 == 3 else list(range(i, i + i % 5)),
        "st": st,
    }


def schema(large: bool, categorical: bool) -> pa.Schema:
    text = pa.large_string() if large else pa.string()
    inner = pa.struct([("c", pa.float64()), ("s", text)])
    return pa.schema([
        ("id", pa.int64()),
        ("cat", pa.dictionary(pa.int32(), pa.string()) if categorical else text),
        ("s", text),
        ("l", pa.large_list(pa.int64()) if large else pa.list_(pa.int64())),
        ("st", pa.struct([("a", pa.int64()), ("b", inner)])),
    ])  # fmt: skip


def table(ids: range, sc: pa.Schema, **partitions: list[Any]) -> pa.Table:
    rows = [row(i) for i in ids]
    cols = {name: [r[name] for r in rows] for name in sc.names}
    # A categorical is built as pandas does: the strings, then dictionary-encoded.
    t = pa.table({name: pa.array(cols[name]).cast(sc.field(name).type)
                  if name == "cat" else pa.array(cols[name], sc.field(name).type)
                  for name in sc.names}, schema=sc)  # fmt: skip
    for key, values in partitions.items():
        t = t.append_column(key, pa.array(values))
    return t


def write_layouts(root: Path) -> None:
    # pandas-style: categoricals, plain strings and lists; two years, a null country.
    a = table(range(0, 48), schema(large=False, categorical=True),
              year=[2024 + i // 24 for i in range(48)],
              country=[None if i % 3 == 0 else "fr" for i in range(48)])  # fmt: skip
    ds.write_dataset(a, root, format="parquet", partitioning=["year", "country"],
                     partitioning_flavor="hive", basename_template="a-{i}.parquet",
                     max_rows_per_group=8, min_rows_per_group=1)  # fmt: skip
    # polars-style: large_string and large_list; a country that needs escaping.
    b = table(range(48, 96), schema(large=True, categorical=False), year=[2026] * 48,
              country=["a b" if i % 2 else "de" for i in range(48)])  # fmt: skip
    ds.write_dataset(b, root, format="parquet", partitioning=["year", "country"],
                     partitioning_flavor="hive", basename_template="b-{i}.parquet",
                     max_rows_per_group=8, min_rows_per_group=1,
                     existing_data_behavior="overwrite_or_ignore")  # fmt: skip
    # A file in a folder below its partition folders, written by pq.write_table.
    deep = root / "year=2027" / "country=us" / "extra"
    deep.mkdir(parents=True)
    pq.write_table(table(range(96, 112), schema(large=False, categorical=False)),
                   deep / "c.parquet", row_group_size=8)  # fmt: skip
    # What Spark, Dask and Hadoop leave beside the data.
    (root / "_SUCCESS").write_bytes(b"")
    pq.write_metadata(a.schema, root / "_common_metadata")
    (root / "year=2024" / ".a-0.parquet.crc").write_bytes(b"\0crc")


def reference(root: Path) -> list[dict[str, Any]]:
    """The rows as pyarrow.dataset reads the directory, files in path order (serve's)."""
    dset = ds.dataset(root, format="parquet", partitioning="hive",
                      exclude_invalid_files=False)  # fmt: skip
    rows: list[dict[str, Any]] = []
    for frag in sorted(dset.get_fragments(), key=lambda f: f.path):
        rows.extend(frag.to_table(schema=dset.schema).to_pylist())
    return rows


@pytest.fixture(scope="module")
def layouts(tmp_path_factory) -> tuple[Path, list[dict[str, Any]]]:
    tmp = tmp_path_factory.mktemp("layouts")
    root = tmp / "data"
    write_layouts(root)
    rows = reference(root)
    assert len(rows) == 112 and sorted(r["id"] for r in rows) == list(range(112))
    assert {r["country"] for r in rows} == {None, "fr", "de", "a b", "us"}
    return root, rows


def serve(shmloader_bin: Path, root: Path, tmp: Path, decoder: str) -> servekit.Result:
    cfg = servekit.write_config(
        tmp / f"layouts-{decoder}.yaml", dataset=str(root), batch_size=BATCH, partitions=1,
        shuffle={"row_groups": False, "window": 0}, drop_last=True, outputs=OUTPUTS,
    )  # fmt: skip
    return servekit.serve_in_order(
        shmloader_bin, tmp, cfg, f"rank0-{decoder}", {"SHMLOADER_DECODER": decoder}
    )


@pytest.fixture(scope="module")
def served(shmloader_bin: Path, tmp_path_factory, layouts, library) -> dict[str, servekit.Result]:
    root, _ = layouts
    tmp = tmp_path_factory.mktemp("layouts-serve")
    return {d: serve(shmloader_bin, root, tmp, d) for d in ("pages", "arrow")}


def field(r: dict[str, Any], path: str) -> Any:
    """A dotted field of a row, None where any struct on the way is."""
    v: Any = r
    for name in path.split("."):
        if v is None:
            return None
        v = v[name]
    return v


def expected(rows: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    def num(v: Any, null: float) -> float:
        return null if v is None else float(v)

    lists = [r["l"] for r in rows]
    padded = np.full((len(rows), 3), -1, np.int64)
    lens = np.zeros(len(rows), np.int32)
    for k, items in enumerate(lists):
        if items:
            n = min(3, len(items))
            padded[k, :n] = items[:n]
            lens[k] = n
    h = servekit.hash_bucket_column
    return {
        "id": np.array([r["id"] for r in rows], np.int64),
        "year_x": np.array([[r["year"], num(field(r, "st.b.c"), NAN)] for r in rows]),
        "nested": np.array(
            [[num(field(r, "st.a"), -1), num(field(r, "st.b.c"), -1)] for r in rows]
        ),  # fmt: skip
        "country": h(["none" if r["country"] is None else r["country"] for r in rows], 1000),
        "year_hash": h([r["year"] for r in rows], 7),
        "cat": h(["?" if r["cat"] is None else r["cat"] for r in rows], 1000),
        "s": h([r["s"] for r in rows], 1000),
        "st_s": h(["" if field(r, "st.b.s") is None else field(r, "st.b.s") for r in rows], 100),
        "l": padded,
        "l_len": lens,
    }


@pytest.mark.parametrize("decoder", ["pages", "arrow"])
def test_layouts_serve_what_pyarrow_reads(served, layouts, decoder):
    _, rows = layouts
    res = served[decoder]
    assert [b["rows"] for b in res.batches] == [BATCH] * (len(rows) // BATCH)
    want = expected(rows)
    dtypes = {"year_x": "float64", "nested": "float64", "l_len": "int32"}
    for name, w in want.items():
        got = res.tensors[name]
        assert res.meta["dtypes"][name] == dtypes.get(name, "int64"), name
        assert got.shape == w.shape, (name, got.shape, w.shape)
        if got.dtype.kind == "f":
            servekit.assert_same_floats(got, w, f"{decoder}: {name}")
        else:
            bad = np.flatnonzero((got != w).reshape(len(got), -1).any(axis=1))
            assert bad.size == 0, (
                f"{decoder}: {name}: rows {bad[:8].tolist()} (ids {want['id'][bad[:8]].tolist()}) "
                f"got {got[bad[:8]].tolist()} want {w[bad[:8]].tolist()}"
            )


def test_both_decoders_give_the_same_bytes(served):
    assert served["pages"].stream() == served["arrow"].stream()


def test_inspect_lists_struct_fields_and_partitions(shmloader_bin, layouts, tmp_path):
    root, _ = layouts
    with servekit.Group(shmloader_bin, tmp_path, tmp_path) as g:
        child = g.run([str(shmloader_bin), "inspect", str(root)], timeout=20)
    out = child.stdout
    assert child.rc == 0, child.describe()
    assert "_common_metadata" not in out and "_SUCCESS" not in out and ".crc" not in out
    assert "country=a%20b" in out and "extra/c.parquet" in out
    for line in ("st.b.c", "st.b.s", "year", "country"):
        assert any(ln.split()[:1] == [line] for ln in out.splitlines()), (line, out)
    assert "the last 2 from key=value folders" in out
