"""`shmloader serve` end to end: a `shmloader gen` dataset served to two trainer processes.

One serve run (2 ranks, 2 epochs, a row filter, a shuffle window) is shared by the first
tests of this module:
- exactly once: per epoch every kept row reaches exactly one rank once, apart from the
  dropped tail, whose size is what serve reports and what the drop_last rule gives;
  both ranks get the same number of batches, `loader.epoch()` stops at each epoch's end
  and the stream ends after the last epoch;
- values: every tensor of every row equals an independent numpy/pyarrow computation of the
  same transforms on the Parquet files, looked up by id.
Two more runs: drop_last false with 3 ranks (a short last batch, ranks one batch apart),
and 4 ranks over windows smaller than a step (serving must never stall).
"""

from __future__ import annotations

import json
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
import servekit
from servekit import GEN_ROWS

RANKS = 2
EPOCHS = 2
BATCH = 620  # 15768 kept rows: 25 batches fit, 24 (a multiple of the ranks) are served
MEANS = [0.5 * j - 2 for j in range(8)]
STDS = [1.0 + j for j in range(8)]
CLIP = (-3.0, 3.0)
PAD = 8
PAD_VALUE = -1
CAT_HASH = {"buckets": 1000, "seed": 7}
STR_BUCKETS = 500
RAW_HASH = {"buckets": 97, "seed": 0xDEADBEEF}

FILTER = [
    {"column": "c00", "op": "!=", "value": 3},
    {"column": "s00", "op": "not_null"},
]

OUTPUTS = {
    "features": {
        "columns": ["f000..f007"],
        "dtype": "float32",
        "transforms": [
            {"fill_null": 0},
            {"normalize": {"mean": MEANS, "std": STDS}},
            {"clip": {"min": CLIP[0], "max": CLIP[1]}},
        ],
    },
    "cats": {"columns": ["c00", "c01", "c02"], "transforms": [{"hash_bucket": CAT_HASH}]},
    "strs": {"columns": "s0*", "transforms": [{"fill_null": ""}, {"hash_bucket": STR_BUCKETS}]},
    "s01raw": {"columns": "s01", "transforms": [{"hash_bucket": RAW_HASH}]},
    "seq": {"columns": "seq", "transforms": [{"pad": {"length": PAD, "value": PAD_VALUE}}]},
    "label": "label",
    "id": {"columns": "id"},
}


@pytest.fixture(scope="module")
def run(shmloader_bin: Path, gen_dataset: Path, tmp_path_factory, library) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("e2e")
    shm_dir = Path(tempfile.mkdtemp(prefix="shmloader-test-", dir="/dev/shm"))
    job = "e2e-" + uuid.uuid4().hex[:12]
    cfg = servekit.write_config(
        tmp / "e2e.yaml", dataset=str(gen_dataset), batch_size=BATCH, seed=11, epochs=EPOCHS,
        ranks=RANKS, shuffle={"row_groups": True, "window": 3}, drop_last=True,
        filter=FILTER, outputs=OUTPUTS,
    )  # fmt: skip
    try:
        with servekit.Group(shmloader_bin, shm_dir, tmp) as g:
            consumers = [
                g.consume(job, r, f"rank{r}", "--epochs", str(EPOCHS)) for r in range(RANKS)
            ]
            serve = g.serve(cfg, job, "--drain-timeout", "30s")
            results = servekit.wait_all(consumers, timeout=60)
            rc = serve.wait(timeout=30)
            assert rc == 0, serve.describe()
            servekit.assert_no_panic(serve.stderr)
            return {"serve": serve, "results": results, "segments": servekit.segments(shm_dir)}
    finally:
        shutil.rmtree(shm_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def table(gen_dataset: Path) -> pa.Table:
    t = pq.read_table(gen_dataset)
    ids = t["id"].to_numpy()
    assert np.array_equal(ids, np.arange(GEN_ROWS)), "gen's ids are 0..rows-1 in file order"
    return t


def kept_ids(t: pa.Table) -> np.ndarray:
    """The filter, evaluated by pyarrow (SQL null semantics: a null c00 is not kept)."""
    mask = pc.and_kleene(pc.not_equal(t["c00"], 3), pc.is_valid(t["s00"]))
    return t["id"].to_numpy()[pc.fill_null(mask, False).to_numpy(zero_copy_only=False)]


def test_every_kept_row_once_per_epoch_minus_the_reported_tail(run, table):
    serve, results = run["serve"], run["results"]
    kept = kept_ids(table)
    summary = serve.summary()
    world = RANKS
    assert (len(kept) // BATCH) % world, "choose sizes where drop_last must round down"
    global_batches = (len(kept) // BATCH) // world * world
    assert summary["global"] == global_batches, (summary, len(kept))
    assert summary["dropped"] == len(kept) - global_batches * BATCH, (summary, len(kept))
    assert summary["dropped"] > 0, "choose sizes that leave a tail to drop"
    assert summary["steps"] == global_batches // world

    steps = global_batches // world
    for r, res in enumerate(results):
        assert res.end == "stream_end", (r, res.end)
        assert res.meta["epoch_counts"] == [steps] * EPOCHS, (r, res.meta["epoch_counts"])
        want = [(e, s) for e in range(EPOCHS) for s in range(steps)]
        assert [(b["epoch"], b["step"]) for b in res.batches] == want, r
        assert all(b["rows"] == BATCH for b in res.batches)
    assert serve.results() == {r: (steps * EPOCHS, steps * EPOCHS * BATCH) for r in range(RANKS)}
    # Everything serve says goes to stderr: stdout is left to the scripts around it.
    assert serve.stdout == "", serve.stdout

    kept_set = set(kept.tolist())
    orders = []
    for epoch in range(EPOCHS):
        ids = np.concatenate([res.epoch_rows(epoch) for res in results])
        assert len(ids) == global_batches * BATCH
        uniq, counts = np.unique(ids, return_counts=True)
        assert (counts == 1).all(), f"epoch {epoch}: ids delivered twice: {uniq[counts > 1][:10]}"
        extra = set(uniq.tolist()) - kept_set
        assert not extra, f"epoch {epoch}: rows the filter drops were served: {sorted(extra)[:10]}"
        assert len(kept_set) - len(uniq) == summary["dropped"]
        orders.append(np.concatenate([res.epoch_rows(epoch)[:BATCH] for res in results]))
    assert not np.array_equal(orders[0], orders[1]), "epochs 0 and 1 came in the same order"
    assert run["segments"] == [], f"segments left after serve exited: {run['segments']}"


def reference(t: pa.Table) -> dict[str, np.ndarray]:
    """Every output for every row of the dataset (row i is id i), computed from doc.go."""
    ref: dict[str, np.ndarray] = {}
    feats = []
    for j in range(8):
        x = pc.fill_null(t[f"f{j:03d}"], 0).to_numpy().astype(np.float64)
        x = (x - MEANS[j]) / STDS[j]
        x = np.where(x < CLIP[0], CLIP[0], np.where(x > CLIP[1], CLIP[1], x))
        feats.append(x)
    ref["features"] = np.stack(feats, axis=1).astype(np.float32)
    ref["cats"] = np.stack(
        [servekit.hash_bucket_column(t[c].to_pylist(), **CAT_HASH) for c in ("c00", "c01", "c02")],
        axis=1,
    )
    ref["strs"] = np.stack(
        [
            servekit.hash_bucket_column(
                ["" if v is None else v for v in t[c].to_pylist()], STR_BUCKETS
            )
            for c in ("s00", "s01")
        ],  # fmt: skip
        axis=1,
    )
    ref["s01raw"] = servekit.hash_bucket_column(t["s01"].to_pylist(), **RAW_HASH)
    seq = np.full((t.num_rows, PAD), PAD_VALUE, np.int64)
    seq_len = np.zeros(t.num_rows, np.int32)
    for i, items in enumerate(t["seq"].to_pylist()):
        if items:
            n = min(len(items), PAD)
            seq[i, :n] = items[:n]
            seq_len[i] = n
    ref["seq"], ref["seq_len"] = seq, seq_len
    ref["label"] = t["label"].to_numpy().astype(np.float32)
    ref["id"] = t["id"].to_numpy()
    return ref


def test_hash_reference_matches_the_checked_vectors():
    vectors = json.loads(servekit.HASH_VECTORS.read_text())["vectors"]
    assert len(vectors) > 10
    for v in vectors:
        value = v["value"] if v["kind"] == "string" else int(v["value"])
        raw = value.encode() if isinstance(value, str) else servekit.int_bytes(value)
        assert servekit.hash_bytes(v["seed"], raw) == int(v["hash"], 16), v
        assert servekit.hash_bucket_value(value, v["buckets"], v["seed"]) == v["bucket"], v


def test_values_equal_the_transforms_computed_from_the_parquet_files(run, table):
    ref = reference(table)
    # Make sure the data exercises what the transforms handle.
    assert table["f000"].null_count and table["c02"].null_count and table["s01"].null_count
    assert (ref["seq_len"] == PAD).any() and (ref["seq_len"] == 0).any()
    assert (np.abs(ref["features"]) == CLIP[1]).any(), "no value was clipped"
    for r, res in enumerate(run["results"]):
        t = res.tensors
        assert res.meta["dtypes"] == {
            "features": "float32", "cats": "int64", "strs": "int64", "s01raw": "int64",
            "seq": "int64", "seq_len": "int32", "label": "float32", "id": "int64",
        }  # fmt: skip
        ids = t["id"]
        assert len(ids) == sum(b["rows"] for b in res.batches)
        for name, want in ref.items():
            got = t[name]
            assert got.dtype == want.dtype, (name, got.dtype)
            expect = want[ids]
            assert got.shape == expect.shape, (name, got.shape, expect.shape)
            if name == "features":
                np.testing.assert_allclose(got, expect, rtol=1e-6, atol=1e-6,
                                           err_msg=f"rank {r} {name}")  # fmt: skip
            else:
                bad = np.flatnonzero((got != expect).reshape(len(ids), -1).any(axis=1))
                assert bad.size == 0, (
                    f"rank {r} {name}: {bad.size} rows differ, e.g. id {ids[bad[0]]}: "
                    f"got {got[bad[0]]} want {expect[bad[0]]}"
                )


def test_without_drop_last_every_row_once_and_one_short_batch(group, gen_dataset, tmp_path):
    """drop_last: false with 3 ranks. The 20 row groups form 2 partitions of 10000 rows
    (plan v2), each 16 full batches of 600 and a short one of 400: 34 global batches,
    the short ones last (g = 16·2 + p), so ranks 0 and 1 get 12 batches and rank 2 gets
    10; every row still comes exactly once."""
    ranks, batch, parts = 3, 600, 2
    full, short = divmod(GEN_ROWS // parts, batch)
    total = (full + 1) * parts
    short_batches = {full * parts + p for p in range(parts)}
    cfg = servekit.write_config(
        tmp_path / "nodrop.yaml", dataset=str(gen_dataset), batch_size=batch, seed=3,
        epochs=EPOCHS, ranks=ranks, drop_last=False, shuffle={"row_groups": True, "window": 2},
        outputs={"x": {"columns": "f00*", "transforms": [{"fill_null": 0}]}, "id": "id"},
    )  # fmt: skip
    job = "nodrop-" + uuid.uuid4().hex[:12]
    consumers = [group.consume(job, r, f"r{r}", "--keep", "ids", "--epochs", str(EPOCHS))
                 for r in range(ranks)]  # fmt: skip
    serve = group.serve(cfg, job, "--drain-timeout", "20s")
    results = servekit.wait_all(consumers, timeout=60)
    rc = serve.wait(timeout=30)
    servekit.assert_no_panic(serve.stderr)
    assert rc == 0, serve.describe()
    assert serve.summary()["dropped"] == 0
    steps = [len(range(r, total, ranks)) for r in range(ranks)]  # global batch g -> rank g % R
    for r, res in enumerate(results):
        assert res.end == "stream_end", (r, res.end)
        assert res.meta["epoch_counts"] == [steps[r]] * EPOCHS, (r, res.meta["epoch_counts"])
    for epoch in range(EPOCHS):
        ids = np.concatenate([res.epoch_rows(epoch) for res in results])
        assert np.array_equal(np.sort(ids), np.arange(GEN_ROWS)), f"epoch {epoch}"
        sizes = sorted(
            (r, b["step"], b["rows"])
            for r, res in enumerate(results)
            for b in res.batches
            if b["epoch"] == epoch and b["rows"] != batch
        )
        assert sizes == sorted((g % ranks, g // ranks, short) for g in short_batches), sizes
    shorts = [sum(g % ranks == r for g in short_batches) for r in range(ranks)]
    assert serve.results() == {
        r: (steps[r] * EPOCHS, EPOCHS * (steps[r] * batch - (batch - short) * shorts[r]))
        for r in range(ranks)
    }


def test_four_ranks_over_one_row_group_windows_never_hang(group, gen_dataset, tmp_path):
    """A step of 4 ranks × 500 rows spans two 1000-row windows (window: 1), more than the
    window cache holds besides its prefetches: serving must still go on, every rank to
    the end of every epoch, every row once per epoch."""
    ranks, batch, epochs = 4, 500, 4
    cfg = servekit.write_config(
        tmp_path / "small-windows.yaml", dataset=str(gen_dataset), batch_size=batch, seed=5,
        epochs=epochs, ranks=ranks, shuffle={"row_groups": True, "window": 1},
        outputs={"x": {"columns": "f00*", "transforms": [{"fill_null": 0}]}, "id": "id"},
    )  # fmt: skip
    job = "smallwin-" + uuid.uuid4().hex[:12]
    consumers = [group.consume(job, r, f"r{r}", "--keep", "ids", "--batch-timeout", "8")
                 for r in range(ranks)]  # fmt: skip
    serve = group.serve(cfg, job, "--drain-timeout", "20s")
    results = servekit.wait_all(consumers, timeout=90)
    ends = [res.end for res in results]
    assert ends == ["stream_end"] * ranks, (
        f"trainers waited for a batch in vain: {ends}; got "
        f"{[len(res.batches) for res in results]} batches of {GEN_ROWS // batch // ranks * epochs}"
    )
    rc = serve.wait(timeout=30)
    servekit.assert_no_panic(serve.stderr)
    assert rc == 0, serve.describe()
    for epoch in range(epochs):
        ids = np.concatenate([res.epoch_rows(epoch) for res in results])
        assert np.array_equal(np.sort(ids), np.arange(GEN_ROWS)), f"epoch {epoch}"
