"""Multi-node `shmloader serve`: node 0 and node 1 of 2 (two serve processes with
--node-rank/--node-count, 2 ranks each) together deliver exactly what one node with 4 ranks
delivers, global batch by global batch, byte for byte.

On one machine the two "nodes" need different job names: the job names the shared-memory
segments (shmloader-<uid>-<job>-r<rank>), so two producers of one job would collide.

Mapping (producer/plan/doc.go, plan v2): global batch g is batch g div P of partition
g mod P, and node k of n holds the partitions p ≡ k (mod n); its j-th batch goes to local
rank j mod R as step ⌊j/R⌋, so rank r of node k receives g = (s·R + r)·n + k at step s.
One node with R' ranks sends global batch g to rank g mod R', step ⌊g/R'⌋.
"""

from __future__ import annotations

import uuid
from collections import Counter
from pathlib import Path

import numpy as np
import servekit

NODES = 2
RANKS_PER_NODE = 2
WORLD = NODES * RANKS_PER_NODE
EPOCHS = 2
# 20000 rows in 20 row groups: 2 partitions of 10000 rows, 25 batches each: 50 global
# batches, 48 (a multiple of the world size) served.
BATCH = 400


def test_two_nodes_deliver_exactly_the_batches_of_one_node_with_all_ranks(
    group: servekit.Group, gen_dataset: Path, tmp_path: Path
):
    cfg = servekit.write_config(
        tmp_path / "mn.yaml", dataset=str(gen_dataset), batch_size=BATCH, seed=21,
        epochs=EPOCHS, shuffle={"row_groups": True, "window": 2},
        outputs={
            "x": {"columns": ["f000..f003"], "transforms": [{"fill_null": 0}]},
            "h": {"columns": "c00", "transforms": [{"hash_bucket": 50}]},
            "id": "id",
        },
    )  # fmt: skip

    def run(ranks: int, *flags: str) -> tuple[servekit.Serve, list[servekit.Result]]:
        job = "mn-" + uuid.uuid4().hex[:12]
        consumers = [group.consume(job, r, f"{job}-r{r}", "--keep", "ids") for r in range(ranks)]
        serve = group.serve(cfg, job, "--ranks", str(ranks), "--drain-timeout", "20s", *flags)
        return serve, consumers  # type: ignore[return-value]

    def finish(serve, consumers) -> list[servekit.Result]:
        results = servekit.wait_all(consumers, timeout=60)
        rc = serve.wait(timeout=30)
        servekit.assert_no_panic(serve.stderr)
        assert rc == 0, serve.describe()
        for res in results:
            assert res.end == "stream_end", res.end
        return results

    single = finish(*run(WORLD))
    started = [run(RANKS_PER_NODE, "--node-rank", str(k), "--node-count", str(NODES))
               for k in range(NODES)]  # fmt: skip
    nodes = [finish(*s) for s in started]

    g_total = (servekit.GEN_ROWS // BATCH) // WORLD * WORLD
    summaries = [s.summary() for s, _ in started]
    for summ in summaries:
        assert summ["global"] == g_total, summ
        assert (summ["partitions"], summ["node_rows"]) == (2, servekit.GEN_ROWS // 2), summ
        assert summ["steps"] == g_total // WORLD, summ
        assert summ["dropped"] == servekit.GEN_ROWS - g_total * BATCH, summ

    # (epoch, global batch) -> (hash, ids), from each side.
    def by_global(results: list[servekit.Result], node: int, nodes: int, into: dict) -> None:
        ranks = len(results)
        for r, res in enumerate(results):
            offsets = np.cumsum([0] + [b["rows"] for b in res.batches])
            for i, b in enumerate(res.batches):
                g = (b["step"] * ranks + r) * nodes + node
                key = (b["epoch"], g)
                assert key not in into, f"global batch {key} delivered twice"
                into[key] = (b["sha"], res.tensors["id"][offsets[i] : offsets[i + 1]])

    want: dict = {}
    by_global(single, 0, 1, want)
    got: dict = {}
    for k, results in enumerate(nodes):
        by_global(results, k, NODES, got)
    keys = [(e, g) for e in range(EPOCHS) for g in range(g_total)]
    assert sorted(want) == keys
    assert sorted(got) == keys, "the nodes together missed or added global batches"
    differ = [k for k in keys if got[k][0] != want[k][0]]
    assert not differ, f"{len(differ)} global batches differ from the single-node run: {differ[:5]}"

    for e in range(EPOCHS):
        ids = np.concatenate([got[(e, g)][1] for g in range(g_total)])
        counts = Counter(ids.tolist())
        assert len(ids) == g_total * BATCH and max(counts.values()) == 1, f"epoch {e}"
        assert set(counts) <= set(range(servekit.GEN_ROWS))
