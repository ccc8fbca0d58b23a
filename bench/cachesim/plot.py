"""Plots the hit rates in a JSON written by bench/cachesim (``go run ./bench/cachesim
-json FILE``): Belady's rule and LRU against the cache's size as a share of the node's
bytes, with the best possible hit rate (every row group's first read misses). Any list
of capacities works; ``-capacities 5,10,...,100`` gives a smooth curve.

    .venv-bench/bin/python bench/cachesim/plot.py [--results FILE] [--out PNG]
"""

from __future__ import annotations

import argparse
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", default=os.path.join(REPO, "bench", "results", "cachesim.json"))
    ap.add_argument("--out", default=os.path.join(REPO, "bench", "plots", "cachesim.png"))
    args = ap.parse_args()
    with open(args.results) as f:
        rep = json.load(f)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    res = sorted(rep["results"], key=lambda r: r["capacity_pct"])
    pct = [r["capacity_pct"] for r in res]
    c = rep["config"]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.plot(pct, [r["belady"]["hit_rate"] for r in res], "o-", label="Belady (the plan's future)")
    ax.plot(pct, [r["lru"]["hit_rate"] for r in res], "s-", label="LRU")
    ax.axhline(rep["ceiling"], color="gray", ls="--", lw=1, label=f"ceiling ({c['epochs']} epochs)")
    ax.set_xlabel("cache size, % of the node's bytes")
    ax.set_ylabel("hit rate (row-group reads)")
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 1)
    ax.set_title(f"node {c['node']} of {c['nodes']}: {rep['node_row_groups']} row groups, "
                 f"{c['partitions']} partitions, window {c['window']}", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    fig.savefig(args.out, dpi=110)
    plt.close(fig)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
