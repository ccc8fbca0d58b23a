"""The side-by-side benchmark's numpy version of the work (bench/peers/work.py) must be
the work `shmloader serve` does with bench/peers/bench.yaml, or the benchmark would
compare different jobs. Here serve runs that config on a small dataset with the bench's
columns, two ranks are read to the end, and the rows and the bit sums of every tensor
must equal work.py's transforms over every row group; work.py's own checksum must not
depend on the order of the rows, and its hash must match the spec's test vectors."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from servekit import REPO, Group

import shmloader

sys.path.insert(0, str(REPO / "bench" / "peers"))
import work  # type: ignore[import-not-found]  # noqa: E402

CONFIG = REPO / "bench" / "peers" / "bench.yaml"


@pytest.fixture(scope="module")
def bench_dataset(shmloader_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bench-data")
    subprocess.run(
        [str(shmloader_bin), "gen", "--out", str(out), "--rows", "9000", "--files", "2",
         "--row-group-rows", "1000", "--features", "100", "--categoricals", "26",
         "--strings", "4", "--null-fraction", "0.2", "--seed", "5", "--quiet"],
        check=True, timeout=120,
    )  # fmt: skip
    return out


def test_hash_matches_spec_vectors() -> None:
    assert work.check_hash_vectors() >= 50


def test_touch_sums_depend_on_columns_not_row_order() -> None:
    rng = np.random.default_rng(0)
    batch: dict[str, np.ndarray] = {
        "features": rng.standard_normal((37, 100)).astype(np.float32),
        "cats": rng.integers(-(2**62), 2**62, (37, 26)),
        "strings": rng.integers(0, 1000, (37, 4)),
        "label": rng.random(37).astype(np.float32),  # 4-byte rows: summed per element
        "id": np.arange(37, dtype=np.int64),
    }
    perm = rng.permutation(37)
    a, b, split = work.Touch(), work.Touch(), work.Touch()
    a(batch)
    b({k: v[perm] for k, v in batch.items()})
    split({k: v[perm[:20]] for k, v in batch.items()})
    split({k: v[perm[20:]] for k, v in batch.items()})
    assert a.sums == b.sums == split.sums
    assert a.rows == split.rows == 37
    swapped = dict(batch, cats=batch["cats"][:, [1, 0, *range(2, 26)]])
    d = work.Touch()
    d(swapped)
    assert d.sums["cats"] != a.sums["cats"]  # a column in another place is other data
    changed = dict(batch, label=batch["label"].copy())
    changed["label"][5] = np.nextafter(changed["label"][5], np.float32(2))
    c = work.Touch()
    c(changed)
    assert c.sums["label"] != a.sums["label"]


def test_work_is_what_serve_does(
    shmloader_bin: Path, bench_dataset: Path, shm_dir: Path, tmp_path: Path, job: str
) -> None:
    want = work.Touch()
    for path in sorted(bench_dataset.glob("*.parquet")):
        pf = pq.ParquetFile(path)
        for rg in range(pf.num_row_groups):
            want(work.transform_table(pf.read_row_group(rg, columns=work.COLUMNS)))
    assert want.rows == 9000

    got = [work.Touch(), work.Touch()]
    errors: list[BaseException] = []

    def read(rank: int) -> None:
        try:
            with shmloader.attach(job=job, rank=rank, dir=shm_dir, timeout=60) as loader:
                for batch in loader:
                    got[rank](batch)
        except BaseException as exc:  # noqa: BLE001 (reported below)
            errors.append(exc)

    with Group(shmloader_bin, shm_dir, tmp_path) as g:
        serve = g.serve(CONFIG, job, "--dataset", str(bench_dataset))
        threads = [threading.Thread(target=read, args=(r,)) for r in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert not any(t.is_alive() for t in threads), "a rank did not reach the end of the stream"
        assert serve.wait(60) == 0, serve.describe()
    assert not errors, errors
    assert got[0].rows + got[1].rows == want.rows
    assert abs(got[0].rows - got[1].rows) <= 1024  # global batches alternate between ranks
    sums = {k: (got[0].sums[k] + got[1].sums[k]) % 2**64 for k in work.OUTPUTS}
    assert sums == want.sums
