"""Timestamp, date, time, decimal and dictionary columns through `shmloader serve`.

Two datasets are written here with pyarrow, each as two files of two row groups, the
first file dictionary-encoded and the second not: one with timestamps of every unit with
and without a time zone, dates, times of day and decimals of several precisions and
scales (stored as FIXED_LEN_BYTE_ARRAY) and a dictionary of strings, and one written with
``use_deprecated_int96_timestamps`` and ``store_decimal_as_integer`` (INT96 timestamps,
INT32 and INT64 decimals). Each is served twice, on the page path (the default: the page
decoder straight into the transforms) and on the array path (SHMLOADER_DECODER=arrow: the
same decoder into Arrow arrays, then the transforms), which must give the same bytes; the
tensors are then compared value by value with Python's datetime and zoneinfo (the tz
database pandas reads), with pyarrow.compute where its zones hold (1900 to 2037), and the
decimals with Python's float(Decimal). The semantics are those of producer/transform/doc.go.
"""

from __future__ import annotations

from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
import servekit
from arrowref import (
    PER_SEC,
    as_int96,
    check,
    counts,
    dec_float,
    dec_int,
    nulls,
    part_ref,
    seconds_ref,
    stored,
    unix_ref,
)

ROWS = 64
BATCH = 16
NY = "America/New_York"
CALENDAR = ["year", "month", "day", "hour", "minute", "second", "day_of_week", "day_of_year"]


def ns(text: str) -> int:
    """Nanoseconds since 1970 of an ISO instant (UTC), to the second."""
    t = datetime.fromisoformat(text).replace(tzinfo=timezone.utc)
    return int((t - datetime(1970, 1, 1, tzinfo=timezone.utc)).total_seconds()) * 10**9


# Edges: the epoch and the nanosecond before it, pre-1970, leap days, the last day of a
# leap year, New York's DST changes (the hour skipped, the hour repeated), far years.
INSTANTS = [
    0, -1, 1, ns("1969-12-31T23:59:59") + 999_999_999, ns("1900-03-01T12:00:00"),
    ns("1969-07-20T20:17:40") + 123_456_789, ns("2000-02-29T00:00:00"),
    ns("2024-02-29T23:59:59") + 500_000_000, ns("2024-12-31T23:00:00"),
    ns("2021-03-14T06:59:59"), ns("2021-03-14T07:00:00"), ns("2021-11-07T05:59:59"),
    ns("2021-11-07T06:00:00"), ns("2021-11-07T06:30:00"), ns("1677-09-22T00:12:44"),
    ns("2262-04-11T23:47:16"), ns("1800-01-01T00:00:00") - 1, ns("2100-03-01T00:00:00"),
]  # fmt: skip


def instants() -> list[int]:
    rng = np.random.default_rng(11)
    lo, hi = ns("1900-01-01T00:00:00"), ns("2100-01-01T00:00:00")
    spread = [int(v) for v in rng.integers(lo, hi, ROWS - len(INSTANTS))]
    return INSTANTS + spread


def with_nulls(values: list[Any], every: int, shift: int) -> list[Any]:
    return [None if (i + shift) % every == 0 else v for i, v in enumerate(values)]


def decimals(precision: int, scale: int, rng: np.random.Generator) -> list[Decimal | None]:
    """Values of decimal(precision, scale): the largest of either sign, 0, small ones, and
    random ones of every length."""
    top = 10**precision - 1
    fixed = [top, -top, 0, 1, -1, 5, -5, 10**scale, -(10**scale) // 2]
    out = []
    for i in range(ROWS):
        if i < len(fixed):
            u = fixed[i]
        else:
            digits = int(rng.integers(1, precision + 1))
            u = int("".join(str(int(d)) for d in rng.integers(0, 10, digits))) * (-1) ** i
        out.append(Decimal(f"{u}E-{scale}"))  # exact: no context rounding
    return with_nulls(out, 11, precision)


DECIMALS = {"dec9_2": (9, 2), "dec18_6": (18, 6), "dec38_18": (38, 18), "dec5_0": (5, 0)}
DEC256 = {"dec45_12": (45, 12)}


def main_table() -> pa.Table:
    base = instants()
    cols: dict[str, pa.Array] = {"id": pa.array(range(ROWS), pa.int64())}
    for k, unit in enumerate(PER_SEC):
        counts = [v // (10**9 // PER_SEC[unit]) for v in base]
        cols[f"ts_{unit}"] = pa.array(with_nulls(counts, 7, k), pa.timestamp(unit))
        cols[f"ts_{unit}_ny"] = pa.array(with_nulls(counts, 9, k), pa.timestamp(unit, tz=NY))
    cols["ts_ms_fixed"] = pa.array(with_nulls([v // 10**6 for v in base], 5, 1),
                                   pa.timestamp("ms", tz="+05:45"))  # fmt: skip
    days = [v // (86400 * 10**9) for v in base]
    cols["d32"] = pa.array(with_nulls(days, 8, 0), pa.date32())
    cols["d64"] = pa.array(with_nulls([d * 86_400_000 for d in days], 8, 3), pa.date64())
    tod = [v % (86400 * 10**9) for v in base]
    cols["t32s"] = pa.array(with_nulls([v // 10**9 for v in tod], 6, 0), pa.time32("s"))
    cols["t32ms"] = pa.array(with_nulls([v // 10**6 for v in tod], 6, 1), pa.time32("ms"))
    cols["t64us"] = pa.array(with_nulls([v // 10**3 for v in tod], 6, 2), pa.time64("us"))
    cols["t64ns"] = pa.array(with_nulls(tod, 6, 3), pa.time64("ns"))
    rng = np.random.default_rng(12)
    for name, (p, s) in DECIMALS.items():
        cols[name] = pa.array(decimals(p, s, rng), pa.decimal128(p, s))
    for name, (p, s) in DEC256.items():
        cols[name] = pa.array(decimals(p, s, rng), pa.decimal256(p, s))
    cats = with_nulls([f"c{int(v)}" for v in rng.integers(0, 5, ROWS)], 4, 1)
    cols["cat"] = pa.array(cats, pa.string()).dictionary_encode()  # a pandas categorical
    return pa.table(cols)


def int96_table() -> pa.Table:
    base = instants()
    rng = np.random.default_rng(13)
    return pa.table({
        "id": pa.array(range(ROWS), pa.int64()),
        "i96_ns": pa.array(with_nulls(base, 7, 0), pa.timestamp("ns")),
        "i96_us_ny": pa.array(with_nulls([v // 1000 for v in base], 9, 1), pa.timestamp("us", NY)),
        "i96_ms": pa.array(with_nulls([v // 10**6 for v in base], 5, 2), pa.timestamp("ms")),
        **{n: pa.array(decimals(p, s, rng), pa.decimal128(p, s)) for n, (p, s) in DECIMALS.items()},
    })  # fmt: skip


TS = ["ts_s", "ts_ms", "ts_us", "ts_ns", "ts_s_ny", "ts_ms_ny", "ts_us_ny", "ts_ns_ny",
      "ts_ms_fixed"]  # fmt: skip
DATES = ["d32", "d64"]
TIMES = ["t32s", "t32ms", "t64us", "t64ns"]
DECS = [*DECIMALS, *DEC256]
I96 = ["i96_ns", "i96_us_ny", "i96_ms"]


def dt(part: str, tz: str | None = None) -> dict[str, Any]:
    return {"datetime": part if tz is None else {"part": part, "tz": tz}}


def main_outputs() -> dict[str, Any]:
    every = TS + DATES + TIMES
    outs: dict[str, Any] = {
        "raw_ts": {"columns": TS}, "raw_dt": {"columns": DATES + TIMES},
        "unix_seconds": {"columns": every, "dtype": "float64", "transforms": [dt("unix_seconds")]},
        "hour_tokyo": {"columns": ["ts_ns", "ts_us_ny"], "transforms": [dt("hour", "Asia/Tokyo")]},
        "doy_offset": {"columns": ["ts_ms", "ts_ns_ny"],
                       "transforms": [dt("day_of_year", "-03:30")]},
        "hour_then": {"columns": "ts_ms_ny",
                      "transforms": [dt("hour"), {"fill_null": -1}, {"cast": "int8"}]},
        "dec_f": {"columns": DECS, "dtype": "float64"},
        "dec_unscaled": {"columns": DECS, "transforms": [{"decimal": "unscaled"}]},
        "dec_s20": {"columns": DECS, "transforms": [{"decimal": {"scale": 20}}]},
        "cat": {"columns": "cat", "transforms": [{"fill_null": "?"}, {"hash_bucket": 1000}]},
        "id": "id",
    }  # fmt: skip
    for unit in ("ms", "us", "ns"):
        outs[f"unix_{unit}"] = {"columns": every, "transforms": [dt(f"unix_{unit}")]}
    for part in CALENDAR:
        outs[part] = {"columns": TS + DATES, "transforms": [dt(part)]}
    for part in ("hour", "minute", "second"):
        outs[f"{part}_tod"] = {"columns": TIMES, "transforms": [dt(part)]}
    return outs


def int96_outputs() -> dict[str, Any]:
    outs: dict[str, Any] = {
        "raw": {"columns": I96}, "dec_f": {"columns": list(DECIMALS), "dtype": "float64"},
        "dec_unscaled": {"columns": list(DECIMALS), "transforms": [{"decimal": "unscaled"}]},
        "unix_seconds": {"columns": I96, "dtype": "float64", "transforms": [dt("unix_seconds")]},
        "id": "id",
    }  # fmt: skip
    for part in CALENDAR:
        outs[part] = {"columns": I96, "transforms": [dt(part)]}
    return outs


def write(table: pa.Table, ds: Path, **kw: Any) -> None:
    ds.mkdir()
    half = ROWS // 2
    for i, dictionary in enumerate((True, False)):
        pq.write_table(table.slice(i * half, half), ds / f"part-{i}.parquet",
                       row_group_size=half // 2, use_dictionary=dictionary, **kw)  # fmt: skip


def serve(bin: Path, tmp: Path, ds: Path, outputs: dict[str, Any], decoder: str) -> servekit.Result:
    cfg = servekit.write_config(
        tmp / f"{ds.name}-{decoder}.yaml", dataset=str(ds / "part-*.parquet"), batch_size=BATCH,
        shuffle={"row_groups": False, "window": 0}, drop_last=True, outputs=outputs,
    )  # fmt: skip
    res = servekit.serve_in_order(
        bin, tmp, cfg, f"{ds.name}-{decoder}", {"SHMLOADER_DECODER": decoder}
    )
    assert np.array_equal(res.tensors["id"], np.arange(ROWS)), "rows out of file order"
    return res


def served_both(bin: Path, tmp: Path, ds: Path, outputs: dict[str, Any]) -> servekit.Result:
    """Serves ds on the page path and on the array path; the bytes must agree."""
    pages, arrow = (serve(bin, tmp, ds, outputs, d) for d in ("pages", "arrow"))
    assert pages.meta["dtypes"] == arrow.meta["dtypes"]
    for name, got in pages.tensors.items():
        other = arrow.tensors[name]
        assert got.tobytes() == other.tobytes(), f"{name}: the page path and the array path differ"
    return pages


@pytest.fixture(scope="module")
def main(shmloader_bin: Path, tmp_path_factory, library) -> tuple[pa.Table, servekit.Result]:
    tmp = tmp_path_factory.mktemp("types")
    table = main_table()
    write(table, tmp / "main")
    meta = pq.ParquetFile(tmp / "main" / "part-0.parquet").metadata
    ts_col = meta.schema.names.index("ts_ns_ny")
    assert "RLE_DICTIONARY" in meta.row_group(0).column(ts_col).encodings
    return table, served_both(shmloader_bin, tmp, tmp / "main", main_outputs())


@pytest.fixture(scope="module")
def int96(shmloader_bin: Path, tmp_path_factory, library) -> tuple[pa.Table, servekit.Result]:
    tmp = tmp_path_factory.mktemp("types96")
    table = int96_table()
    write(table, tmp / "int96", use_deprecated_int96_timestamps=True, store_decimal_as_integer=True)
    dictionary = pq.ParquetFile(tmp / "int96" / "part-0.parquet").metadata.row_group(0)
    assert "RLE_DICTIONARY" in dictionary.column(1).encodings  # i96_ns: INT96 dictionary pages
    meta = pq.ParquetFile(tmp / "int96" / "part-1.parquet").metadata
    physical = {meta.schema.column(i).name: meta.schema.column(i).physical_type
                for i in range(meta.num_columns)}  # fmt: skip
    assert physical["i96_us_ny"] == "INT96" and physical["dec9_2"] == "INT32", physical
    assert physical["dec18_6"] == "INT64" and physical["dec38_18"] == "FIXED_LEN_BYTE_ARRAY"
    return table, served_both(shmloader_bin, tmp, tmp / "int96", int96_outputs())


# -- references ----------------------------------------------------------------------------


def pyarrow_part(arr: pa.Array, part: str) -> np.ndarray:
    """pyarrow.compute's part of the stored column; nulls 0."""
    a = stored(arr)
    if pa.types.is_date32(a.type):
        a = a.cast(pa.timestamp("s"))
    got = getattr(pc, part)(a).to_pylist()
    return np.array([0 if v is None else v for v in got], np.int64)


def stack(table: pa.Table, cols: list[str], ref) -> np.ndarray:
    return np.stack([ref(table.column(c).combine_chunks()) for c in cols], axis=1)


# -- timestamps, dates, times --------------------------------------------------------------


def test_default_flow_is_the_stored_int64_counts(main):
    table, res = main
    check(res, "raw_ts", stack(table, TS, counts), "int64")
    check(res, "raw_dt", stack(table, DATES + TIMES, counts), "int64")


def test_calendar_parts_match_pyarrow(main):
    table, res = main
    for part in CALENDAR:
        check(res, part, stack(table, TS + DATES, lambda a, p=part: part_ref(a, p)), "int64")


def test_pyarrow_agrees_from_1900_to_2037(main):
    """pyarrow.compute gives the same parts where its tz handling holds: it ignores the DST
    rules of zones past 2037 (the zone files' last transition) and overflows near the ends
    of the nanosecond range, where zoneinfo and shmloader do neither."""
    table, res = main
    inside = np.array([ns("1900-01-01T00:00:00") <= v < ns("2037-01-01T00:00:00")
                       for v in instants()])  # fmt: skip
    assert inside.sum() > ROWS // 2
    for part in CALENDAR:
        want = stack(table, TS + DATES, lambda a, p=part: pyarrow_part(a, p))
        check(res, part, np.where(inside[:, None], want, res.tensors[part]), "int64")
    for part in ("hour", "minute", "second"):
        want = stack(table, TIMES, lambda a, p=part: pyarrow_part(a, p))
        check(res, f"{part}_tod", want, "int64")


def test_time_of_day_parts(main):
    table, res = main
    for part in ("hour", "minute", "second"):
        check(res, f"{part}_tod", stack(table, TIMES, lambda a, p=part: part_ref(a, p)), "int64")


def test_zone_of_the_step_overrides_the_column_zone(main):
    table, res = main
    check(res, "hour_tokyo",
          stack(table, ["ts_ns", "ts_us_ny"], lambda a: part_ref(a, "hour", "Asia/Tokyo")),
          "int64")  # fmt: skip
    check(res, "doy_offset",
          stack(table, ["ts_ms", "ts_ns_ny"], lambda a: part_ref(a, "day_of_year", "-03:30")),
          "int64")  # fmt: skip


def test_new_york_dst_hours(main):
    """The DST rows, spelled out: 01:59:59 EST then 03:00 EDT; 01:59:59 EDT then 01:00 EST."""
    table, res = main
    col = TS.index("ts_ns_ny")
    changes = ("2021-03-14T06:59:59", "2021-03-14T07:00:00", "2021-11-07T05:59:59",
               "2021-11-07T06:00:00")  # fmt: skip
    rows = [INSTANTS.index(ns(t)) for t in changes]
    null = nulls(table.column("ts_ns_ny").combine_chunks())
    want = [1, 3, 1, 1]
    got = [int(res.tensors["hour"][r, col]) for r in rows]
    assert got == [0 if null[r] else w for r, w in zip(rows, want, strict=True)], got


def test_unix_parts(main):
    table, res = main
    every = TS + DATES + TIMES
    for unit in ("ms", "us", "ns"):
        check(res, f"unix_{unit}", stack(table, every, lambda a, u=unit: unix_ref(a, u)), "int64")
    check(res, "unix_seconds", stack(table, every, seconds_ref), "float64")


def test_steps_after_datetime_act_on_the_part(main):
    table, res = main
    hour = part_ref(table.column("ts_ms_ny").combine_chunks(), "hour")
    hour[nulls(table.column("ts_ms_ny").combine_chunks())] = -1
    check(res, "hour_then", hour.astype(np.int8), "int8")


# -- decimals ------------------------------------------------------------------------------


def test_decimals_are_the_nearest_float64(main):
    table, res = main
    check(res, "dec_f", stack(table, DECS, dec_float), "float64")


def test_decimal_step_gives_exact_saturating_int64(main):
    table, res = main
    check(res, "dec_unscaled", stack(table, DECS, lambda a: dec_int(a, 0)), "int64")
    check(res, "dec_s20", stack(table, DECS, lambda a: dec_int(a, 20 - a.type.scale)), "int64")


# -- INT96 timestamps, INT32 and INT64 decimals --------------------------------------------


def test_int96_timestamps_read_as_nanoseconds(int96):
    table, res = int96
    check(res, "raw", stack(table, I96, lambda a: counts(as_int96(a))), "int64")
    for part in CALENDAR:
        check(res, part, stack(table, I96, lambda a, p=part: part_ref(as_int96(a), p)), "int64")
    check(res, "unix_seconds", stack(table, I96, lambda a: seconds_ref(as_int96(a))), "float64")


def test_integer_stored_decimals(int96):
    table, res = int96
    check(res, "dec_f", stack(table, list(DECIMALS), dec_float), "float64")
    check(res, "dec_unscaled", stack(table, list(DECIMALS), lambda a: dec_int(a, 0)), "int64")


def test_dictionary_strings_hash_as_their_values(main):
    table, res = main
    values = ["?" if v is None else v for v in table.column("cat").to_pylist()]
    check(res, "cat", servekit.hash_bucket_column(values, 1000), "int64")
