"""Positions at the edges of a run: a trainer that seeks after it has read the end of the
stream (a restart from a checkpoint near the end) is served from there, through the C
library, and start positions outside the run are refused at start-up."""

from __future__ import annotations

import re
import subprocess
import time
import uuid
from pathlib import Path

import pytest
import servekit

import shmloader

OUTPUTS = {"id": "id", "x": {"columns": ["f000..f003"], "transforms": [{"fill_null": 0}]}}


def read_to_end(loader: shmloader.Loader) -> list[tuple[int, int, bytes]]:
    out = []
    for batch in loader:
        out.append((batch.epoch, batch.step, batch["id"].tobytes() + batch["x"].tobytes()))
    return out


def test_seek_after_the_end_of_the_stream_is_answered(
    group, gen_dataset: Path, tmp_path: Path, shm_dir: Path
) -> None:
    cfg = servekit.write_config(tmp_path / "p.yaml", dataset=str(gen_dataset), batch_size=1000,
                                epochs=2, ranks=1, outputs=OUTPUTS)  # fmt: skip
    job = "pos-" + uuid.uuid4().hex[:12]
    serve = group.serve(cfg, job, "--drain-timeout", "20s")
    with shmloader.attach(job=job, rank=0, dir=shm_dir, timeout=20, batch_timeout=20) as loader:
        full = read_to_end(loader)
        assert loader.ended and len(full) == 2 * 20
        loader.seek(1, 5)  # after END_OF_STREAM: serve still answers
        again = read_to_end(loader)
    assert again == full[20 + 5 :], "the stream after a seek past the end differs"
    assert serve.wait(timeout=20) == 0, serve.describe()
    assert servekit.segments(shm_dir) == []


def test_start_positions_outside_the_run_are_refused(
    group, gen_dataset: Path, tmp_path: Path
) -> None:
    cfg = servekit.write_config(tmp_path / "p.yaml", dataset=str(gen_dataset), batch_size=1000,
                                epochs=2, ranks=1, outputs=OUTPUTS)  # fmt: skip
    state = tmp_path / "state.json"
    state.write_text('{"epoch": 0, "step": 3}')
    for flags, words in [
        (["--start-epoch", "2"], "epochs 0..1"),
        (["--start-step", "21"], "steps 0..19 per rank (20: at its end)"),
        (["--resume", str(state), "--start-epoch", "1"], "give one"),
    ]:
        serve = group.serve(cfg, "pos-" + uuid.uuid4().hex[:12], *flags)
        rc = serve.wait(timeout=20)
        servekit.assert_no_panic(serve.stderr)
        assert rc == 1 and words in serve.stderr, serve.describe()


def test_steps_per_epoch_len_and_range(group, gen_dataset: Path, tmp_path: Path, shm_dir: Path,
                                       shmloader_bin: Path) -> None:  # fmt: skip
    """The ring names the run: len(loader) is the epoch's batches, a seek or a saved state
    beyond the run is refused with the valid range, and the epoch iterator's len counts
    what is left (a progress bar's total). It names serve's plan version too, which a
    saved state carries and a state of another version is refused by."""
    cfg = servekit.write_config(tmp_path / "p.yaml", dataset=str(gen_dataset), batch_size=1000,
                                epochs=2, ranks=2, outputs=OUTPUTS)  # fmt: skip
    job = "len-" + uuid.uuid4().hex[:12]
    serve = group.serve(cfg, job, "--drain-timeout", "20s")
    loaders = [
        shmloader.attach(job=job, rank=r, dir=shm_dir, timeout=20, batch_timeout=20)
        for r in range(2)
    ]
    try:
        summary = serve.summary()
        a, b = loaders
        assert len(a) == len(b) == summary["steps"] == 10
        assert (a.info.steps_per_epoch, a.info.epochs, a.info.global_batches) == (10, 2, 20)
        with pytest.raises(shmloader.OutOfRange, match=r"epochs 0\.\.1"):
            a.seek(2, 0)
        with pytest.raises(
            shmloader.OutOfRange, match=r"steps 0\.\.9 per epoch \(step 10 is the epoch's end\)"
        ):
            a.seek(0, 11)
        with pytest.raises(shmloader.OutOfRange, match="past the run"):
            a.load_state_dict({"epoch": 5, "step": 0, "world": 2, "base": 0,
                               "config_hash": a.info.config_hash, "plan_version": 2})  # fmt: skip
        assert isinstance(shmloader.OutOfRange("x"), (ValueError, IndexError))
        for loader in loaders:
            it = loader.epoch()
            assert len(it) == 10  # position unknown yet: the whole epoch
            first = next(it)
            assert (first.epoch, first.step) == (0, 0)
            it.close()
            rest = loader.epoch()
            assert len(rest) == 9
            next(rest)
            assert len(rest) == 8  # what is left
            assert sum(1 for _ in rest) == 8 and len(rest) == 0
        a.seek(1, 10)  # the end of the last epoch is a position: nothing left in it
        assert list(a.epoch()) == [] and a.next() is None and a.ended
        assert [(x.epoch, x.step) for x in b] == [(1, s) for s in range(10)]
        version = subprocess.run(
            [shmloader_bin, "version"], capture_output=True, text=True, check=True
        )
        plan = int(re.search(r"\bplan (\d+)", version.stdout).group(1))  # type: ignore[union-attr]
        assert a.info.plan_version == a.state_dict()["plan_version"] == plan
        with pytest.raises(
            shmloader.InvalidArgument,
            match=f"saved with plan version {plan + 1}; this shmloader serves plan version {plan},",
        ):
            a.load_state_dict(
                {"epoch": 0, "step": 0, "config_hash": a.info.config_hash, "plan_version": plan + 1}
            )
    finally:
        for loader in loaders:
            loader.close()
    assert serve.wait(timeout=20) == 0, serve.describe()


def test_stats_measure_the_data_stall(
    group, gen_dataset: Path, tmp_path: Path, shm_dir: Path
) -> None:
    """loader.stats(): a trainer slower than the producer barely waits; the waits it has
    are measured in the C library (and shown in the ring header to observers)."""
    cfg = servekit.write_config(tmp_path / "p.yaml", dataset=str(gen_dataset), batch_size=500,
                                epochs=1, ranks=1, outputs=OUTPUTS)  # fmt: skip
    job = "stall-" + uuid.uuid4().hex[:12]
    serve = group.serve(cfg, job, "--drain-timeout", "20s")
    with shmloader.attach(job=job, rank=0, dir=shm_dir, timeout=20, batch_timeout=20) as loader:
        first = loader.next()
        assert first is not None
        first.release()
        loader.stats(reset=True)  # start-up (reading the dataset, first decode) not counted
        rows = 0
        t0 = time.monotonic()
        for batch in loader.epoch():
            rows += batch.rows
            time.sleep(0.02)  # a 20 ms training step
        elapsed = time.monotonic() - t0
        st = loader.stats()
        assert loader.next() is None and loader.ended
        del first
    assert st.batches == 39 and st.rows == rows == 19_500
    assert 0.0 <= st.wait_s < 0.5 * elapsed and st.stall < 0.5, st
    assert abs(st.elapsed_s - elapsed) < 0.5
    assert st.rows_per_s > 0
    assert serve.wait(timeout=20) == 0, serve.describe()
