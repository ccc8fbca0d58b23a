"""Memory bound, the short version of `make soak`'s (membound.py): one epoch of the demo's
config over 100,000 rows and over 1,000,000, in files of the demo's size but row groups of
2,048 rows (so that serve's windows fill early in the run).
Serve's peak RSS stays within the bound of its start-up `memory:` line plus the
runtime's share, the same bound for both; its RSS is flat through the larger run; a
trainer's peak is the same for both."""

from __future__ import annotations

from pathlib import Path

import membound


def test_peak_rss_stays_within_the_bound_and_does_not_grow_with_the_dataset(
    shmloader_bin: Path, tmp_path: Path, library: None
) -> None:
    figs = membound.run(
        shmloader_bin, tmp_path, [1, 10], rows=100_000, row_group_rows=2048, sample_s=0.05
    )
    small, large = figs["scales"]["1"], figs["scales"]["10"]
    assert (small["rows"], large["rows"]) == (100_000, 1_000_000), figs
    assert large["peaks"]["serve"]["hwm"] <= large["bound"], figs
