"""Each transform of producer/transform/doc.go on crafted values, through `shmloader serve`.

A Parquet dataset written here with pyarrow (two files, two row groups each) holds nulls,
NaN, ±inf, ±0, subnormals, values past float16/float32/int32/int64 limits, rounding ties,
empty and long strings, and empty, null and long lists. One serve run (shuffle off, window
0, one rank, batch size dividing the rows, so the rows arrive in file order) has one output
per transform; each test compares one output to a reference computed here with numpy from
the spec (NaN-aware, canonical NaN bits checked, signs of zero checked).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import servekit

ROWS = 64
BATCH = 16
NAN, INF = math.nan, math.inf
I64_MIN, I64_MAX = -(2**63), 2**63 - 1
BIG = 2**53 + 1  # the first integer a float64 cannot hold

FL_SPECIALS = [
    None, NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, -1.5, -0.5, 0.5, 2.5, 3.5, -2.5,
    1e308, -1e308, 3.5e38, -3.5e38, 65504.0, 65520.0, 65519.99, 1e-310, -5e-324, 6e-8,
    2147483647.5, 2147483648.0, -2147483649.0, -2147483648.9, 9.3e18, -9.3e18, 1e20,
    127.9, -128.9, 255.5, 1e-8, 123456.789, -7.25, 42.0, 1e300, 0.1, None, None,
]  # fmt: skip
F32_SPECIALS = [
    None, NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 3.4028234663852886e38, -3.4028234663852886e38,
    1.4e-45, 1e-40, -1e-40, 1.00390625, 1.01171875, 1.0078125 + 2**-23, 1.0078125,
    -1.00390625, 65280.0, 3.3961775292304957e38, 1e-20, 255.5, None,
]  # fmt: skip
I64_SPECIALS = [
    None, 0, 1, -1, I64_MIN, I64_MAX, 300, -300, 127, 128, -129, 255, 256, 2**53, 2**53 + 1,
    -(2**53) - 1, 2**31, -(2**31) - 1, 100, 101, -100, -101, 9007199254740993, 42, None,
]  # fmt: skip
I32_SPECIALS = [None, 0, 1, -1, 2**31 - 1, -(2**31), 1000, -1000, 7, None]
U64_SPECIALS = [None, 0, 1, 4, 5, 6, 2**63, 2**64 - 1, 2**63 - 1, 12345678901234567890, None]
BOOL_SPECIALS = [None, True, False, True, True, None, False]
STR_SPECIALS = [
    None, "", "a", "é", "hello", "foobar", "user_12345", "x" * 1000, "<null>", "日本語",
    "a\x00b", " ", None, "",
]  # fmt: skip
NARROW_SPECIALS = [None, 0, 1, -1, 127, -128, 2**31 - 1, 2**32 - 1, 255, 65535, -32768, 40000]
LIST_SPECIALS = [
    None, [], [1], [1, 2], [1, 2, 3], list(range(20)), [I64_MIN, I64_MAX, 0, 5], [-7], None, [],
]  # fmt: skip
LISTF_SPECIALS = [
    None, [], [NAN], [INF, -1.0], [-INF, 0.5, 2.0, 3.0, 4.0, 5.0], [0.25], [-0.0, 1e30], None,
]  # fmt: skip


def cycle(values: list[Any], n: int, shift: int) -> list[Any]:
    return [values[(i + shift) % len(values)] for i in range(n)]


def columns() -> dict[str, list[Any]]:
    rng = np.random.default_rng(5)
    fl = list(FL_SPECIALS) + [float(v) for v in rng.normal(0, 100, ROWS - len(FL_SPECIALS))]
    return {
        "id": list(range(ROWS)),
        "fl": fl,
        "f32": cycle(F32_SPECIALS, ROWS, 0),
        "i64": cycle(I64_SPECIALS, ROWS, 0),
        "i32": cycle(I32_SPECIALS, ROWS, 3),
        "u64": cycle(U64_SPECIALS, ROWS, 0),
        "b": cycle(BOOL_SPECIALS, ROWS, 1),
        "s": cycle(STR_SPECIALS, ROWS, 0),
        "lst": cycle(LIST_SPECIALS, ROWS, 0),
        "lf": cycle(LISTF_SPECIALS, ROWS, 2),
        "i8": [narrow(v, np.int8) for v in cycle(NARROW_SPECIALS, ROWS, 0)],
        "u8": [narrow(v, np.uint8) for v in cycle(NARROW_SPECIALS, ROWS, 1)],
        "i16": [narrow(v, np.int16) for v in cycle(NARROW_SPECIALS, ROWS, 2)],
        "u32": [narrow(v, np.uint32) for v in cycle(NARROW_SPECIALS, ROWS, 3)],
        "h16": cycle([None, NAN, INF, 1.0, -2.5, 65504.0, 6e-8, 0.333], ROWS, 0),
        "ls": cycle(STR_SPECIALS, ROWS, 5),
        "bs": [None if v is None else v.encode() + b"\xff" for v in cycle(STR_SPECIALS, ROWS, 7)],
        "llst": cycle([None, [], [-1], [2**31 - 1, -(2**31), 5], [7] * 9], ROWS, 0),
    }


def narrow(v: int | None, dtype: Any) -> int | None:
    """v wrapped into dtype's range (numpy's astype), None kept."""
    return None if v is None else int(np.array(v).astype(np.int64).astype(dtype))


SCHEMA = pa.schema([
    ("id", pa.int64()), ("fl", pa.float64()), ("f32", pa.float32()), ("i64", pa.int64()),
    ("i32", pa.int32()), ("u64", pa.uint64()), ("b", pa.bool_()), ("s", pa.string()),
    ("lst", pa.list_(pa.int64())), ("lf", pa.list_(pa.float32())), ("i8", pa.int8()),
    ("u8", pa.uint8()), ("i16", pa.int16()), ("u32", pa.uint32()), ("h16", pa.float16()),
    ("ls", pa.large_string()), ("bs", pa.binary()), ("llst", pa.large_list(pa.int32())),
])  # fmt: skip

PAD_F: dict[str, Any] = {"length": 4, "value": -1.0}
OUTPUTS: dict[str, Any] = {
    "cast_i8": {"columns": "i64", "transforms": [{"cast": "int8"}]},
    "cast_f2i32": {"columns": "fl", "transforms": [{"cast": {"dtype": "int32"}}]},
    "cast_f2u8": {"columns": "fl", "transforms": [{"cast": "uint8"}]},
    "cast_f16": {"columns": "fl", "transforms": [{"cast": "float16"}]},
    "cast_bf16": {"columns": "f32", "transforms": [{"cast": "bfloat16"}]},
    "cast_bool": {"columns": "fl", "transforms": [{"cast": "bool"}]},
    "cast_i2f32": {"columns": "i64", "transforms": [{"cast": "float32"}]},
    "cast_u2f64": {"columns": "u64", "transforms": [{"cast": "float64"}]},
    "cast_f32_f64": {"columns": "fl", "dtype": "float64", "transforms": [{"cast": "float32"}]},
    "fill_f": {"columns": "fl", "dtype": "float64", "transforms": [{"fill_null": 7.5}]},
    "fill_i": {"columns": "i64", "transforms": [{"fill_null": {"value": -3}}]},
    "norm": {"columns": "fl", "dtype": "float64",
             "transforms": [{"normalize": {"mean": 2, "std": 4}}]},
    "norm_stack": {"columns": ["fl", "i32"], "dtype": "float64",
                   "transforms": [{"normalize": {"mean": [1, -1], "std": [2, 0.5]}}]},
    "clip_f": {"columns": "fl", "dtype": "float64",
               "transforms": [{"clip": {"min": -1, "max": 1e10}}]},
    "clip_i": {"columns": "i64", "transforms": [{"clip": {"min": -100, "max": 100}}]},
    "clip_u": {"columns": "u64", "dtype": "uint64", "transforms": [{"clip": {"min": 5}}]},
    "log1p": {"columns": "fl", "dtype": "float64", "transforms": ["log1p"]},
    "bucket_f": {"columns": "fl", "transforms": [{"bucketize": [-1, 0, 0.5, 1e300]}]},
    "bucket_i": {"columns": "i64",
                 "transforms": [{"bucketize": {"boundaries": [-100, 0, 9007199254740992]}}]},
    "hash_s": {"columns": "s", "transforms": [{"hash_bucket": {"buckets": 1000, "seed": 42}}]},
    "hash_s_fill": {"columns": "s",
                    "transforms": [{"fill_null": "<null>"}, {"hash_bucket": 1000}]},
    "hash_i": {"columns": "i64",
               "transforms": [{"hash_bucket": {"buckets": 1048576, "seed": 2**64 - 1}}]},
    "hash_i32": {"columns": "i32", "transforms": [{"hash_bucket": 97}]},
    "hash_u": {"columns": "u64", "transforms": [{"hash_bucket": {"buckets": 1000, "seed": 1}}]},
    "hash_b": {"columns": "b", "transforms": [{"hash_bucket": 10}]},
    "hash_cast": {"columns": "fl", "transforms": [{"cast": "int64"}, {"hash_bucket": 1000}]},
    "pad_i": {"columns": "lst", "transforms": [{"pad": {"length": 3, "value": -9}}]},
    "pad_f": {"columns": "lf", "dtype": "float32",
              "transforms": [{"clip": {"min": 0}}, {"pad": PAD_F},
                             {"normalize": {"mean": 1, "std": 2}}]},
    "stack_mixed": {"columns": ["i32", "fl", "b"]},
    "narrow_f64": {"columns": ["i8", "u8", "i16", "u32"], "dtype": "float64"},
    "narrow_hash": {"columns": ["i8", "u8", "i16", "u32"], "transforms": [{"hash_bucket": 4099}]},
    "h16_f64": {"columns": "h16", "dtype": "float64"},
    "hash_ls_bs": {"columns": ["ls", "bs"], "transforms": [{"hash_bucket": {"buckets": 777}}]},
    "pad_ll": {"columns": "llst", "transforms": [{"pad": {"length": 4, "value": 3}}]},
    # Integer constants past 2^53 (64-bit ids, hashes) must stay exact on integer columns.
    "fill_big": {"columns": "i64", "transforms": [{"fill_null": BIG}]},
    "clip_big": {"columns": "i64", "transforms": [{"clip": {"min": -BIG, "max": BIG}}]},
    "pad_big": {"columns": "lst", "transforms": [{"pad": {"length": 3, "value": BIG}}]},
    "id": "id",
}  # fmt: skip


@pytest.fixture(scope="module")
def data() -> dict[str, list[Any]]:
    return columns()


# How the files are written and which road serve reads them by: the page path (the
# default: outputs straight from the page decoder into the transforms) on pyarrow's
# defaults, and on data page v2 with pages of a few rows, zstd, and a dictionary so small
# that every column chunk falls back from dictionary to plain pages part-way; with the
# delta and byte-stream-split encodings and RLE booleans; and the array path
# (SHMLOADER_DECODER=arrow: the same decoder into Arrow arrays, then the transforms).
LAYOUTS = {
    "pages": ({}, {}),
    "pages-v2-fallback": ({"data_page_version": "2.0", "data_page_size": 64,
                           "dictionary_pagesize_limit": 16, "compression": "zstd",
                           "write_batch_size": 4}, {}),
    "pages-delta-bss": ({"use_dictionary": False, "column_encoding": {
        "id": "DELTA_BINARY_PACKED", "i64": "DELTA_BINARY_PACKED", "i32": "DELTA_BINARY_PACKED",
        "u64": "DELTA_BINARY_PACKED", "i8": "DELTA_BINARY_PACKED", "u32": "DELTA_BINARY_PACKED",
        "fl": "BYTE_STREAM_SPLIT", "f32": "BYTE_STREAM_SPLIT", "s": "DELTA_BYTE_ARRAY",
        "ls": "DELTA_LENGTH_BYTE_ARRAY", "bs": "DELTA_BYTE_ARRAY", "b": "RLE"},
        "data_page_version": "2.0", "data_page_size": 128, "write_batch_size": 8}, {}),
    "arrow": ({}, {"SHMLOADER_DECODER": "arrow"}),
}  # fmt: skip


@pytest.fixture(scope="module", params=sorted(LAYOUTS))
def served(request, shmloader_bin: Path, tmp_path_factory, data, library) -> servekit.Result:
    write_opts, env = LAYOUTS[request.param]
    tmp = tmp_path_factory.mktemp("transforms")
    ds = tmp / "crafted"
    ds.mkdir()
    table = pa.table({k: pa.array(v, SCHEMA.field(k).type) for k, v in data.items()},
                     schema=SCHEMA)  # fmt: skip
    half = ROWS // 2
    for i in range(2):
        pq.write_table(table.slice(i * half, half), ds / f"part-{i}.parquet",
                       row_group_size=half // 2, **write_opts)  # fmt: skip
    cfg = servekit.write_config(
        tmp / "transforms.yaml", dataset=str(ds / "part-*.parquet"), batch_size=BATCH,
        shuffle={"row_groups": False, "window": 0}, drop_last=True, outputs=OUTPUTS,
    )  # fmt: skip
    res = servekit.serve_in_order(shmloader_bin, tmp, cfg, "rank0", env)
    assert [b["rows"] for b in res.batches] == [BATCH] * (ROWS // BATCH)
    assert np.array_equal(res.tensors["id"], np.arange(ROWS)), "rows out of file order"
    return res


# -- reference helpers ---------------------------------------------------------------------


def floats(values: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """(values as float64 with 0 for null, null mask)."""
    null = np.array([v is None for v in values])
    x = np.array([0.0 if v is None else float(v) for v in values], np.float64)
    return x, null


def ints(values: list[Any], dtype: Any = np.int64) -> tuple[np.ndarray, np.ndarray]:
    null = np.array([v is None for v in values])
    x = np.array([0 if v is None else int(v) for v in values], dtype)
    return x, null


def with_nulls(x: np.ndarray, null: np.ndarray, fill: Any) -> np.ndarray:
    x = np.array(x)
    x[null] = fill
    return x


def clip(x: np.ndarray, lo: float | None, hi: float | None) -> np.ndarray:
    """doc.go: x < min gives min, x > max gives max, NaN stays NaN (sign of zero kept)."""
    if lo is not None:
        x = np.where(x < lo, lo, x)
    if hi is not None:
        x = np.where(x > hi, hi, x)
    return x


def check(res: servekit.Result, name: str, want: np.ndarray, dtype: str, **kw: Any) -> None:
    got = res.tensors[name]
    assert res.meta["dtypes"][name] == dtype, (name, res.meta["dtypes"][name])
    assert got.shape == want.shape, (name, got.shape, want.shape)
    if np.issubdtype(got.dtype, np.floating):
        servekit.assert_same_floats(got, want.astype(got.dtype), name, **kw)
    else:
        bad = np.flatnonzero((got != want).reshape(len(got), -1).any(axis=1))
        assert bad.size == 0, (
            f"{name}: rows {bad[:8].tolist()} differ: got {got[bad[:8]].tolist()} "
            f"want {want[bad[:8]].tolist()}"
        )


# -- cast ----------------------------------------------------------------------------------


def test_cast_int_to_narrower_int_wraps(served, data):
    x, null = ints(data["i64"])
    check(served, "cast_i8", with_nulls(x.astype(np.int8), null, 0), "int8")


def test_cast_float_to_int_truncates_and_saturates(served, data):
    x, null = floats(data["fl"])
    want = with_nulls(servekit.float_to_int(x, np.int32), null, 0)
    check(served, "cast_f2i32", want, "int32")
    want = with_nulls(servekit.float_to_int(x, np.uint8), null, 0)
    check(served, "cast_f2u8", want, "uint8")


def test_cast_to_float16_rounds_to_nearest_even_and_overflows_to_inf(served, data):
    x, null = floats(data["fl"])
    with np.errstate(over="ignore"):
        want = with_nulls(x.astype(np.float16), null, np.nan)
    check(served, "cast_f16", want, "float16")


def test_cast_to_bfloat16_rounds_to_nearest_even(served, data):
    x, null = floats(data["f32"])
    x32 = x.astype(np.float32)  # exact: the column is float32
    want = servekit.to_bfloat16_bits(with_nulls(x32, null, np.nan))
    got = served.tensors["cast_bf16"]
    assert served.meta["dtypes"]["cast_bf16"] == "bfloat16"
    assert got.dtype == np.uint16
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, (
        f"bfloat16 bits differ at rows {bad.tolist()}: inputs {x32[bad].tolist()} "
        f"got {[hex(v) for v in got[bad]]} want {[hex(v) for v in want[bad]]}"
    )


def test_cast_to_bool_is_nonzero_nan_included(served, data):
    x, null = floats(data["fl"])
    want = with_nulls((x != 0) | np.isnan(x), null, False)
    check(served, "cast_bool", want, "bool")


def test_cast_int_to_float_rounds_once(served, data):
    x, null = ints(data["i64"])
    check(served, "cast_i2f32", with_nulls(x.astype(np.float32), null, np.nan), "float32")
    u, unull = ints(data["u64"], np.uint64)
    check(served, "cast_u2f64", with_nulls(u.astype(np.float64), unull, np.nan), "float64")


def test_cast_float32_then_float64_output_keeps_the_float32_rounding(served, data):
    x, null = floats(data["fl"])
    with np.errstate(over="ignore"):
        want = with_nulls(x.astype(np.float32).astype(np.float64), null, np.nan)
    check(served, "cast_f32_f64", want, "float64")


# -- fill_null, normalize, clip, log1p -----------------------------------------------------


def test_fill_null_replaces_nulls_not_nan(served, data):
    x, null = floats(data["fl"])
    check(served, "fill_f", with_nulls(x, null, 7.5), "float64")
    i, inull = ints(data["i64"])
    check(served, "fill_i", with_nulls(i, inull, -3), "int64")


def test_normalize(served, data):
    x, null = floats(data["fl"])
    check(served, "norm", with_nulls((x - 2) / 4, null, np.nan), "float64")
    i, inull = ints(data["i32"])
    want = np.stack([
        with_nulls((x - 1) / 2, null, np.nan),
        with_nulls((i.astype(np.float64) + 1) / 0.5, inull, np.nan),
    ], axis=1)  # fmt: skip
    check(served, "norm_stack", want, "float64")


def test_clip(served, data):
    x, null = floats(data["fl"])
    check(served, "clip_f", with_nulls(clip(x, -1, 1e10), null, np.nan), "float64")
    i, inull = ints(data["i64"])
    check(served, "clip_i", with_nulls(np.clip(i, -100, 100), inull, 0), "int64")
    u, unull = ints(data["u64"], np.uint64)
    want = with_nulls(np.maximum(u, np.uint64(5)), unull, 0)  # unsigned: 2^64-1 stays
    check(served, "clip_u", want, "uint64")


def test_log1p(served, data):
    x, null = floats(data["fl"])
    with np.errstate(invalid="ignore", divide="ignore"):
        want = with_nulls(np.log1p(x), null, np.nan)
    # doc.go: Go's math.Log1p may differ from other libms in the last place.
    check(served, "log1p", want, "float64", maxulp=1)


# -- bucketize -----------------------------------------------------------------------------


def test_bucketize(served, data):
    x, null = floats(data["fl"])
    want = np.searchsorted([-1, 0, 0.5, 1e300], x, side="right").astype(np.int64)
    check(served, "bucket_f", with_nulls(want, null, 0), "int64")
    i, inull = ints(data["i64"])
    want = np.searchsorted(np.array([-100, 0, 2**53], np.float64), i.astype(np.float64),
                           side="right").astype(np.int64)  # fmt: skip
    check(served, "bucket_i", with_nulls(want, inull, 0), "int64")


# -- hash_bucket ---------------------------------------------------------------------------


def test_hash_bucket_strings(served, data):
    s = data["s"]
    check(served, "hash_s", servekit.hash_bucket_column(s, 1000, 42), "int64")
    filled = ["<null>" if v is None else v for v in s]
    check(served, "hash_s_fill", servekit.hash_bucket_column(filled, 1000), "int64")


def test_hash_bucket_ints(served, data):
    check(served, "hash_i", servekit.hash_bucket_column(data["i64"], 1048576, 2**64 - 1),
          "int64")  # fmt: skip
    check(served, "hash_i32", servekit.hash_bucket_column(data["i32"], 97), "int64")
    check(served, "hash_u", servekit.hash_bucket_column(data["u64"], 1000, 1), "int64")
    check(served, "hash_b", servekit.hash_bucket_column(data["b"], 10), "int64")


def test_hash_bucket_after_a_cast_of_floats(served, data):
    x, null = floats(data["fl"])
    as_int = servekit.float_to_int(x, np.int64)
    values = [None if n else int(v) for v, n in zip(as_int, null, strict=True)]
    check(served, "hash_cast", servekit.hash_bucket_column(values, 1000), "int64")


# -- pad / truncate ------------------------------------------------------------------------


def padded(lists: list[Any], length: int, value: Any, dtype: Any) -> tuple[np.ndarray, np.ndarray]:
    out = np.full((len(lists), length), value, dtype)
    lens = np.zeros(len(lists), np.int32)
    for r, items in enumerate(lists):
        if items:
            n = min(len(items), length)
            out[r, :n] = items[:n]
            lens[r] = n
    return out, lens


def test_pad_truncates_and_fills_ints(served, data):
    want, lens = padded(data["lst"], 3, -9, np.int64)
    check(served, "pad_i", want, "int64")
    check(served, "pad_i_len", lens, "int32")


def test_pad_steps_before_act_on_elements_and_after_on_every_position(served, data):
    clipped = [None if v is None else [x if math.isnan(x) or x >= 0 else 0.0 for x in v]
               for v in data["lf"]]  # fmt: skip
    want, lens = padded(clipped, PAD_F["length"], PAD_F["value"], np.float64)
    check(served, "pad_f", ((want - 1) / 2).astype(np.float32), "float32")
    check(served, "pad_f_len", lens, "int32")


def test_stacked_mixed_ints_floats_bools_give_float32(served, data):
    i, inull = ints(data["i32"])
    x, null = floats(data["fl"])
    b, bnull = ints([None if v is None else int(v) for v in data["b"]])
    with np.errstate(over="ignore"):
        want = np.stack([
            with_nulls(i.astype(np.float32), inull, np.nan),
            with_nulls(x.astype(np.float32), null, np.nan),
            with_nulls(b.astype(np.float32), bnull, np.nan),
        ], axis=1)  # fmt: skip
    check(served, "stack_mixed", want, "float32")


# -- narrow, unsigned, half-float, large and binary source types ---------------------------------


def test_narrow_and_unsigned_ints_keep_their_values(served, data):
    cols = [ints(data[c]) for c in ("i8", "u8", "i16", "u32")]
    want = np.stack([with_nulls(x.astype(np.float64), n, np.nan) for x, n in cols], axis=1)
    check(served, "narrow_f64", want, "float64")
    want = np.stack(
        [servekit.hash_bucket_column(data[c], 4099) for c in ("i8", "u8", "i16", "u32")], axis=1
    )
    check(served, "narrow_hash", want, "int64")


def test_float16_source(served, data):
    x, null = floats(data["h16"])
    check(served, "h16_f64", with_nulls(x.astype(np.float16).astype(np.float64), null, np.nan),
          "float64")  # fmt: skip


def test_hash_bucket_of_large_string_and_binary_columns(served, data):
    want = np.stack([servekit.hash_bucket_column(data[c], 777) for c in ("ls", "bs")], axis=1)
    check(served, "hash_ls_bs", want, "int64")


def test_pad_of_a_large_list_of_int32(served, data):
    want, lens = padded(data["llst"], 4, 3, np.int64)
    check(served, "pad_ll", want, "int64")
    check(served, "pad_ll_len", lens, "int32")


@pytest.mark.parametrize("name", ["fill_big", "clip_big", "pad_big"])
def test_integer_constants_past_2_53_stay_exact(served, data, name):
    """doc.go: integers flow as int64; fill and clip bounds on integer columns are integers.
    A constant read through float64 would turn 2^53+1 into 2^53."""
    i, null = ints(data["i64"])
    if name == "fill_big":
        check(served, name, with_nulls(i, null, BIG), "int64")
    elif name == "clip_big":
        check(served, name, with_nulls(np.clip(i, -BIG, BIG), null, 0), "int64")
    else:
        want, _ = padded(data["lst"], 3, BIG, np.int64)
        check(served, name, want, "int64")
