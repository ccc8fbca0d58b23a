"""One Go producer, consumers in C and Python: every rank receives exactly the bytes the
producer published for it, in order (CRC32 over all payload bytes in delivery order)."""

from __future__ import annotations

import pytest
from conftest import results

RANKS = 2
BATCHES = 12  # per epoch per rank
EPOCHS = 2
ROWS = 8
ROW_BYTES = 256


def start_producer(produce):
    return produce(
        ranks=RANKS, depth=4, rows=ROWS, row_bytes=ROW_BYTES, batches=BATCHES, epochs=EPOCHS
    )


def expected_line(rank: int, line: str) -> None:
    n = BATCHES * EPOCHS
    assert line.startswith(f"rank={rank} batches={n} rows={n * ROWS} ")


@pytest.mark.parametrize("c_rank,py_rank", [(0, 1), (1, 0)], ids=["c0-py1", "c1-py0"])
def test_c_and_python_consumers_get_the_producers_bytes(
    produce, spawn, job, shm_dir, c_consume, c_rank, py_rank
):
    producer = start_producer(produce)
    c = spawn.start(
        "shml-consume",
        [str(c_consume), "--job", job, "--rank", str(c_rank), "--dir", str(shm_dir),
         "--timeout-ms", "10000"],
    )  # fmt: skip
    py = spawn.python("pyconsume", "--job", job, "--rank", str(py_rank), "--batches", str(BATCHES))

    c_rc, c_out = c.finish(timeout=30)
    py_rc, py_out = py.finish(timeout=30)
    prod_rc, prod_out = producer.finish(timeout=30)

    assert c_rc == 0, f"shml-consume exited {c_rc}: {c_out}\n{c.stderr()}"
    assert py_rc == 0, f"pyconsume exited {py_rc}: {py_out}\n{py.stderr()}"
    assert prod_rc == 0, f"producer exited {prod_rc}: {prod_out}\n{producer.stderr()}"
    published = results(prod_out)
    assert sorted(published) == [0, 1], prod_out
    for rank in (0, 1):
        expected_line(rank, published[rank])
    assert results(c_out) == {c_rank: published[c_rank]}
    assert results(py_out) == {py_rank: published[py_rank]}


def test_python_reads_both_ranks_in_turn(produce, spawn, job):
    """One process attaches to rank 0, reads it to the end and detaches, then rank 1: the
    producer keeps rank 1 waiting meanwhile without losing or reordering anything."""
    producer = start_producer(produce)
    py = spawn.python(
        "pyconsume", "--job", job, "--rank", "0", "--rank", "1", "--batches", str(BATCHES)
    )
    py_rc, py_out = py.finish(timeout=40)
    prod_rc, prod_out = producer.finish(timeout=30)
    assert py_rc == 0, f"pyconsume exited {py_rc}: {py_out}\n{py.stderr()}"
    assert prod_rc == 0, f"producer exited {prod_rc}: {prod_out}\n{producer.stderr()}"
    published = results(prod_out)
    assert sorted(published) == [0, 1], prod_out
    assert results(py_out) == published
