"""A trainer's saved state resumes under another world size (producer/plan/doc.go,
"elastic determinism"), through the Python binding and through `serve --resume`.

One epoch of 50 global batches (20000 rows, batches of 400, drop_last). A reference run
with 2 ranks records every global batch's bytes. Then a job with 2 trainers stops after 5
steps (the world consumed global batches [0, 10)) and saves its state; a job with 3
trainers loads it (10 is no multiple of 3, so its epoch starts at global batch 10) and
stops after 4 steps ([10, 22)); a job with 2 trainers loads that state (22 is a multiple
of 2: step 11 of a plain epoch) and reads to the end. Together the three jobs must
deliver global batches 0..48 exactly once each, byte for byte as the reference, with the
last batch dropped where 3 trainers could not share it evenly: (50 - 10) // 3 = 13 steps
from batch 10 serve [10, 49).
"""

from __future__ import annotations

import json
import signal
import uuid
from collections import Counter
from pathlib import Path

import servekit

BATCH = 400
GLOBAL = servekit.GEN_ROWS // BATCH  # 50


def config(tmp_path: Path, dataset: Path) -> Path:
    return servekit.write_config(
        tmp_path / "elastic.yaml", dataset=str(dataset), batch_size=BATCH, seed=5, epochs=1,
        drop_last=True, partitions=2, shuffle={"row_groups": True, "window": 2},
        outputs={"x": {"columns": ["f000..f003"], "transforms": [{"fill_null": 0}]}, "id": "id"},
    )  # fmt: skip


def run_job(
    group: servekit.Group,
    cfg: Path,
    ranks: int,
    *consume: str,
    resume: Path | None = None,
    save: Path | None = None,
) -> list[servekit.Result]:
    """Serves cfg to `ranks` trainers started with `consume` flags; rank 0 also saves its
    state to `save`. Stops serve once every trainer is done."""
    job = "el-" + uuid.uuid4().hex[:10]
    flags = ["--ranks", str(ranks)] + (["--resume", str(resume)] if resume else [])
    serve = group.serve(cfg, job, *flags)
    trainers = []
    for r in range(ranks):
        extra = ["--save-state", str(save)] if save and r == 0 else []
        trainers.append(group.consume(job, r, f"{job}-r{r}", *consume, *extra))
    results = servekit.wait_all(trainers, timeout=60)
    if serve.running():
        serve.signal(signal.SIGTERM)
    serve.wait(timeout=30)
    servekit.assert_no_panic(serve.stderr)
    return results


def globals_of(results: list[servekit.Result], base: int, step0: int) -> dict[int, str]:
    """Global batch -> sha of what a one-node job delivered, in an epoch that started at
    global batch `base`, its trainers beginning at step `step0`. One node serves every
    global batch from base on, in order, its j-th to rank j mod R as step j div R
    (plan/doc.go): rank r of R receives global batch base + s·R + r at step s."""
    ranks = len(results)
    out: dict[int, str] = {}
    for r, res in enumerate(results):
        for b in res.batches:
            assert b["step"] >= step0 and b["base"] == base, b
            g = base + b["step"] * ranks + r
            assert g not in out, f"global batch {g} delivered twice"
            out[g] = b["sha"]
    return out


def test_a_state_resumes_under_another_world_size(
    group: servekit.Group, gen_dataset: Path, tmp_path: Path
) -> None:
    cfg = config(tmp_path, gen_dataset)
    ref_results = run_job(group, cfg, 2)
    for res in ref_results:
        assert res.end == "stream_end", res.end
    ref = globals_of(ref_results, 0, 0)
    assert sorted(ref) == list(range(GLOBAL))
    shas = Counter(ref.values())
    assert max(shas.values()) == 1, "two global batches with the same bytes: untellable apart"
    by_sha = {sha: g for g, sha in ref.items()}

    # 2 trainers, 5 steps: [0, 10).
    s1 = tmp_path / "state1.json"
    first = run_job(group, cfg, 2, "--max-batches", "5", save=s1)
    state1 = json.loads(s1.read_text())
    where1 = (state1["epoch"], state1["step"], state1["world"], state1["base"])
    assert where1 == (0, 5, 2, 0), state1
    got1 = {by_sha[b["sha"]] for res in first for b in res.batches}
    assert got1 == set(range(10)), sorted(got1)

    # 3 trainers from that state, 4 steps: their epoch starts at global batch 10.
    s2 = tmp_path / "state2.json"
    second = run_job(group, cfg, 3, "--load-state", str(s1), "--max-batches", "4", save=s2)
    state2 = json.loads(s2.read_text())
    where2 = (state2["epoch"], state2["step"], state2["world"], state2["base"])
    assert where2 == (0, 4, 3, 10), state2
    got2 = [by_sha.get(b["sha"], -1) for res in second for b in res.batches]
    assert sorted(got2) == list(range(10, 22)), sorted(got2)
    assert globals_of(second, 10, 0) == {g: ref[g] for g in range(10, 22)}

    # 2 trainers from the second state, to the end of the epoch: step 11 of a plain epoch.
    third = run_job(group, cfg, 2, "--load-state", str(s2))
    for res in third:
        assert res.end == "stream_end", res.end
    assert globals_of(third, 0, 11) == {g: ref[g] for g in range(22, GLOBAL)}

    # Every global batch once over the three jobs.
    seen = Counter(
        by_sha[b["sha"]] for job in (first, second, third) for res in job for b in res.batches
    )
    assert sorted(seen) == list(range(GLOBAL)) and max(seen.values()) == 1, seen

    # 3 trainers from the first state to the end: [10, 49), batch 49 dropped (13 steps).
    rest = run_job(group, cfg, 3, "--load-state", str(s1))
    assert globals_of(rest, 10, 0) == {g: ref[g] for g in range(10, 49)}

    # The same through `serve --resume` with the saved JSON, trainers loading nothing.
    resumed = run_job(group, cfg, 3, resume=s1)
    assert globals_of(resumed, 10, 0) == {g: ref[g] for g in range(10, 49)}


def test_a_state_of_the_uneven_tail_resumes_only_under_its_world(
    group: servekit.Group, gen_dataset: Path, tmp_path: Path
) -> None:
    """drop_last: false serves the last uneven global batches to some ranks only; a
    position among them names no global batch another world can start from."""
    cfg = servekit.write_config(
        tmp_path / "tail.yaml", dataset=str(gen_dataset), batch_size=BATCH, seed=5, epochs=1,
        drop_last=False, partitions=2, outputs={"id": "id"},
    )  # fmt: skip
    state = tmp_path / "tail.json"
    state.write_text(json.dumps({"epoch": 0, "step": 17, "world": 3, "base": 0}))  # batch 51 > 50
    res = run_job(group, cfg, 2, "--load-state", str(state))
    for r in res:
        assert r.end.startswith("error:InvalidArgument") and "uneven" in r.end, r.end
