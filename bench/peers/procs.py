"""Processes for the side-by-side benchmark (run.py): start a run's consumers, gate
them until their imports are done, start its producer, sample every process's peak RSS
and the run's total PSS, and reap each with its rusage.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from dataclasses import dataclass

RUN_TIMEOUT = 1800.0  # seconds for one run of one contender before it is killed
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the cwd of every process


def children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def vm_hwm_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def pss_kib(pid: int) -> int:
    """Proportional set size: a page shared by n processes counts 1/n in each."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class Sampler(threading.Thread):
    """Every 0.2 s: the VmHWM (peak RSS) of the launched processes and all their
    descendants, and the sum of the PSS of all of them (the run's memory, shared pages
    counted once). VmHWM, not wait4's ru_maxrss: Linux carries a child's RSS from before
    its exec (the forked copy of this harness) into ru_maxrss."""

    def __init__(self, roots: list[int]) -> None:
        super().__init__(daemon=True)
        self.roots = roots
        self.peak: dict[int, int] = {}  # pid -> KiB
        self.pss_total = 0  # KiB, the largest sum seen
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            total = 0
            todo = list(self.roots)
            while todo:
                pid = todo.pop()
                self.peak[pid] = max(self.peak.get(pid, 0), vm_hwm_kib(pid))
                total += pss_kib(pid)
                todo.extend(children(pid))
            self.pss_total = max(self.pss_total, total)
            self.stop.wait(0.2)


@dataclass
class Proc:
    role: str  # "producer", "consumer" or "raw"
    cmd: list[str]
    popen: subprocess.Popen[bytes] | None = None
    out_path: str = ""
    cpu: float = 0.0
    rss_kib: int = 0
    rc: int = 0
    output: str = ""


def run_procs(procs: list[Proc], logdir: str, name: str, env: dict[str, str] | None = None) -> tuple[float, Sampler]:
    """Starts the consumers, waits until every one has its imports done, then starts the
    producers and tells the consumers to go: that moment is the run's t0. Waits for all,
    filling in cpu/rss/rc/output; kills whatever still runs if anything fails. Returns t0
    (time.monotonic) and the sampler (peak RSS of the processes' children, total PSS)."""
    gate = os.path.join(logdir, name)

    def start(p: Proc, i: int) -> None:
        p.out_path = os.path.join(logdir, f"{name}-{i}.out")
        cmd = [c.replace("{gate}", gate) for c in p.cmd]
        with open(p.out_path, "wb") as out, open(p.out_path[:-4] + ".err", "wb") as err:
            p.popen = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=REPO, env=env)

    sampler: Sampler | None = None
    pending: dict[int, Proc] = {}
    try:
        consumers = [(i, p) for i, p in enumerate(procs) if p.role == "consumer"]
        for i, p in consumers:
            start(p, i)
            assert p.popen is not None
            pending[p.popen.pid] = p
        deadline = time.monotonic() + 300
        while not all(os.path.exists(f"{gate}.ready{k}") for k in range(len(consumers))):
            if any(p.popen and p.popen.poll() is not None for _, p in consumers) or time.monotonic() > deadline:
                raise RuntimeError(f"{name}: a consumer died or hung before its loader started; see {logdir}")
            time.sleep(0.005)
        t0 = time.monotonic()
        for i, p in enumerate(procs):
            if p.role != "consumer":
                start(p, i)
                assert p.popen is not None
                pending[p.popen.pid] = p
        with open(gate + ".go.tmp", "w") as f:
            f.write(repr(t0))
        os.rename(gate + ".go.tmp", gate + ".go")
        sampler = Sampler([p.popen.pid for p in procs if p.popen])
        sampler.start()
        deadline = t0 + RUN_TIMEOUT
        while pending:
            pid, status, ru = os.wait4(-1, os.WNOHANG)
            if pid == 0:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{name}: still running after {RUN_TIMEOUT:.0f} s")
                time.sleep(0.02)
                continue
            p = pending.pop(pid, None)
            if p is None:
                continue
            assert p.popen is not None
            p.popen.returncode = p.rc = os.waitstatus_to_exitcode(status)
            p.cpu = ru.ru_utime + ru.ru_stime
            p.rss_kib = sampler.peak.get(pid, 0) if sampler else 0
            with open(p.out_path) as f:
                p.output = f.read()
            if p.rc != 0:
                raise RuntimeError(f"{name}: {' '.join(p.cmd[:4])} ... exited {p.rc}; see {p.out_path[:-4]}.err:\n"
                                   + tail(p.out_path[:-4] + ".err"))
    finally:
        if sampler is not None:
            sampler.stop.set()
            sampler.join()
        for p in pending.values():
            assert p.popen is not None
            p.popen.kill()
            p.popen.wait()
    return t0, sampler


def tail(path: str, n: int = 15) -> str:
    with open(path, errors="replace") as f:
        return "".join(f.readlines()[-n:])
