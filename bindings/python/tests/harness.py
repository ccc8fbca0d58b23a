"""What the soak drivers and their trainer processes share, apart from the tests.

Trainers (faulttrainer.py, loadtrainer.py, serveconsume.py) read one rank of a job in a
process of their own and write down what they saw; drivers (faultkit.py, loadsoak.py,
membound.py, and soak.py over them) start serve and trainers through servekit, check
what the trainers wrote and report figures. Each trainer and driver is a script with a
command line; this module holds the parts they would otherwise copy from each other:
their common arguments, how a trainer takes batches and records how its stream ended,
and how a driver generates data, samples processes and reports its outcome.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import servekit

import shmloader


def _first_paragraph(doc: str | None) -> str | None:
    return doc.split("\n\n")[0] if doc else None


# -- trainers ------------------------------------------------------------------------------


def trainer_parser(
    description: str | None, *, attach_timeout: float, batch_timeout: float
) -> argparse.ArgumentParser:
    """The arguments of every trainer: the rank it reads (--job, --rank, --dir) and its
    waits (--attach-timeout, --batch-timeout, with these defaults)."""
    p = argparse.ArgumentParser(description=_first_paragraph(description))
    p.add_argument("--job", required=True)
    p.add_argument("--rank", type=int, required=True)
    p.add_argument("--dir", required=True, help="the segment directory")
    p.add_argument("--attach-timeout", type=float, default=attach_timeout)
    p.add_argument("--batch-timeout", type=float, default=batch_timeout)
    return p


def attach(args: argparse.Namespace, timeout: float | None = None) -> shmloader.Loader:
    """The loader of the rank trainer_parser's arguments name (``timeout``: instead of
    --attach-timeout)."""
    return shmloader.attach(
        args.job,
        args.rank,
        dir=args.dir,
        timeout=args.attach_timeout if timeout is None else timeout,
        batch_timeout=args.batch_timeout,
    )


def take(loader: shmloader.Loader, n: int | None = None) -> Iterator[shmloader.Batch]:
    """Up to ``n`` batches (None: every one) from the loader's position on, across the
    ends of epochs, until the end of the stream (then ``loader.ended``); each batch is
    released when the caller moves on or stops."""
    taken = 0
    while n is None or taken < n:
        batch = loader.next()
        if batch is None:
            if loader.ended:
                return
            continue  # the end of an epoch
        with batch:
            yield batch
        taken += 1


def batch_hash(batch: shmloader.Batch) -> str:
    """A sha256 over, per tensor in the producer's schema order, its name, wire dtype,
    shape and bytes: two batches hash alike only if a trainer could not tell them apart."""
    h = hashlib.sha256()
    for name, arr in batch.items():
        h.update(f"{name}\0{batch.dtypes[name]}\0{arr.shape}\0".encode())
        h.update(np.ascontiguousarray(arr).view(np.uint8).ravel().data)
    return h.hexdigest()


def ending(exc: shmloader.ShmloaderError) -> dict[str, Any]:
    """How an error of the library ended a trainer's stream, as the drivers read it:
    ``end`` "gone" (with ProducerGone's ``stop`` and ``reason``), "timeout" (with the
    producer's ``reason``) or "error:<Class>: <message>", and the ``message``."""
    if isinstance(exc, shmloader.ProducerGone):
        return {"end": "gone", "message": str(exc), "stop": exc.stop, "reason": exc.reason}
    if isinstance(exc, shmloader.Timeout):
        return {"end": "timeout", "message": str(exc), "reason": exc.reason}
    return {"end": f"error:{type(exc).__name__}: {exc}", "message": str(exc)}


def write_json(path: str, obj: dict[str, Any]) -> None:
    """Write obj to path whole or not at all (a reader never sees half of it)."""
    with open(path + ".tmp", "w") as f:
        json.dump(obj, f)
    os.replace(path + ".tmp", path)


# -- drivers -------------------------------------------------------------------------------


class Failure(AssertionError):
    """A property a driver checks does not hold; the message says which, with the
    processes' output where it helps."""


def generate(bin: Path, out: Path, *flags: str, timeout: float) -> None:
    """``shmloader gen --out OUT FLAGS...``, or RuntimeError with its stderr."""
    argv = [str(bin), "gen", "--out", str(out), *flags]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"shmloader gen failed: {done.stderr}")


def proc_sample(pid: int) -> dict[str, int] | None:
    """A process's resident memory (VmRSS, its peak VmHWM, and its anonymous,
    shared-memory and file pages), open files and mappings; None once it has exited."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        fds = len(list(Path(f"/proc/{pid}/fd").iterdir()))
        maps = Path(f"/proc/{pid}/maps").read_bytes().count(b"\n")
    except OSError:
        return None
    names = ("VmRSS", "VmHWM", "RssShmem", "RssFile", "RssAnon")
    kb = {
        ln.split(":")[0]: int(ln.split()[1]) for ln in status.splitlines() if ln.startswith(names)
    }
    if "VmRSS" not in kb:
        return None  # exited, not yet reaped
    return {
        "rss": kb["VmRSS"] * 1024,
        "hwm": kb["VmHWM"] * 1024,
        "shmem": kb.get("RssShmem", 0) * 1024,
        "file": kb.get("RssFile", 0) * 1024,
        "anon": kb.get("RssAnon", 0) * 1024,
        "fds": fds,
        "maps": maps,
    }


def wait_end(serve: servekit.Serve, trainers: list[servekit.Child], what: str) -> None:
    """serve exits 0 without a panic, and then the trainers."""
    rc = serve.wait(60)
    servekit.assert_no_panic(serve.stderr)
    if rc != 0:
        raise Failure(f"serve exited {rc} {what}\n{serve.describe()}")
    for t in trainers:
        t.wait(30)


def driver_parser(description: str | None, *, work: str) -> argparse.ArgumentParser:
    """The arguments of every driver: --work (``work`` says what it defaults to), --json
    (where to write the figures) and --bin (the shmloader binary: $SHMLOADER_BIN, else
    the build's)."""
    p = argparse.ArgumentParser(description=_first_paragraph(description))
    p.add_argument("--work", help=f"work dir (default: {work})")
    p.add_argument("--json", help="write the figures here")
    default_bin = os.environ.get("SHMLOADER_BIN") or str(servekit.REPO / "build/bin/shmloader")
    p.add_argument("--bin", type=Path, default=Path(default_bin))
    return p


def drive(
    name: str,
    args: argparse.Namespace,
    run: Callable[[Path], dict[str, Any]],
    *,
    work: Path | None = None,
    shown: Callable[[dict[str, Any]], Any] = lambda figs: figs,
) -> None:
    """Run a driver in its work dir (--work, else ``work``, else a new temp dir removed
    after a pass) and report: on a Failure, "NAME FAILED: ..." and the work dir on stderr
    and exit 1; else the figures (``shown`` of them) as JSON on stdout, and all of them
    in --json."""
    temporary = not args.work and work is None
    where = Path(args.work or work or tempfile.mkdtemp(prefix=f"shmloader-{name.split()[0]}-"))
    where.mkdir(parents=True, exist_ok=True)
    try:
        figs = run(where)
    except Failure as exc:
        print(f"{name} FAILED: {exc}\nwork dir: {where}", file=sys.stderr)
        sys.exit(1)
    print(json.dumps(shown(figs), indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(figs, indent=1))
    if temporary:
        shutil.rmtree(where, ignore_errors=True)
