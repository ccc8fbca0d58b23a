"""Positions at the edges of a run: a trainer that seeks after it has read the end of the
stream (a restart from a checkpoint near the end) is served from there, through the C
library, and start positions outside the run are refused at start-up."""

from __future__ import annotations

import uuid
from pathlib import Path

import servekit

import shmloader

OUTPUTS = {"id": "id", "x": {"columns": ["f000..f003"], "transforms": [{"fill_null": 0}]}}


def read_to_end(loader: shmloader.Loader) -> list[tuple[int, int, bytes]]:
    out = []
    for batch in loader:
        out.append((batch.epoch, batch.step, batch["id"].tobytes() + batch["x"].tobytes()))
    return out


def test_seek_after_the_end_of_the_stream_is_answered(group, gen_dataset: Path, tmp_path: Path, shm_dir: Path) -> None:
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


def test_start_positions_outside_the_run_are_refused(group, gen_dataset: Path, tmp_path: Path) -> None:
    cfg = servekit.write_config(tmp_path / "p.yaml", dataset=str(gen_dataset), batch_size=1000,
                                epochs=2, ranks=1, outputs=OUTPUTS)  # fmt: skip
    state = tmp_path / "state.json"
    state.write_text('{"epoch": 0, "step": 3}')
    for flags, words in [
        (["--start-epoch", "2"], "epochs 0..1"),
        (["--start-step", "20"], "steps 0..19"),
        (["--resume", str(state), "--start-epoch", "1"], "give one"),
    ]:
        serve = group.serve(cfg, "pos-" + uuid.uuid4().hex[:12], *flags)
        rc = serve.wait(timeout=20)
        servekit.assert_no_panic(serve.stderr)
        assert rc == 1 and words in serve.stderr, serve.describe()
