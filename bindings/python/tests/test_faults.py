"""Fault injection: 100 iterations of faultkit.py, each a real run of serve, three
checkpointing trainers and the cache, with one fault at a random moment (kill -9 of serve,
of serve while it writes a cache entry, of a trainer; a trainer nobody restarts; SIGSTOP
of either side, shorter and longer than the batch timeout). After each, faultkit checks
that every wait ended within its documented bound, that nothing was left behind after the
documented clean-up, that every rank's finished batches equal an undisturbed run's byte
for byte, and that the cache holds nothing torn. `make soak` runs 1,000.

The iterations run in ten tests of ten (each well inside the suite's 60 s hang report);
the last test checks the hundred together. SHMLOADER_FAULT_SEED picks another sequence of
faults (the default is fixed, so a failure repeats with the command it prints)."""

from __future__ import annotations

import os
from pathlib import Path

import faultkit
import pytest

BLOCKS, PER_BLOCK = 10, 10
SEED = int(os.environ.get("SHMLOADER_FAULT_SEED", "1"))
FIGS: dict[int, faultkit.Figures] = {}


@pytest.fixture(scope="module")
def driver(shmloader_bin: Path, tmp_path_factory: pytest.TempPathFactory,
           library: None) -> faultkit.Driver:  # fmt: skip
    return faultkit.Driver(shmloader_bin, tmp_path_factory.mktemp("faults"), SEED)


@pytest.mark.parametrize("block", range(BLOCKS))
def test_faults_lose_nothing_and_leave_nothing(driver: faultkit.Driver, block: int) -> None:
    for i in range(block * PER_BLOCK, (block + 1) * PER_BLOCK):
        try:
            FIGS[i] = driver.checked(i)
        except faultkit.Failure as exc:
            pytest.fail(str(exc), pytrace=False)


def test_the_hundred_faults_covered_every_kind(driver: faultkit.Driver) -> None:
    assert len(FIGS) == BLOCKS * PER_BLOCK, "run the whole module: the blocks fill FIGS"
    s = faultkit.summarize(list(FIGS.values()))
    assert set(s["faults"]) == set(faultkit.KINDS), s["faults"]
    assert s["batches_checked"] == len(FIGS) * sum(len(w) for w in driver.want)
    assert s["caught_mid_write"] > 0, "no kill landed while a cache entry was being written"
    assert s["detect_s"] and s["timeout_s"] and s["abandon_s"], s
    assert s["restarts"]["serve"] > 0 and s["restarts"]["trainer"] > 0, s
