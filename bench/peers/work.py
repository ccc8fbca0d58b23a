"""The work every contender of the side-by-side benchmark does, written once.

bench/peers/bench.yaml declares it for ``shmloader serve``; this module is the same work
in numpy for the Python loaders (Petastorm, the PyTorch DataLoader), and the consumer's
side for all of them:

* columns: ``id``, ``f000..f099`` (float32, every 4th nullable), ``c00..c25`` (int64, some
  nullable), ``s00..s03`` (nullable strings), ``label``;
* transforms: the float features get ``fill_null: 0`` then ``normalize`` and are stacked
  into ``features`` [B, 100] float32; the int categoricals get ``hash_bucket`` (100,000
  buckets) into ``cats`` [B, 26] int64, a null staying null (written as 0); the strings
  get ``fill_null: ""`` then ``hash_bucket`` (1,000 buckets) into ``strings`` [B, 4]
  int64; ``label`` (float32) and ``id`` (int64) pass through;
* the consumer touches every byte of every tensor: it sums the bits of each position of
  the rows modulo 2^64 (Touch), and the sums double as an exact checksum, independent of
  the order of the rows, that the harness compares across contenders, so a contender
  that computes other bytes, puts columns elsewhere, drops or repeats rows is caught.

``hash_bucket`` is FNV-1a-64 over the seed's 8 bytes and the value's bytes (an int64's 8
bytes little-endian, a string's bytes), as producer/transform/doc.go specifies;
:func:`check_hash_vectors` checks this implementation against its test vectors.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

import numpy as np

FEATURES = [f"f{i:03d}" for i in range(100)]
CATS = [f"c{i:02d}" for i in range(26)]
STRINGS = [f"s{i:02d}" for i in range(4)]
COLUMNS = ["id", *FEATURES, *CATS, *STRINGS, "label"]
MEAN, STD = 0.25, 1.5  # normalize, as in bench.yaml
CAT_BUCKETS, STRING_BUCKETS = 100_000, 1_000
OUTPUTS = ("features", "cats", "strings", "label", "id")

_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = np.uint64(0x100000001B3)
_M64 = (1 << 64) - 1


def _seeded(seed: int) -> np.uint64:
    """FNV-1a-64 state after the seed's 8 bytes, little-endian."""
    h = _FNV_OFFSET
    for b in (seed & _M64).to_bytes(8, "little"):
        h = ((h ^ b) * 0x100000001B3) & _M64
    return np.uint64(h)


def hash_int64(values: np.ndarray, buckets: int, seed: int = 0) -> np.ndarray:
    """hash_bucket of int64 values: FNV-1a-64(seed ‖ value as 8 LE bytes) mod buckets."""
    v = np.ascontiguousarray(values, dtype=np.int64).view(np.uint64)
    h = np.full(v.shape, _seeded(seed), dtype=np.uint64)
    for i in range(8):
        h ^= (v >> np.uint64(8 * i)) & np.uint64(0xFF)
        h *= _FNV_PRIME
    return (h % np.uint64(buckets)).astype(np.int64)


def hash_strings(offsets: np.ndarray, data: np.ndarray, buckets: int, seed: int = 0) -> np.ndarray:
    """hash_bucket of n strings given as Arrow offsets (n+1 int32/int64) and data bytes."""
    offsets = offsets.astype(np.int64, copy=False)
    starts, lens = offsets[:-1], np.diff(offsets)
    h = np.full(len(lens), _seeded(seed), dtype=np.uint64)
    if len(data) == 0:
        return (h % np.uint64(buckets)).astype(np.int64)
    last = len(data) - 1
    for j in range(int(lens.max(initial=0))):
        live = lens > j
        b = data[np.minimum(starts + j, last)].astype(np.uint64)
        h = np.where(live, (h ^ b) * _FNV_PRIME, h)
    return (h % np.uint64(buckets)).astype(np.int64)


def hash_arrow_strings(arr: Any, buckets: int) -> np.ndarray:
    """hash_bucket of a pyarrow string array after fill_null(""): a null hashes as ""."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    if arr.null_count:
        arr = pc.fill_null(arr, "")
    if arr.type == pa.large_string():
        arr = arr.cast(pa.string())
    _, off_buf, data_buf = arr.buffers()
    offsets = np.frombuffer(off_buf, dtype=np.int32)[arr.offset : arr.offset + len(arr) + 1]
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.empty(0, np.uint8)
    return hash_strings(offsets, data, buckets)


def normalize(x: np.ndarray) -> np.ndarray:
    """(x - mean) / std in float64, rounded to float32: what serve computes."""
    return ((x.astype(np.float64) - MEAN) / STD).astype(np.float32)


def transform_table(table: Any) -> dict[str, np.ndarray]:
    """The bench outputs from a pyarrow Table of COLUMNS (the DataLoader contender)."""
    import pyarrow.compute as pc

    n = table.num_rows
    feats = np.empty((n, len(FEATURES)), dtype=np.float32)
    for j, name in enumerate(FEATURES):
        col = table.column(name)
        if col.null_count:
            col = pc.fill_null(col, 0.0)
        feats[:, j] = col.to_numpy()
    cats = np.empty((n, len(CATS)), dtype=np.int64)
    for j, name in enumerate(CATS):
        col = table.column(name)
        if col.null_count:
            valid = col.is_valid().to_numpy(zero_copy_only=False)
            cats[:, j] = np.where(valid, hash_int64(pc.fill_null(col, 0).to_numpy(), CAT_BUCKETS), 0)
        else:
            cats[:, j] = hash_int64(col.to_numpy(), CAT_BUCKETS)
    strings = np.empty((n, len(STRINGS)), dtype=np.int64)
    for j, name in enumerate(STRINGS):
        strings[:, j] = hash_arrow_strings(table.column(name), STRING_BUCKETS)
    return {
        "features": normalize(feats),
        "cats": cats,
        "strings": strings,
        "label": table.column("label").to_numpy().astype(np.float32, copy=False),
        "id": table.column("id").to_numpy().astype(np.int64, copy=False),
    }


def transform_frame(df: Any) -> Any:
    """The per-column transforms on a pandas DataFrame of COLUMNS (Petastorm's
    TransformSpec): the same values as transform_table, one column each; the consumer
    stacks them (see stack_columns)."""
    import pyarrow as pa

    out = {"id": df["id"].to_numpy(np.int64), "label": df["label"].to_numpy(np.float32)}
    for name in FEATURES:
        out[name] = normalize(df[name].fillna(0.0).to_numpy(np.float32))
    for name in CATS:
        s = df[name]
        if s.dtype.kind == "f":  # pandas turns a nullable int64 column into float64 + NaN
            valid = s.notna().to_numpy()
            out[name] = np.where(valid, hash_int64(s.fillna(0).to_numpy().astype(np.int64), CAT_BUCKETS), 0)
        else:
            out[name] = hash_int64(s.to_numpy(np.int64), CAT_BUCKETS)
    for name in STRINGS:
        out[name] = hash_arrow_strings(pa.array(df[name], type=pa.string(), from_pandas=True), STRING_BUCKETS)
    return type(df)(out)


def stack_columns(batch: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """A Petastorm batch (one tensor per column) as the bench outputs."""

    def np_(x: Any) -> np.ndarray:
        return x.numpy() if hasattr(x, "numpy") else np.asarray(x)

    return {
        "features": np.stack([np_(batch[c]) for c in FEATURES], axis=1),
        "cats": np.stack([np_(batch[c]) for c in CATS], axis=1),
        "strings": np.stack([np_(batch[c]) for c in STRINGS], axis=1),
        "label": np_(batch["label"]),
        "id": np_(batch["id"]),
    }


class Touch:
    """Reads every byte of every tensor of every batch and sums its bits per position in
    the row: a row of a multiple of 8 bytes as uint64 words, any other row as unsigned
    elements, modulo 2^64. The sums do not depend on the order of the rows but do on the
    order of the columns, and they fold into each tensor's exact checksum."""

    def __init__(self) -> None:
        self.rows = 0
        self.bytes = 0
        self.batches = 0
        self.cols: dict[str, np.ndarray] = {}  # tensor -> per-position sums (uint64)

    def __call__(self, batch: Mapping[str, np.ndarray]) -> None:
        for name in OUTPUTS:
            a = np.ascontiguousarray(batch[name])
            n = len(a)
            row = a.nbytes // n if n else 0
            words = a.reshape(n, -1).view(np.uint64 if row % 8 == 0 else f"u{a.itemsize}")
            s = words.sum(axis=0, dtype=np.uint64)
            self.cols[name] = self.cols[name] + s if name in self.cols else s
            self.bytes += a.nbytes
        self.rows += len(batch["id"])
        self.batches += 1

    @property
    def sums(self) -> dict[str, int]:
        """One number per tensor: position k's sum times the k-th odd number, added."""
        out = {}
        for name, s in self.cols.items():
            weights = np.arange(1, 2 * len(s), 2, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
            out[name] = int((s * weights).sum(dtype=np.uint64))
        return out


def check_hash_vectors(path: str | None = None) -> int:
    """Checks hash_int64/hash_strings against producer/transform/testdata/hash_vectors.json;
    returns the number of vectors checked (raises AssertionError on a mismatch)."""
    if path is None:
        here = os.path.dirname(os.path.abspath(__file__))
        path = os.path.join(here, "..", "..", "producer", "transform", "testdata", "hash_vectors.json")
    with open(path) as f:
        vectors = json.load(f)["vectors"]
    n = 0
    for v in vectors:
        if v["kind"] == "string":
            raw = v["value"].encode("utf-8")
            got = hash_strings(np.array([0, len(raw)]), np.frombuffer(raw, np.uint8), v["buckets"], v["seed"])
        elif v["kind"] in ("int64", "int"):
            got = hash_int64(np.array([int(v["value"])], np.int64), v["buckets"], v["seed"])
        else:
            continue
        want = int(v["bucket"])
        assert int(got[0]) == want or (want >= 2**63 and int(got[0]) % 2**64 == want), (v, int(got[0]))
        n += 1
    return n
