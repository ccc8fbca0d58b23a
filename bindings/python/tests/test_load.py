"""Load held, the short version of `make soak`'s 10 minutes: 16 rings with batches of 32
rows, endless epochs and the cache on, for 20 s (loadsoak.py). Every epoch all ranks
finished delivered every row once; RSS, open files and mappings of serve and of each
trainer stay flat after a 5 s warm-up; SIGTERM ends it cleanly."""

from __future__ import annotations

from pathlib import Path

import loadsoak


def test_sixteen_rings_under_load_stay_flat_and_lose_nothing(shmloader_bin: Path,
                                                             tmp_path: Path,
                                                             library: None) -> None:  # fmt: skip
    figs = loadsoak.run(shmloader_bin, tmp_path, seconds=20, sample_s=0.5, warmup_s=5)
    assert figs["epochs_checked"] >= 2 and figs["lost"] == 0 and figs["repeated"] == 0, figs
