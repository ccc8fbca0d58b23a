"""The row filter of `shmloader serve` on crafted data: each predicate alone keeps exactly
the rows a Python evaluation of producer/config/default.yaml's rules keeps (a null never
satisfies a comparison, in or not_in; uint64 compares as unsigned; strings bytewise), in
file order, whether row groups are skipped by their statistics or read and counted.

Shuffle off, window 0, drop_last false and one rank, so the served ids are the kept ids in
file order, the last batch possibly short.
"""

from __future__ import annotations

import math
import operator
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import servekit

ROWS = 64
BATCH = 4
U63 = 2**63


def cycle(values: list[Any], shift: int) -> list[Any]:
    return [values[(i + shift) % len(values)] for i in range(ROWS)]


DATA: dict[str, list[Any]] = {
    "id": list(range(ROWS)),
    "i64": cycle(
        [None, 0, 1, -1, 300, -300, 2**63 - 1, -(2**63), 42, None, 7, 2**53, 2**53 + 1], 0
    ),
    "u64": cycle([None, 0, 5, 6, U63, 2**64 - 1, U63 - 1, 3], 1),
    "s": cycle([None, "", "a", "b", "ba", "é", "B", "zz", "a", None, "b\x00"], 2),
    "f": cycle([None, -math.inf, math.inf, -1.0, 0.0, 0.5, 2.5, 1e300, -0.0, 0.25], 3),
}
SCHEMA = pa.schema([("id", pa.int64()), ("i64", pa.int64()), ("u64", pa.uint64()),
                    ("s", pa.string()), ("f", pa.float64())])  # fmt: skip

OPS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
       ">": operator.gt, ">=": operator.ge}  # fmt: skip


def holds(pred: dict[str, Any], v: Any) -> bool:
    op = pred["op"]
    if op == "is_null":
        return v is None
    if op == "not_null":
        return v is not None
    if v is None:
        return False
    if isinstance(v, str):
        v = v.encode()
    if op in ("in", "not_in"):
        values = [x.encode() if isinstance(x, str) else x for x in pred["values"]]
        return (v in values) == (op == "in")
    value = pred["value"]
    return OPS[op](v, value.encode() if isinstance(value, str) else value)


PREDICATES = [
    [{"column": "i64", "op": "==", "value": 300}],
    [{"column": "i64", "op": "!=", "value": 300}],
    [{"column": "i64", "op": "<", "value": 0}],
    [{"column": "i64", "op": "in", "values": [1, -1, 2**63 - 1]}],
    # Integer values past 2^53 (64-bit ids) must compare exactly, not as float64.
    [{"column": "i64", "op": "==", "value": 2**53 + 1}],
    [{"column": "u64", "op": "in", "values": [2**64 - 1, 3]}],
    [{"column": "u64", "op": ">", "value": 5}],
    [{"column": "u64", "op": ">=", "value": U63}],
    [{"column": "s", "op": "in", "values": ["a", "", "é"]}],
    [{"column": "s", "op": "not_in", "values": ["a"]}],
    [{"column": "s", "op": ">", "value": "b"}],
    [{"column": "s", "op": "is_null"}],
    [{"column": "f", "op": "<=", "value": 0.25}],
    [{"column": "f", "op": ">", "value": -1}, {"column": "f", "op": "<=", "value": 2.5}],
    [{"column": "f", "op": "not_in", "values": [0.5, 2.5]}],
    [{"column": "id", "op": ">=", "value": 40}],  # whole row groups skipped by statistics
    [{"column": "id", "op": "<", "value": 20}, {"column": "s", "op": "not_null"}],
]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    ds = tmp_path_factory.mktemp("filter") / "crafted"
    ds.mkdir()
    table = pa.table({k: pa.array(v, SCHEMA.field(k).type) for k, v in DATA.items()},
                     schema=SCHEMA)  # fmt: skip
    half = ROWS // 2
    for i in range(2):
        pq.write_table(table.slice(i * half, half), ds / f"part-{i}.parquet",
                       row_group_size=half // 2)  # fmt: skip
    return ds


@pytest.mark.parametrize(
    "flt",
    PREDICATES,
    ids=lambda f: " and ".join(
        f"{p['column']} {p['op']} {p.get('value', p.get('values', ''))}" for p in f
    ),
)
def test_filter_keeps_exactly_the_matching_rows(group, dataset, tmp_path, flt):
    want = [i for i in range(ROWS) if all(holds(p, DATA[p["column"]][i]) for p in flt)]
    assert 0 < len(want) < ROWS, "a predicate must keep some rows and drop some"
    cfg = servekit.write_config(
        tmp_path / "f.yaml", dataset=str(dataset), batch_size=BATCH, drop_last=False,
        shuffle={"row_groups": False, "window": 0}, filter=flt, outputs={"id": "id"},
    )  # fmt: skip
    job = "flt-" + uuid.uuid4().hex[:12]
    consumer = group.consume(job, 0, "r0", "--keep", "ids")
    serve = group.serve(cfg, job, "--drain-timeout", "10s")
    rc = serve.wait(timeout=20)
    servekit.assert_no_panic(serve.stderr)
    assert rc == 0, serve.describe()
    res = consumer.result(timeout=20)
    assert res.end == "stream_end", res.end
    got = res.tensors["id"].tolist() if res.batches else []
    assert got == want, f"kept {got}, want {want}"
    rows = [b["rows"] for b in res.batches]
    full, rest = divmod(len(want), BATCH)
    assert rows == [BATCH] * full + ([rest] if rest else [])
