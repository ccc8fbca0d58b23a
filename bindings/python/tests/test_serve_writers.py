"""Parquet files as real tools write them, with every type shmloader reads, through
`shmloader serve` on both of its roads.

One table of every supported type (ints and uints of every width; float16/32/64 with NaN,
infinities, -0 and subnormals; bools; string, large_string, binary and dictionaries of
strings; timestamps of every unit with and without a zone; date32/date64; time32/time64;
decimals of small and large precision, negative ones included; list and large_list of
ints, floats and strings; fixed_size_list<float32>; a struct; nulls wherever a null can
be, list elements and struct fields included) is written, 4096 rows in several files and
row groups, by:

  pyarrow        pq.write_table, a file per codec (snappy, zstd, gzip, brotli, lz4 (LZ4_RAW),
                 none), with and without dictionaries, data pages v1 and v2;
  pyarrow-int96  the timestamps alone, with use_deprecated_int96_timestamps (Spark's INT96);
  duckdb         COPY ... TO ... (FORMAT parquet), a file per codec (snappy, uncompressed,
                 gzip, zstd, brotli, lz4_raw), PARQUET_VERSION V1 and V2 (delta and
                 byte-stream-split encodings), an ENUM;
  duckdb-hive    COPY ... (FORMAT parquet, PARTITION_BY (part_k, region)): hive folders, null
                 (__HIVE_DEFAULT_PARTITION__) and escaped partition values;
  polars         DataFrame.write_parquet, a file per codec (uncompressed, snappy, gzip,
                 brotli, zstd, lz4), statistics on, off and full; it writes large_string,
                 large_binary, large_list, its Categorical and Enum, and Array
                 (fixed_size_list).

Each dataset is served on the page path (the default: outputs of flat columns decoded page
by page straight into the transforms) and on the array path (SHMLOADER_DECODER=arrow: every
output through Arrow arrays, flat columns decoded into them by the same page decoder, nested
ones by arrow-go), shuffle off, window 0, one partition and one rank, so rows arrive in file
order. There is one output per column (a struct's fields by dotted path) and a few transform
chains; every tensor is compared exactly (floats bitwise, NaN-aware) with a reference
computed with numpy from pyarrow's reading of the same files (pyarrow.dataset, files in path
order), per producer/transform/doc.go, and the two roads' batches with each other byte for
byte.

Files that shmloader refuses, and defaults that differ from pyarrow's, are the xfail tests at
the end.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
import servekit
from arrowref import check, counts, dec_float, dec_int, part_ref, seconds_ref

ROWS = 4096
BATCH = 256  # divides ROWS: every row is served
NULLS = 0.1  # the share of null rows, list elements and struct fields
NY = "America/New_York"
DECODERS = ("pages", "arrow")

INTS = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"]
INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
ZONES = {"": None, "_ny": NY, "_utc": "UTC", "_fixed": "+05:45"}
TS = ["ts_s", "ts_ms", "ts_us", "ts_ns", "ts_s_ny", "ts_ms_ny", "ts_us_ny", "ts_ns_ny",
      "ts_us_utc", "ts_ms_fixed"]  # fmt: skip
DATES = ["d32", "d64"]
TIMES = ["t32s", "t32ms", "t64us", "t64ns"]
DECIMALS = {"dec4_1": (4, 1), "dec9_2": (9, 2), "dec18_6": (18, 6), "dec38_10": (38, 10),
            "dec50_12": (50, 12)}  # fmt: skip
ENUM = ["lo", "mid", "hi"]
WORDS = ["", "a", "é", "日本語", "x" * 300, "a\x00b", " ", "<null>"] + [f"w{k}" for k in range(200)]


# -- the table -----------------------------------------------------------------------------


def ns(text: str) -> int:
    """Nanoseconds since 1970 of an ISO instant (UTC), to the second."""
    t = datetime.fromisoformat(text).replace(tzinfo=timezone.utc)
    return int((t - datetime(1970, 1, 1, tzinfo=timezone.utc)).total_seconds()) * 10**9


class Maker:
    """Columns of ROWS values: random ones with the type's edge values spread over the rows,
    and NULLS of the rows null."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def mask(self) -> np.ndarray:
        return self.rng.random(ROWS) < NULLS

    def holes(self, values: list[Any], edges: Sequence[Any] = ()) -> list[Any]:
        values = list(values)
        for k, e in enumerate(edges):
            values[(k * 97 + 3) % ROWS] = e
        return [None if m else v for v, m in zip(values, self.mask(), strict=True)]

    def array(self, values: list[Any], typ: pa.DataType, edges: Sequence[Any] = ()) -> pa.Array:
        return pa.array(self.holes(values, edges), typ)

    def ints(self, dtype: Any) -> pa.Array:
        info = np.iinfo(dtype)
        v = self.rng.integers(info.min, info.max, ROWS, dtype=dtype, endpoint=True).tolist()
        edges = [info.min, info.max, 0, 1, info.max - 1, -1 if info.min else 2]
        return self.array(v, pa.from_numpy_dtype(dtype), edges)

    def floats(self, dtype: Any) -> pa.Array:
        info = np.finfo(dtype)
        scale = 10.0 ** self.rng.integers(-3, 4, ROWS)
        v = list((self.rng.normal(0, 1, ROWS) * scale).astype(dtype))
        edges = [np.nan, np.inf, -np.inf, -0.0, 0.0, info.max, -info.max, info.smallest_subnormal,
                 -info.smallest_subnormal, info.tiny]  # fmt: skip
        for k, e in enumerate(edges):
            v[(k * 97 + 3) % ROWS] = dtype(e)
        return pa.array(np.array(v, dtype), mask=self.mask())

    def pick(self, pool: list[Any], typ: pa.DataType) -> pa.Array:
        return self.array([pool[k] for k in self.rng.integers(0, len(pool), ROWS)], typ, pool[:8])

    def dictionary(self, values: list[str], index: pa.DataType) -> pa.Array:
        idx = pa.array(self.rng.integers(0, len(values), ROWS), index, mask=self.mask())
        return pa.DictionaryArray.from_arrays(idx, values)

    def decimals(self, precision: int, scale: int) -> pa.Array:
        out = []
        for _ in range(ROWS):
            digits = self.rng.integers(0, 10, int(self.rng.integers(1, precision + 1)))
            u = int("".join(str(d) for d in digits))
            out.append(u if self.rng.random() < 0.5 else -u)
        top = 10**precision - 1
        edges = [top, -top, 0, 1, -1, 10**scale, -(10**scale) // 2]
        typ = (pa.decimal128 if precision <= 38 else pa.decimal256)(precision, scale)
        return self.array([Decimal(f"{u}E-{scale}") for u in out], typ,
                          [Decimal(f"{u}E-{scale}") for u in edges])  # fmt: skip

    def lists(self, element: Callable[[], Any], typ: pa.DataType) -> pa.Array:
        rows = [[None if self.rng.random() < NULLS else element()
                 for _ in range(int(self.rng.integers(0, 7)))] for _ in range(ROWS)]  # fmt: skip
        return self.array(rows, typ, [[], [element() for _ in range(9)]])


def base_table() -> pa.Table:
    m = Maker(20240)
    cols: dict[str, pa.Array] = {"id": pa.array(np.arange(ROWS), pa.int64())}
    for name, dtype in zip(INTS, INT_DTYPES, strict=True):
        cols[name] = m.ints(dtype)
    floats: list[tuple[str, Any]] = [("f16", np.float16), ("f32", np.float32), ("f64", np.float64)]
    for name, dtype in floats:
        cols[name] = m.floats(dtype)
    cols["b"] = m.array([bool(v) for v in m.rng.integers(0, 2, ROWS)], pa.bool_())
    cols["s"] = m.pick(WORDS, pa.string())
    cols["ls"] = m.pick(WORDS, pa.large_string())
    cols["bin"] = m.pick([w.encode() + b"\xff" for w in WORDS] + [b"", b"\x00"], pa.binary())
    cols["cat"] = m.dictionary(["red", "green", "blue", "", "violet"], pa.int32())  # pandas'
    cols["enum"] = m.dictionary(ENUM, pa.int8())
    # Instants from 1900 to 2100: the epoch and the nanosecond before it, New York's DST
    # changes, a leap day.
    edges = [0, -1, 1, ns("2021-03-14T06:59:59"), ns("2021-03-14T07:00:00"),
             ns("2021-11-07T05:59:59"), ns("2021-11-07T06:00:00"), ns("2024-02-29T23:59:59"),
             ns("1900-01-01T00:00:00"), ns("2099-12-31T23:59:59") + 999_999_999]  # fmt: skip
    base = m.rng.integers(ns("1900-01-01T00:00:00"), ns("2100-01-01T00:00:00"), ROWS).tolist()
    for k, e in enumerate(edges):
        base[(k * 97 + 3) % ROWS] = e
    per = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}
    for name in TS:
        unit, _, zone = name[3:].partition("_")
        tz = ZONES["_" + zone if zone else ""]
        cols[name] = m.array([v // per[unit] for v in base], pa.timestamp(unit, tz))
    days = [v // (86400 * 10**9) for v in base]
    cols["d32"] = m.array(days, pa.date32())
    cols["d64"] = m.array([d * 86_400_000 for d in days], pa.date64())
    tod = [v % (86400 * 10**9) for v in base]
    cols["t32s"] = m.array([v // 10**9 for v in tod], pa.time32("s"))
    cols["t32ms"] = m.array([v // 10**6 for v in tod], pa.time32("ms"))
    cols["t64us"] = m.array([v // 10**3 for v in tod], pa.time64("us"))
    cols["t64ns"] = m.array(tod, pa.time64("ns"))
    for name, (p, s) in DECIMALS.items():
        cols[name] = m.decimals(p, s)
    cols["li"] = m.lists(lambda: int(m.rng.integers(-(2**63), 2**63 - 1)), pa.list_(pa.int64()))
    cols["lli"] = m.lists(lambda: int(m.rng.integers(-1000, 1000)), pa.large_list(pa.int32()))
    cols["lf"] = m.lists(lambda: float(m.rng.choice([np.nan, -0.0, m.rng.normal()])),
                         pa.list_(pa.float64()))  # fmt: skip
    cols["lf32"] = m.lists(lambda: float(np.float32(m.rng.normal())), pa.list_(pa.float32()))
    cols["lstr"] = m.lists(lambda: WORDS[int(m.rng.integers(0, 20))], pa.list_(pa.string()))
    emb = [[None if m.rng.random() < NULLS else float(np.float32(m.rng.normal()))
            for _ in range(4)] for _ in range(ROWS)]  # fmt: skip
    cols["emb"] = m.array(emb, pa.list_(pa.float32(), 4))
    fields = zip(m.holes(m.rng.integers(-(10**12), 10**12, ROWS).tolist()),
                 m.holes([WORDS[k] for k in m.rng.integers(0, 30, ROWS)]),
                 m.holes(m.rng.normal(0, 1e6, ROWS).tolist()), strict=True)  # fmt: skip
    st = pa.struct([("a", pa.int64()), ("b", pa.string()), ("c", pa.float64())])
    cols["st"] = m.array([{"a": a, "b": b, "c": c} for a, b, c in fields], st)
    return pa.table(cols)


def slices(sizes: list[int]) -> list[tuple[int, int]]:
    """(offset, length) of consecutive slices of the rows, of the given sizes."""
    assert sum(sizes) == ROWS
    return list(zip(np.cumsum([0, *sizes[:-1]]).tolist(), sizes, strict=True))


# -- the writers ---------------------------------------------------------------------------

# Columns a writer cannot express, left out of its files (only there).
CANNOT = {
    # DuckDB has no half float (registering an Arrow float16 column fails: "Unsupported
    # Internal Arrow Type e") and no decimal of more than 38 digits.
    "duckdb": {"f16", "dec50_12"},
    "duckdb-hive": {"f16", "dec50_12"},
    # Polars has no half float, no decimal256 (from_arrow panics: "does not support
    # primitive Int256") and no fixed-offset zone ("unable to parse time zone: '+05:45'").
    "polars": {"f16", "dec50_12", "ts_ms_fixed"},
}

# Per file: the codec, as pyarrow's metadata names it, and the writer's options.
PYARROW_FILES = [  # compression, use_dictionary, data_page_version
    ("SNAPPY", "snappy", True, "1.0"),
    ("ZSTD", "zstd", False, "2.0"),
    ("GZIP", "gzip", True, "2.0"),
    ("BROTLI", "brotli", False, "1.0"),
    ("LZ4", "lz4", True, "2.0"),  # pyarrow's lz4 is LZ4_RAW (and so its metadata's LZ4)
    ("UNCOMPRESSED", "none", False, "1.0"),
]
DUCKDB_FILES = [  # rows, COMPRESSION, PARQUET_VERSION; a DuckDB row group holds 2048 rows
    ("SNAPPY", 2560, "snappy", "V1"),
    ("UNCOMPRESSED", 256, "uncompressed", "V2"),
    ("GZIP", 512, "gzip", "V1"),
    ("ZSTD", 256, "zstd", "V2"),
    ("BROTLI", 256, "brotli", "V1"),
    ("LZ4", 256, "lz4_raw", "V2"),  # DuckDB's lz4 is LZ4_RAW too
]
POLARS_FILES: list[tuple[str, Any, Any]] = [  # compression, statistics
    ("UNCOMPRESSED", "uncompressed", True),
    ("SNAPPY", "snappy", False),
    ("GZIP", "gzip", "full"),
    ("BROTLI", "brotli", True),
    ("ZSTD", "zstd", False),
    ("LZ4", "lz4", "full"),
]
SIZES6 = [700, 700, 700, 700, 700, 596]


def write_pyarrow(table: pa.Table, root: Path) -> None:
    for i, ((off, n), (_, codec, dictionary, version)) in enumerate(
        zip(slices(SIZES6), PYARROW_FILES, strict=True)
    ):
        pq.write_table(table.slice(off, n), root / f"part-{i}.parquet", row_group_size=300,
                       compression=codec, use_dictionary=dictionary, data_page_version=version,
                       data_page_size=4096)  # fmt: skip


def write_int96(table: pa.Table, root: Path) -> None:
    ts = table.select(["id", *TS])
    for i, (off, n) in enumerate(slices([2048, 2048])):
        pq.write_table(ts.slice(off, n), root / f"part-{i}.parquet", row_group_size=700,
                       use_dictionary=i == 0, use_deprecated_int96_timestamps=True)  # fmt: skip


def duck_select(version: str = "V1") -> str:
    """The rows of table t as DuckDB writes them here: enum as an ENUM (an Arrow dictionary
    registers as a VARCHAR); emb (a fixed_size_list: DuckDB's ARRAY) as a LIST, because
    DuckDB writes a null ARRAY row as four null entries (test_duckdb_array_with_null_rows); in
    PARQUET_VERSION V2 files i32 and u32 halved, because DuckDB writes INT32 deltas wider
    than 32 bits (test_duckdb_v2_int32_deltas_wider_than_32_bits)."""
    enum = "enum::ENUM(" + ", ".join(f"'{v}'" for v in ENUM) + ")"
    repl = [f"{enum} AS enum", "emb::FLOAT[] AS emb"]
    if version == "V2":
        repl += ["i32 // 2 AS i32", "u32 // 2 AS u32"]
    return f"SELECT * REPLACE ({', '.join(repl)}) FROM t"


def write_duckdb(table: pa.Table, root: Path) -> None:
    con = duckdb.connect()
    sizes = [n for _, n, _, _ in DUCKDB_FILES]
    for i, ((off, n), (_, _, codec, version)) in enumerate(
        zip(slices(sizes), DUCKDB_FILES, strict=True)
    ):
        con.register("t", table.slice(off, n))
        con.execute(f"COPY ({duck_select(version)}) TO '{root}/part-{i}.parquet' "
                    f"(FORMAT parquet, COMPRESSION {codec}, PARQUET_VERSION {version}, "
                    "ROW_GROUP_SIZE 2048)")  # fmt: skip
        con.unregister("t")
    con.close()


def write_duckdb_hive(table: pa.Table, root: Path) -> None:
    rng = np.random.default_rng(7)
    keys = pa.array([None if k == 3 else k for k in rng.integers(0, 4, ROWS).tolist()], pa.int64())
    regions = ["fr", "a b", "x/y", None]
    region = pa.array([regions[k] for k in rng.integers(0, 4, ROWS)], pa.string())
    con = duckdb.connect()
    con.register("t", table.append_column("part_k", keys).append_column("region", region))
    con.execute(f"COPY ({duck_select()}) TO '{root}' "
                "(FORMAT parquet, PARTITION_BY (part_k, region), OVERWRITE_OR_IGNORE)")  # fmt: skip
    con.close()


def write_polars(table: pa.Table, root: Path) -> None:
    df = pl.DataFrame(pl.from_arrow(table)).with_columns(pl.col("enum").cast(pl.Enum(ENUM)))
    for i, ((off, n), (_, codec, stats)) in enumerate(
        zip(slices(SIZES6), POLARS_FILES, strict=True)
    ):
        df.slice(off, n).write_parquet(root / f"part-{i}.parquet", compression=codec,
                                       statistics=stats, row_group_size=250,
                                       data_page_size=4096)  # fmt: skip


WRITERS: dict[str, Callable[[pa.Table, Path], None]] = {
    "pyarrow": write_pyarrow,
    "pyarrow-int96": write_int96,
    "duckdb": write_duckdb,
    "duckdb-hive": write_duckdb_hive,
    "polars": write_polars,
}


# -- pyarrow's reading ---------------------------------------------------------------------


@dataclass
class Reading:
    """pyarrow's reading of a dataset, files in path order (serve's); its leaf columns
    (a struct's fields by dotted path) and their types; each file's metadata; and the
    Arrow type shmloader reads each timestamp column as (flows)."""

    table: pa.Table
    files: list[str]
    leaves: dict[str, pa.DataType]
    meta: list[pq.FileMetaData]
    flows: dict[str, pa.DataType]

    def column(self, path: str) -> pa.Array:
        """A leaf by its dotted path; a field is null where its struct is."""
        top, *rest = path.split(".")
        arr = self.table.column(top).combine_chunks()
        for name in rest:
            arr = pc.struct_field(arr, [arr.type.get_field_index(name)])
        return arr

    def time(self, path: str) -> pa.Array:
        """A time column with the unit and zone it flows as in shmloader."""
        arr = self.column(path)
        return arr.cast(self.flows[path]) if path in self.flows else arr


def timestamp_flows(pf: pq.ParquetFile) -> dict[str, pa.DataType]:
    """The Arrow type arrow-go's pqarrow (and so shmloader) reads each timestamp column of a
    file as: the Parquet unit (INT96: ns); the zone of the file's ARROW:schema where it
    names the same unit, else UTC for an instant (isAdjustedToUTC), else none. pyarrow's
    zone differs in two cases (ZONE_DIFFERS)."""
    kv = pf.metadata.metadata or {}
    origin = None
    if b"ARROW:schema" in kv:
        origin = pa.ipc.read_schema(pa.py_buffer(base64.b64decode(kv[b"ARROW:schema"])))
    units = {"milliseconds": "ms", "microseconds": "us", "nanoseconds": "ns"}
    out = {}
    for i in range(len(pf.schema)):
        col = pf.schema.column(i)
        if col.physical_type == "INT96":
            unit, adjusted = "ns", False
        elif col.logical_type.type == "TIMESTAMP":
            lt = json.loads(col.logical_type.to_json())
            unit, adjusted = units[lt["timeUnit"]], lt["isAdjustedToUTC"]
        else:
            continue
        o = origin.field(col.path).type if origin and col.path in origin.names else None
        if o is not None and pa.types.is_timestamp(o) and o.unit == unit:
            tz = o.tz
        else:
            tz = "UTC" if adjusted else None
        out[col.path] = pa.timestamp(unit, tz)
    return out


def read(root: Path) -> Reading:
    dset = ds.dataset(root, format="parquet", partitioning="hive")
    frags = sorted(dset.get_fragments(), key=lambda f: f.path)
    table = pa.concat_tables([f.to_table(schema=dset.schema) for f in frags])
    leaves: dict[str, pa.DataType] = {}

    def walk(path: str, t: pa.DataType) -> None:
        if pa.types.is_struct(t):
            for f in t:
                walk(f"{path}.{f.name}", f.type)
        else:
            leaves[path] = t

    for f in table.schema:
        walk(f.name, f.type)
    files = [pq.ParquetFile(f.path) for f in frags]
    return Reading(table, [f.path for f in frags], leaves, [f.metadata for f in files],
                   timestamp_flows(files[0]))  # fmt: skip


# -- outputs and their references ----------------------------------------------------------


def kind(t: pa.DataType) -> str:
    if pa.types.is_dictionary(t):
        t = t.value_type
    if pa.types.is_integer(t) or pa.types.is_boolean(t):
        return "int"
    if pa.types.is_floating(t):
        return "float"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) \
            or pa.types.is_large_binary(t):  # fmt: skip
        return "str"
    if pa.types.is_temporal(t):
        return "time"
    if pa.types.is_decimal(t):
        return "dec"
    if pa.types.is_fixed_size_list(t):
        return "fsl"
    assert pa.types.is_list(t) or pa.types.is_large_list(t), t
    return "lstr" if kind(t.value_type) == "str" else "list"


FLOAT_DTYPE = {16: "float16", 32: "float32", 64: "float64"}
STR_HASH = {"buckets": 1 << 40, "seed": 9}
PAD = {"length": 4, "value": -7}
PAD_STR = [{"fill_null": "~"}, {"hash_bucket": 1009}, {"pad": {"length": 3, "value": -1}}]


def raw_output(t: pa.DataType) -> tuple[dict[str, Any], str]:
    """The output of one column alone (less its columns), and its dtype."""
    k = kind(t)
    if k == "float":
        return {"dtype": FLOAT_DTYPE[t.bit_width]}, FLOAT_DTYPE[t.bit_width]
    if k == "str":
        return {"transforms": [{"hash_bucket": STR_HASH}]}, "int64"
    if k == "dec":
        return {"dtype": "float64"}, "float64"
    if k == "fsl":
        return {"dtype": "float32"}, "float32"
    if k == "list":
        dtype = "float64" if pa.types.is_floating(t.value_type) else "int64"
        return {"dtype": dtype, "transforms": [{"pad": PAD}]}, dtype
    if k == "lstr":
        return {"transforms": PAD_STR}, "int64"
    return {}, "int64"  # ints, bools, timestamps, dates, times


def ints(arr: pa.Array) -> np.ndarray:
    """Integers (bools 0/1) as the int64 they flow as (a uint64 as its bits), nulls 0."""
    if pa.types.is_boolean(arr.type):
        arr = arr.cast(pa.int8())
    return pc.fill_null(arr, 0).to_numpy(zero_copy_only=False).astype(np.int64)


def floats(arr: pa.Array) -> np.ndarray:
    """Floats as float64 (exactly), nulls NaN."""
    return arr.to_numpy(zero_copy_only=False).astype(np.float64)


def padded(rows: list[Any], length: int, value: Any, null: Any,
           dtype: Any) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """pad: the first length elements (a null element as null), value after them; the
    lengths min(len, length), 0 for a null list."""
    out = np.full((len(rows), length), value, dtype)
    lens = np.zeros(len(rows), np.int32)
    for r, items in enumerate(rows):
        if items:
            n = min(len(items), length)
            out[r, :n] = [null if x is None else x for x in items[:n]]
            lens[r] = n
    return out, lens


def raw_reference(rd: Reading, path: str) -> dict[str, np.ndarray]:
    """The tensors of the output of one column alone (and <name>_len for a list)."""
    arr, k = rd.column(path), kind(rd.leaves[path])
    if k == "int":
        return {path: ints(arr)}
    if k == "float":
        return {path: floats(arr)}
    if k == "str":  # a dictionary's rows as their values
        return {path: servekit.hash_bucket_column(arr.to_pylist(), **STR_HASH)}
    if k == "time":
        return {path: counts(rd.time(path))}
    if k == "dec":
        return {path: dec_float(arr)}
    if k == "fsl":  # a null row is list_size nulls
        rows = [[None] * arr.type.list_size if r is None else r for r in arr.to_pylist()]
        return {path: np.array([[np.nan if x is None else x for x in r] for r in rows])}
    if k == "list":
        f = pa.types.is_floating(arr.type.value_type)
        want, lens = padded(arr.to_pylist(), PAD["length"], PAD["value"], np.nan if f else 0,
                            np.float64 if f else np.int64)  # fmt: skip
        return {path: want, f"{path}_len": lens}
    # A list of strings: fill_null and hash_bucket act on the elements, then pad.
    rows = [None if r is None else [servekit.hash_bucket_value("~" if x is None else x, 1009)
                                    for x in r] for r in arr.to_pylist()]  # fmt: skip
    want, lens = padded(rows, 3, -1, None, np.int64)
    return {path: want, f"{path}_len": lens}


# Transform chains, each over those of its columns a writer has (stacked when several): the
# output less its columns, its dtype, and the reference of one column.
NORM = {"f64": (0.25, 3.0), "f32": (-1.0, 0.5), "f16": (3.0, 7.0)}  # column: (mean, std)


def norm_ref(rd: Reading, c: str) -> np.ndarray:
    x, (mean, std) = floats(rd.column(c)), NORM[c]
    x[np.asarray(rd.column(c).is_null())] = 0.5
    return (x - mean) / std


def hash_int_ref(rd: Reading, c: str) -> np.ndarray:
    return servekit.hash_bucket_column(rd.column(c).to_pylist(), 1_000_003, 11)


def hash_str_ref(rd: Reading, c: str) -> np.ndarray:
    values = ["<null>" if v is None else v for v in rd.column(c).to_pylist()]
    return servekit.hash_bucket_column(values, 4099, 3)


def part(p: str, tz: str | None = None) -> Callable[[Reading, str], np.ndarray]:
    return lambda rd, c: part_ref(rd.time(c), p, tz)


CHAINS: dict[str, tuple[list[str], dict[str, Any], str, Callable[[Reading, str], np.ndarray]]] = {
    "x:norm": (list(NORM), {"dtype": "float64", "transforms": [
        {"fill_null": 0.5}, {"normalize": {"mean": [m for m, _ in NORM.values()],
                                           "std": [s for _, s in NORM.values()]}}]},
        "float64", norm_ref),
    "x:norm32": (["f32"], {"dtype": "float32", "transforms": [
        {"fill_null": 0.5}, {"normalize": {"mean": -1, "std": 0.5}}]}, "float32", norm_ref),
    "x:hash_ints": ([*INTS, "b", "st.a", "part_k"], {"transforms": [
        {"hash_bucket": {"buckets": 1_000_003, "seed": 11}}]}, "int64", hash_int_ref),
    "x:hash_strs": (["s", "ls", "cat", "enum", "st.b", "bin", "region"], {"transforms": [
        {"fill_null": "<null>"}, {"hash_bucket": {"buckets": 4099, "seed": 3}}]}, "int64",
        hash_str_ref),
    "x:hour": (TS, {"transforms": [{"datetime": "hour"}]}, "int64", part("hour")),
    "x:hour_tokyo": (["ts_ns_ny", "ts_ms", "ts_us_utc"], {"transforms": [
        {"datetime": {"part": "hour", "tz": "Asia/Tokyo"}}]}, "int64", part("hour", "Asia/Tokyo")),
    "x:day_of_week": (TS + DATES, {"transforms": [{"datetime": "day_of_week"}]}, "int64",
                      part("day_of_week")),
    "x:unix_seconds": (TS + DATES + TIMES, {"dtype": "float64", "transforms": [
        {"datetime": "unix_seconds"}]}, "float64", lambda rd, c: seconds_ref(rd.time(c))),
    "x:dec_scale12": (list(DECIMALS), {"transforms": [{"decimal": {"scale": 12}}]}, "int64",
                      lambda rd, c: dec_int(rd.column(c), 12 - rd.leaves[c].scale)),
    "x:dec_unscaled": (list(DECIMALS), {"transforms": [{"decimal": "unscaled"}]}, "int64",
                       lambda rd, c: dec_int(rd.column(c), 0)),
    "x:bool": (["b"], {"dtype": "bool"}, "bool", lambda rd, c: ints(rd.column(c)).astype(bool)),
}  # fmt: skip

# A chain on a list: steps before pad act on its elements, steps after it on every position.
PAD_LF = {"columns": "lf", "dtype": "float64", "transforms": [
    {"fill_null": -0.5}, {"pad": {"length": 3, "value": 9}},
    {"normalize": {"mean": 1, "std": 4}}]}  # fmt: skip


def pad_lf_ref(rd: Reading) -> dict[str, np.ndarray]:
    want, lens = padded(rd.column("lf").to_pylist(), 3, 9.0, -0.5, np.float64)
    return {"x:pad_lf": (want - 1) / 4, "x:pad_lf_len": lens}


def outputs_of(rd: Reading) -> tuple[dict[str, Any], dict[str, str], dict[str, np.ndarray]]:
    """The outputs of a serve run over rd's dataset, and each tensor's dtype and reference."""
    outputs: dict[str, Any] = {}
    dtypes: dict[str, str] = {}
    want: dict[str, np.ndarray] = {}

    def add(name: str, output: dict[str, Any], dtype: str, ref: dict[str, np.ndarray]) -> None:
        outputs[name] = output
        want.update(ref)
        dtypes.update({n: "int32" if n.endswith("_len") else dtype for n in ref})

    for path, t in rd.leaves.items():
        out, dtype = raw_output(t)
        add(path, {"columns": path, **out}, dtype, raw_reference(rd, path))
    for name, (cols, out, dtype, ref) in CHAINS.items():
        have = [c for c in cols if c in rd.leaves]
        if not have:
            continue
        out = json.loads(json.dumps(out))
        for step in out.get("transforms", []):
            if isinstance(step.get("normalize", {}).get("mean"), list):  # one per column
                step["normalize"] = {"mean": [NORM[c][0] for c in have],
                                     "std": [NORM[c][1] for c in have]}  # fmt: skip
        tensor = np.stack([ref(rd, c) for c in have], axis=1) if len(have) > 1 else ref(rd, have[0])
        add(name, {"columns": have, **out}, dtype, {name: tensor})
    if "lf" in rd.leaves:
        add("x:pad_lf", PAD_LF, "float64", pad_lf_ref(rd))
    return outputs, dtypes, want


# -- serving -------------------------------------------------------------------------------


def serve(bin: Path, tmp: Path, root: Path, outputs: dict[str, Any],
          decoder: str) -> servekit.Result:  # fmt: skip
    """One serve run over root in file order; what rank 0 read."""
    cfg = servekit.write_config(
        tmp / f"{root.name}-{decoder}.yaml", dataset=str(root), batch_size=BATCH, partitions=1,
        shuffle={"row_groups": False, "window": 0}, drop_last=True, outputs=outputs,
    )  # fmt: skip
    return servekit.serve_in_order(
        bin, tmp, cfg, f"{root.name}-{decoder}", {"SHMLOADER_DECODER": decoder}
    )


@dataclass
class Served:
    writer: str
    reading: Reading
    dtypes: dict[str, str]  # tensor -> dtype
    want: dict[str, np.ndarray]  # tensor -> reference
    results: dict[str, servekit.Result]  # decoder -> what rank 0 read


@pytest.fixture(scope="module")
def table() -> pa.Table:
    return base_table()


@pytest.fixture(scope="module", params=list(WRITERS))
def served(request, table, shmloader_bin: Path, tmp_path_factory, library) -> Served:
    writer = request.param
    tmp = tmp_path_factory.mktemp(writer)
    root = tmp / writer
    root.mkdir()
    WRITERS[writer](table.drop_columns(sorted(CANNOT.get(writer, set()))), root)
    rd = read(root)
    outputs, dtypes, want = outputs_of(rd)
    results = {d: serve(shmloader_bin, tmp, root, outputs, d) for d in DECODERS}
    return Served(writer, rd, dtypes, want, results)


# -- what the writers wrote ----------------------------------------------------------------

CODECS = {"pyarrow": [c for c, *_ in PYARROW_FILES], "pyarrow-int96": ["SNAPPY"] * 2,
          "duckdb": [c for c, *_ in DUCKDB_FILES],
          "polars": [c for c, *_ in POLARS_FILES]}  # fmt: skip
# Types of pyarrow's reading that show each writer's own layouts.
WROTE = {
    "pyarrow": {"f16": "halffloat", "ls": "large_string", "lli": "large_list<element: int32>",
                "cat": "dictionary<values=string, indices=int32, ordered=0>",
                "enum": "dictionary<values=string, indices=int8, ordered=0>",
                "dec50_12": "decimal256(50, 12)", "emb": "fixed_size_list<element: float>[4]",
                "ts_s_ny": "timestamp[ms, tz=America/New_York]", "d64": "date32[day]",
                "t32s": "time32[ms]"},
    "pyarrow-int96": {c: "timestamp[ns]" for c in TS},
    "duckdb": {"ls": "string", "cat": "string", "enum": "string", "ts_s": "timestamp[us]",
               "ts_ns_ny": "timestamp[ns, tz=UTC]", "ts_ms_ny": "timestamp[us, tz=UTC]",
               "t32s": "time64[us]", "lli": "list<element: int32>", "emb": "list<element: float>"},
    "duckdb-hive": {"part_k": "int32", "region": "string", "cat": "string"},
    "polars": {"s": "large_string", "bin": "large_binary", "li": "large_list<element: int64>",
               "lstr": "large_list<element: large_string>",
               "cat": "dictionary<values=string, indices=uint32, ordered=0>",
               "enum": "dictionary<values=string, indices=uint8, ordered=1>",
               "emb": "fixed_size_list<element: float>[4]", "ts_ms_ny":
               "timestamp[ms, tz=America/New_York]", "d64": "timestamp[ms]", "t32s": "time64[ns]"},
}  # fmt: skip


def encodings(meta: pq.FileMetaData) -> set[str]:
    return {e for r in range(meta.num_row_groups) for c in range(meta.num_columns)
            for e in meta.row_group(r).column(c).encodings}  # fmt: skip


def test_files_hold_what_the_writer_wrote(served: Served) -> None:
    """The files exercise what this module says: each writer's codecs, encodings, physical
    and Arrow types, partitions, several row groups."""
    rd, w = served.reading, served.writer
    assert sum(m.num_rows for m in rd.meta) == ROWS and sum(m.num_row_groups for m in rd.meta) >= 6
    assert {p: str(rd.leaves[p]) for p in WROTE[w]} == WROTE[w]
    codecs = [{m.row_group(r).column(c).compression for r in range(m.num_row_groups)
               for c in range(m.num_columns)} for m in rd.meta]  # fmt: skip
    if w in CODECS:
        assert codecs == [{c} for c in CODECS[w]]
    if w == "pyarrow":
        dicts = ["RLE_DICTIONARY" in encodings(m) for m in rd.meta]
        assert dicts == [d for _, _, d, _ in PYARROW_FILES]
        assert rd.meta[0].schema.column(rd.meta[0].schema.names.index("f16")).physical_type \
            == "FIXED_LEN_BYTE_ARRAY"  # fmt: skip
    if w == "pyarrow-int96":
        physical = {m.schema.column(i).physical_type for m in rd.meta for i in range(1, 11)}
        assert physical == {"INT96"}
    if w == "duckdb":
        for m, (_, _, _, version) in zip(rd.meta, DUCKDB_FILES, strict=True):
            delta = {"DELTA_BINARY_PACKED", "BYTE_STREAM_SPLIT", "DELTA_LENGTH_BYTE_ARRAY"}
            assert (delta <= encodings(m)) == (version == "V2"), (version, encodings(m))
    if w == "duckdb-hive":
        folders = {str(Path(f).parent.relative_to(Path(rd.files[0]).parents[2])) for f in rd.files}
        assert "part_k=__HIVE_DEFAULT_PARTITION__/region=x%2Fy" in folders and len(folders) == 16
        assert None in rd.column("region").to_pylist() and "x/y" in rd.column("region").to_pylist()
    if w == "polars":
        stats = [any(m.row_group(0).column(c).is_stats_set for c in range(m.num_columns))
                 for m in rd.meta]  # fmt: skip
        assert stats == [s is not False for _, _, s in POLARS_FILES]


# -- serve reads what pyarrow reads --------------------------------------------------------


@pytest.mark.parametrize("decoder", DECODERS)
def test_serves_what_pyarrow_reads(served: Served, decoder: str) -> None:
    res = served.results[decoder]
    assert [b["rows"] for b in res.batches] == [BATCH] * (ROWS // BATCH)
    assert np.array_equal(res.tensors["id"], served.want["id"]), "rows out of file order"
    assert set(res.tensors) == set(served.want)
    failed = []
    for name, want in served.want.items():
        try:
            with np.errstate(over="ignore"):  # float32 outputs past its range are inf
                check(res, name, want, served.dtypes[name])
        except AssertionError as exc:
            failed.append(f"{name} ({served.reading.leaves.get(name, 'a chain')}): {exc}")
    what = f"{served.writer}, {decoder}: {len(failed)} tensors differ:\n"
    assert not failed, what + "\n".join(failed)


def test_both_decoders_give_the_same_bytes(served: Served) -> None:
    pages, arrow = served.results["pages"], served.results["arrow"]
    assert pages.meta["dtypes"] == arrow.meta["dtypes"]
    assert pages.stream() == arrow.stream()


# -- findings: where shmloader differs from pyarrow, and files it refuses ------------------

# Columns whose zone shmloader reads otherwise than pyarrow (test_default_zone_as_pyarrow):
# its datetime step's calendar parts then default to another zone. The instants agree.
ZONE_DIFFERS = {"pyarrow": ["ts_s_ny"], "pyarrow-int96": ["ts_ns_ny"]}


def test_calendar_parts_default_to_the_zone_pyarrow_reads(served: Served) -> None:
    """The datetime step's hour without a tz is the hour in the zone of pyarrow's reading
    (but for ZONE_DIFFERS)."""
    rd, res = served.reading, served.results["pages"]
    have = [c for c in TS if c in rd.leaves]
    agree = [k for k, c in enumerate(have) if c not in ZONE_DIFFERS.get(served.writer, [])]
    want = np.stack([part_ref(rd.column(have[k]), "hour") for k in agree], axis=1)
    check(servekit.Result(res.meta, {"x:hour": res.tensors["x:hour"][:, agree]}), "x:hour",
          want, "int64")  # fmt: skip


def serve_file(bin: Path, tmp: Path, write: Callable[[Path], None],
               outputs: dict[str, Any]) -> dict[str, servekit.Result]:  # fmt: skip
    """What serve reads, on each decoder, of the file write(path) writes."""
    root = tmp / "data"
    root.mkdir()
    write(root / "part-0.parquet")
    return {d: serve(bin, tmp, root, outputs, d) for d in DECODERS}


ZONE_CASES = {
    "timestamp[s, tz]": ("ts_s_ny", {}, (
        "pyarrow writes timestamp[s, tz=America/New_York] as TIMESTAMP(MILLIS, "
        "isAdjustedToUTC) and reads it back as timestamp[ms, tz=America/New_York]; arrow-go, "
        "and so shmloader, reads timestamp[ms] with no zone (default.yaml: 'a timestamp[s] "
        "loses its zone too'), so the datetime step's calendar parts default to UTC, not New "
        "York")),
    "INT96 of timestamp[ns, tz]": ("ts_ns_ny", {"use_deprecated_int96_timestamps": True}, (
        "pyarrow reads every INT96 column as timestamp[ns] with no zone; arrow-go, and so "
        "shmloader, takes the zone of the ARROW:schema's timestamp[ns, "
        "tz=America/New_York], so the calendar parts default to New York, not UTC")),
}  # fmt: skip


@pytest.mark.parametrize("case", [pytest.param(k, marks=pytest.mark.xfail(
    strict=True, raises=AssertionError, reason=v[2])) for k, v in ZONE_CASES.items()])  # fmt: skip
def test_default_zone_as_pyarrow(case: str, table, shmloader_bin: Path, tmp_path: Path,
                                 library) -> None:  # fmt: skip
    column, options, _ = ZONE_CASES[case]
    t = pa.table({"id": table.column("id"), "ts": table.column(column)})
    hour = {"columns": "ts", "transforms": [{"datetime": "hour"}]}
    res = serve_file(shmloader_bin, tmp_path, lambda p: pq.write_table(t, p, **options),
                     {"id": "id", "hour": hour})  # fmt: skip
    got = pq.read_table(tmp_path / "data").column("ts").combine_chunks()
    assert got.type.tz == (None if options else NY)  # pyarrow's reading
    for r in res.values():
        check(r, "hour", part_ref(got, "hour"), "int64")


def duckdb_writes(t: pa.Table, options: str) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        con = duckdb.connect()
        con.register("t", t)
        con.execute(f"COPY t TO '{path}' ({options})")
        con.close()

    return write


def duckdb_reads(path: Path) -> pa.Table:
    """DuckDB's reading of its file (pyarrow refuses these)."""
    con = duckdb.connect()
    got = con.sql(f"SELECT * FROM '{path}'").arrow().read_all()
    con.close()
    return got


@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "DuckDB 2.0.1 with PARQUET_VERSION V2 writes INT32 columns in DELTA_BINARY_PACKED with "
    "deltas computed in 64 bits: random int32 values give a block's min delta of -4088766390 "
    "and miniblocks of bit width 33, random uint32 values a first value of 3171148506, where "
    "the spec says INT32 data must not use more than 32 bits. Both decoders refuse the page "
    "('DELTA_BINARY_PACKED: min delta -4088766390 of the block at byte 10 is out of int32 "
    "range'), as arrow-go ('minimum delta ... exceeds INT32 range') and pyarrow ('Unexpected "
    "end of stream: InitBlock EOF') do; DuckDB reads the values back"))  # fmt: skip
def test_duckdb_v2_int32_deltas_wider_than_32_bits(table, shmloader_bin: Path, tmp_path: Path,
                                                   library) -> None:  # fmt: skip
    t = table.select(["id", "i32", "u32"])
    write = duckdb_writes(t, "FORMAT parquet, PARQUET_VERSION V2")
    res = serve_file(shmloader_bin, tmp_path, write, {"id": "id", "i32": "i32", "u32": "u32"})
    got = duckdb_reads(tmp_path / "data" / "part-0.parquet")
    assert got.equals(t)
    for r in res.values():
        for c in ("i32", "u32"):
            check(r, c, ints(got.column(c).combine_chunks()), "int64")


@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "DuckDB 2.0.1 writes a null row of an ARRAY column (FLOAT[4]) as four level entries "
    "(repetition levels 0, 1, 1, 1, definition level 0) where a null list is one entry: "
    "arrow-go, which reads list columns on both paths, builds offsets past the elements and "
    "serve refuses the row group ('list offsets end at 7999, past 7420 elements'), as pyarrow "
    "does ('Length spanned by list offsets (7999) larger than values array (length 7420)'); "
    "DuckDB reads it back"))  # fmt: skip
def test_duckdb_array_with_null_rows(table, shmloader_bin: Path, tmp_path: Path, library) -> None:
    t = table.select(["id", "emb"])
    out = {"columns": "emb", "dtype": "float64", "transforms": [{"pad": 4}]}
    res = serve_file(shmloader_bin, tmp_path, duckdb_writes(t, "FORMAT parquet"),
                     {"id": "id", "emb": out})  # fmt: skip
    rows = duckdb_reads(tmp_path / "data" / "part-0.parquet").column("emb").to_pylist()
    assert rows == t.column("emb").to_pylist()
    want, lens = padded(rows, 4, 0.0, np.nan, np.float64)
    for r in res.values():
        check(r, "emb", want, "float64")
        check(r, "emb_len", lens, "int32")
