"""Reference values of `shmloader serve`'s tensors, computed from pyarrow's reading of the
same Parquet files with Python's datetime, zoneinfo and decimal, per
producer/transform/doc.go: the counts a timestamp, date or time column flows as, the parts
of the datetime step, decimals as floats and as the decimal step's int64s, and a check of a
served tensor against such a reference (shared by test_serve_types and
test_serve_writers).
"""

from __future__ import annotations

import decimal
from datetime import datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo

import numpy as np
import pyarrow as pa
import servekit

I64_MIN, I64_MAX = -(2**63), 2**63 - 1
PER_SEC = {"s": 1, "ms": 1000, "us": 10**6, "ns": 10**9}
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def stored(arr: pa.Array) -> pa.Array:
    """The column as the file's schema gives it back (doc.go): Parquet has no seconds, so a
    timestamp[s] is read as timestamp[ms] without its zone, a time32[s] as time32[ms], and a
    date64 as date32."""
    t = arr.type
    if pa.types.is_timestamp(t) and t.unit == "s":
        return arr.cast(pa.timestamp("ms", "UTC" if t.tz else None))
    if pa.types.is_time32(t) and t.unit == "s":
        return arr.cast(pa.time32("ms"))
    if pa.types.is_date64(t):
        return arr.cast(pa.date32())
    return arr


def counts(arr: pa.Array) -> np.ndarray:
    """The int64 counts of the column's stored unit, 0 for nulls."""
    a = stored(arr)
    ints = a.cast(pa.int32() if a.type.bit_width == 32 else pa.int64()).to_pylist()
    return np.array([0 if v is None else v for v in ints], np.int64)


def unit_ns(arr: pa.Array) -> int:
    """Nanoseconds in one unit of the stored column."""
    t = stored(arr).type
    if pa.types.is_date32(t):
        return 86400 * 10**9
    return 10**9 // PER_SEC[t.unit]


def nulls(arr: pa.Array) -> np.ndarray:
    return np.array(arr.is_null().to_pylist())


def zone(name: str | None) -> tzinfo:
    """A zone as Arrow names them: None or UTC, ±HH:MM, or an IANA name (zoneinfo: the tz
    database pandas reads too)."""
    if name is None or name.upper() == "UTC":
        return timezone.utc
    if name[0] in "+-" and name[3] == ":":
        off = timedelta(hours=int(name[1:3]), minutes=int(name[4:6]))
        return timezone(off if name[0] == "+" else -off)
    return ZoneInfo(name)


def part_ref(arr: pa.Array, part: str, tz: str | None = None) -> np.ndarray:
    """Python's datetime of each stored value's instant (floored to the second), in tz if
    given, else in the column's zone, else UTC; nulls 0."""
    a = stored(arr)
    z = zone(tz if tz is not None else getattr(a.type, "tz", None))
    u = unit_ns(arr)
    out = []
    for v, null in zip(counts(arr).tolist(), nulls(arr), strict=True):
        if null:
            out.append(0)
            continue
        t = (EPOCH + timedelta(seconds=v * u // 10**9)).astimezone(z)
        out.append({"year": t.year, "month": t.month, "day": t.day, "hour": t.hour,
                    "minute": t.minute, "second": t.second, "day_of_week": t.weekday(),
                    "day_of_year": t.timetuple().tm_yday}[part])  # fmt: skip
    return np.array(out, np.int64)


def unix_ref(arr: pa.Array, unit: str) -> np.ndarray:
    """unix_ms/us/ns: multiply, saturating, or floor-divide; nulls 0."""
    have, want = unit_ns(arr), 10**9 // PER_SEC[unit]
    out = []
    for v, null in zip(counts(arr).tolist(), nulls(arr), strict=True):
        x = 0 if null else (v * (have // want) if have >= want else v // (want // have))
        out.append(min(max(x, I64_MIN), I64_MAX))
    return np.array(out, np.int64)


def seconds_ref(arr: pa.Array) -> np.ndarray:
    """unix_seconds: the counts as float64 over the units in a second (numpy's division)."""
    c, u = counts(arr).astype(np.float64), unit_ns(arr)
    x = c * (u // 10**9) if u >= 10**9 else c / (10**9 // u)
    return np.where(nulls(arr), np.nan, x)


def check(res: servekit.Result, name: str, want: np.ndarray, dtype: str) -> None:
    got = res.tensors[name]
    assert res.meta["dtypes"][name] == dtype, (name, res.meta["dtypes"][name])
    assert got.shape == want.shape, (name, got.shape, want.shape)
    if np.issubdtype(got.dtype, np.floating):
        servekit.assert_same_floats(got, want.astype(got.dtype), name)
        return
    bad = np.argwhere(got != want)
    assert bad.size == 0, (
        f"{name}: {len(bad)} values differ, first at (row, column) {bad[:6].tolist()}: "
        f"got {[int(got[tuple(b)]) for b in bad[:6]]} want {[int(want[tuple(b)]) for b in bad[:6]]}"
    )


def dec_float(arr: pa.Array) -> np.ndarray:
    return np.array([np.nan if d is None else float(d) for d in arr.to_pylist()], np.float64)


def dec_int(arr: pa.Array, shift: int) -> np.ndarray:
    """unscaled × 10^shift, saturating; nulls 0."""
    scale = arr.type.scale
    out = []
    with decimal.localcontext() as ctx:
        ctx.prec = 200
        for d in arr.to_pylist():
            v = 0 if d is None else int(d.scaleb(scale + shift))
            out.append(min(max(v, I64_MIN), I64_MAX))
    return np.array(out, np.int64)


def as_int96(arr: pa.Array) -> pa.Array:
    """What an INT96 column reads as: timestamp[ns] without a zone (the instants in UTC)."""
    return arr.cast(pa.timestamp("ns", arr.type.tz)).cast(pa.timestamp("ns"))
