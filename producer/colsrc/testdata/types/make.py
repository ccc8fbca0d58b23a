"""Writes the two datasets of bindings/python/tests/test_serve_types.py here (main/ and
int96/, each a dictionary-encoded file and a plain one, as that test writes them), and
duration/ (a duration column, whose Arrow schema pyarrow stores), for colsrc's
TestArraysOfPyarrowFiles and TestArraysDuration. Run from the repository root:

    .venv/bin/python producer/colsrc/testdata/types/make.py
"""

import shutil
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here.parents[3] / "bindings" / "python" / "tests"))

import test_serve_types as types  # noqa: E402

for name in ("main", "int96", "duration"):
    shutil.rmtree(here / name, ignore_errors=True)
types.write(types.main_table(), here / "main")
types.write(types.int96_table(), here / "int96", use_deprecated_int96_timestamps=True,
            store_decimal_as_integer=True)  # fmt: skip
(here / "duration").mkdir()
pq.write_table(pa.table({"d": pa.array([1, None, -5, 2**63 - 1], pa.duration("ms"))}),
               here / "duration" / "part-0.parquet")  # fmt: skip
