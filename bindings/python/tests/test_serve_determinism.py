"""Determinism of `shmloader serve`: what a trainer receives is a pure function of (dataset,
config, seed, epoch, step, world layout).

Every batch is hashed (sha256 over every tensor's name, dtype, shape and bytes) and each
rank's stream, a list of (epoch, step, hash), is compared with a baseline run:
- across runs, worker counts, ring depths and prefetch settings: byte-identical;
- a consumer that seeks to (epoch, step) (first thing, or back after reading, or a dozen
  times at random on every rank at once), and one that resumes from a saved state_dict
  in a new process, see exactly the uninterrupted stream from there on;
- `serve --start-epoch/--start-step` and `serve --resume state.json` likewise;
- another --seed gives another order of the same rows.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import servekit

RANKS = 4
EPOCHS = 2
BATCH = 500  # 20000 rows: 40 global batches, 10 steps per rank and epoch, nothing dropped
STEPS = 10
SEEK = (0, 7)  # rank 0's consumer seeks here before reading anything
REWIND_AFTER, REWIND = 15, (0, 4)  # rank 1's consumer reads 15 batches, then seeks back
SAVE_AFTER = 13  # rank 2's first consumer saves its state after this many batches: (1, 3)


@pytest.fixture(scope="module")
def env(shmloader_bin: Path, gen_dataset: Path, tmp_path_factory, library):
    tmp = tmp_path_factory.mktemp("determinism")
    cfg = servekit.write_config(
        tmp / "det.yaml", dataset=str(gen_dataset), batch_size=BATCH, seed=5, epochs=EPOCHS,
        ranks=RANKS, shuffle={"row_groups": True, "window": 3},
        outputs={
            "x": {"columns": ["f000..f007"], "transforms": [{"fill_null": 0}]},
            "cats": {"columns": "c0*", "transforms": [{"hash_bucket": 1000}]},
            "strs": {"columns": "s0*", "transforms": [{"fill_null": ""}, {"hash_bucket": 99}]},
            "seq": {"columns": "seq", "transforms": [{"pad": 6}]},
            "label": "label",
            "id": "id",
        },
    )  # fmt: skip
    shm_dir = Path(tempfile.mkdtemp(prefix="shmloader-test-", dir="/dev/shm"))
    with servekit.Group(shmloader_bin, shm_dir, tmp) as g:
        yield {"cfg": cfg, "g": g, "tmp": tmp}
    shutil.rmtree(shm_dir, ignore_errors=True)


def new_job() -> str:
    return "det-" + uuid.uuid4().hex[:12]


def serve_and_read(env: dict[str, Any], *flags: str, name: str,
                   consumer_args: dict[int, list[str]] | None = None,
                   ends: tuple[str, ...] = ("stream_end",),
                   ) -> tuple[servekit.Serve, list[servekit.Result]]:  # fmt: skip
    g: servekit.Group = env["g"]
    job = new_job()
    consumer_args = consumer_args or {}
    consumers = [g.consume(job, r, f"{name}-r{r}", "--keep", "ids", *consumer_args.get(r, []))
                 for r in range(RANKS)]  # fmt: skip
    serve = g.serve(env["cfg"], job, "--drain-timeout", "20s", *flags)
    results = servekit.wait_all(consumers, timeout=60)
    for r, res in enumerate(results):
        assert res.end in ends, (
            f"{name}: rank {r} ended with {res.end!r} {res.meta.get('message', '')} after "
            f"{len(res.batches)} batches; the others: {[x.end for x in results]}"
        )
    rc = serve.wait(timeout=30)
    servekit.assert_no_panic(serve.stderr)
    assert rc == 0, serve.describe()
    return serve, results


def after(stream: list[tuple[int, int, str]], epoch: int, step: int) -> list[tuple[int, int, str]]:
    i = [(e, s) for e, s, _ in stream].index((epoch, step))
    return stream[i:]


@pytest.fixture(scope="module")
def baseline(env) -> list[list[tuple[int, int, str]]]:
    serve, results = serve_and_read(env, "--workers", "1", name="baseline")
    assert serve.summary()["dropped"] == 0 and serve.summary()["steps"] == STEPS
    streams = [res.stream() for res in results]
    for s in streams:
        want = [(e, st) for e in range(EPOCHS) for st in range(STEPS)]
        assert [(e, st) for e, st, _ in s] == want
    hashes = [h for s in streams for _, _, h in s]
    assert len(set(hashes)) == len(hashes), "two batches hash alike: the hash sees too little"
    env["config_hash"] = results[0].meta["info"]["config_hash"]
    env["ids"] = [res.tensors["id"] for res in results]
    return streams


@pytest.mark.parametrize(
    "flags",
    [["--workers", "2"], ["--workers", "2"], ["--workers", "3", "--depth", "2", "--prefetch", "0"]],
    ids=["workers2-run1", "workers2-run2", "workers3-depth2-prefetch0"],
)
def test_streams_are_byte_identical_across_runs_and_worker_counts(env, baseline, flags):
    _, results = serve_and_read(env, *flags, name="again")
    for r, res in enumerate(results):
        got = res.stream()
        diff = [i for i, (a, b) in enumerate(zip(got, baseline[r], strict=False)) if a != b]
        assert len(got) == len(baseline[r]) and not diff, (
            f"rank {r} with {flags}: {len(diff)} batches differ from --workers 1, first "
            f"(epoch, step) {got[diff[0]][:2] if diff else None}"
        )


@pytest.fixture(scope="module")
def resumed(env, baseline) -> dict[str, Any]:
    """One serve run: rank 0's consumer seeks to SEEK first thing; rank 1's reads
    REWIND_AFTER batches and seeks back to REWIND; rank 2's first consumer reads SAVE_AFTER
    batches and saves its state_dict, a second one (a new process) loads it and reads on;
    rank 3's reads everything."""
    g: servekit.Group = env["g"]
    state = env["tmp"] / "state.json"
    job = new_job()
    seeker = g.consume(job, 0, "seeker", "--keep", "none", "--seek", *map(str, SEEK))
    rewinder = g.consume(job, 1, "rewinder", "--keep", "none", "--seek-after", str(REWIND_AFTER),
                         "--seek", *map(str, REWIND))  # fmt: skip
    first = g.consume(job, 2, "first", "--keep", "none", "--max-batches", str(SAVE_AFTER),
                      "--save-state", str(state))  # fmt: skip
    plain = g.consume(job, 3, "plain", "--keep", "none")
    serve = g.serve(env["cfg"], job, "--drain-timeout", "20s", "--workers", "2")
    first_res = first.result(timeout=30)
    second = g.consume(job, 2, "second", "--keep", "none", "--load-state", str(state))
    seeker_res, rewinder_res, second_res, plain_res = servekit.wait_all(
        [seeker, rewinder, second, plain], timeout=60
    )
    rc = serve.wait(timeout=30)
    servekit.assert_no_panic(serve.stderr)
    assert rc == 0, serve.describe()
    return {"seeker": seeker_res, "rewinder": rewinder_res, "first": first_res,
            "second": second_res, "plain": plain_res, "state": state}  # fmt: skip


def test_seek_gives_the_uninterrupted_stream_from_there(resumed, baseline):
    res = resumed["seeker"]
    assert res.end == "stream_end", res.end
    assert res.stream() == after(baseline[0], *SEEK)
    assert resumed["plain"].stream() == baseline[3]


def test_seek_back_after_reading_replays_the_same_bytes(resumed, baseline):
    res = resumed["rewinder"]
    assert res.end == "stream_end", res.end
    assert res.stream() == baseline[1][:REWIND_AFTER] + after(baseline[1], *REWIND)


def test_load_state_dict_in_a_new_process_continues_the_same_bytes(resumed, baseline):
    first, second = resumed["first"], resumed["second"]
    assert first.end == "max"
    assert first.stream() == baseline[2][:SAVE_AFTER]
    state = json.loads(resumed["state"].read_text())
    assert (state["epoch"], state["step"], state["rank"]) == (1, SAVE_AFTER - STEPS, 2), state
    assert second.end == "stream_end", second.end
    assert second.stream() == baseline[2][SAVE_AFTER:]


def test_random_seeks_on_every_rank_give_the_planned_batches(env, baseline):
    """Seeks forwards, backwards and across epochs on all 4 ranks at once, each followed by
    a few batches: each one is exactly the batch the uninterrupted stream has there, and
    none keeps a trainer waiting."""
    rng = np.random.default_rng(1)
    total = EPOCHS * STEPS
    depth = 2
    scripts = {}
    for r in range(RANKS):
        # A rank whose end-of-stream marker is published has finished its stream, and a
        # later seek gets SeekUnanswered (README): until the final target, stay more than
        # a ring (depth 2) away from the end.
        targets = []
        for _ in range(12):
            i = int(rng.integers(total - depth - 3))
            n = min(int(rng.integers(1, 4)), total - depth - 2 - i)
            targets.append([i // STEPS, i % STEPS, n])
        targets += [[0, 0, 2], [0, STEPS - 1, 2], [EPOCHS - 1, STEPS - 2, 2]]
        scripts[r] = targets
    _, results = serve_and_read(
        env, "--depth", str(depth), name="seeks", ends=("script",),
        consumer_args={r: ["--seek-script", json.dumps(scripts[r]), "--batch-timeout", "8"]
                       for r in range(RANKS)},
    )  # fmt: skip
    for r, res in enumerate(results):
        want = [b for e, s, n in scripts[r] for b in after(baseline[r], e, s)[:n]]
        assert res.stream() == want, f"rank {r}"


def test_serve_start_epoch_and_step(env, baseline):
    _, results = serve_and_read(env, "--start-epoch", "0", "--start-step", "6", name="start")
    for r, res in enumerate(results):
        assert res.stream() == after(baseline[r], 0, 6), r
    _, results = serve_and_read(env, "--start-epoch", "1", "--start-step", "0", name="start1")
    for r, res in enumerate(results):
        assert res.stream() == after(baseline[r], 1, 0), r


def test_serve_resume_from_a_saved_state_dict(env, baseline, resumed):
    state = json.loads(resumed["state"].read_text())
    serve, results = serve_and_read(env, "--resume", str(resumed["state"]), name="resume")
    for r, res in enumerate(results):
        assert res.stream() == after(baseline[r], state["epoch"], state["step"]), r


def test_serve_resume_refuses_a_state_of_another_config(env, baseline, tmp_path):
    g: servekit.Group = env["g"]
    bad = tmp_path / "other.json"
    bad.write_text(json.dumps({"job": "x", "rank": 0, "epoch": 0, "step": 3, "plan_version": 2,
                               "config_hash": env["config_hash"] ^ 1}))  # fmt: skip
    serve = g.serve(env["cfg"], new_job(), "--resume", str(bad))
    rc = serve.wait(timeout=20)
    servekit.assert_no_panic(serve.stderr)
    assert rc != 0, f"--resume with another config's hash was accepted\n{serve.describe()}"
    assert "config" in serve.stderr.lower(), serve.stderr


def test_serve_resume_refuses_a_state_of_another_plan_version(env, baseline, tmp_path):
    """A state saved before plan v2 (no plan_version: a step named other rows then) is
    refused with a message that says why, never misread."""
    g: servekit.Group = env["g"]
    old = tmp_path / "v1.json"
    old.write_text(json.dumps({"job": "x", "rank": 0, "epoch": 0, "step": 3,
                               "config_hash": env["config_hash"]}))  # fmt: skip
    serve = g.serve(env["cfg"], new_job(), "--resume", str(old))
    rc = serve.wait(timeout=20)
    servekit.assert_no_panic(serve.stderr)
    assert rc != 0, f"--resume with a plan v1 state was accepted\n{serve.describe()}"
    assert "no plan_version" in serve.stderr and "plan version 2" in serve.stderr, serve.stderr


def test_another_seed_gives_another_order_of_the_same_rows(env, baseline):
    _, results = serve_and_read(env, "--seed", "6", name="seed6")
    for r, res in enumerate(results):
        got = [h for _, _, h in res.stream()]
        want = [h for _, _, h in baseline[r]]
        assert len(set(got) & set(want)) == 0, f"rank {r}: seeds 5 and 6 share batches"
    per_epoch = STEPS * BATCH
    for epoch in range(EPOCHS):
        ids6 = np.concatenate([res.tensors["id"][epoch * per_epoch:(epoch + 1) * per_epoch]
                               for res in results])  # fmt: skip
        ids5 = np.concatenate([ids[epoch * per_epoch:(epoch + 1) * per_epoch]
                               for ids in env["ids"]])  # fmt: skip
        assert np.array_equal(np.sort(ids6), np.arange(servekit.GEN_ROWS)), epoch
        assert np.array_equal(np.sort(ids5), np.arange(servekit.GEN_ROWS)), epoch
        assert not np.array_equal(ids5, ids6)
