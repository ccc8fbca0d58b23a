"""Fault injection on real runs of `shmloader serve`: the driver of test_faults.py (100
iterations in `make test`) and of `make soak` (1,000).

Every iteration is one real run: `shmloader serve` with the cache on (a cache dir shared by
all iterations, emptied before some of them), RANKS checkpointing trainer processes
(faulttrainer.py, through the Python binding), and one fault at a random moment of it:

  kill_serve              kill -9 of serve
  kill_serve_cache_write  kill -9 of serve while it writes a cache entry (cache emptied first)
  kill_trainer            kill -9 of a trainer, restarted after a random pause
  abandon_trainer         kill -9 of a trainer that nobody restarts: serve must give up on its
                          rank within --drain-timeout, exit 1 naming it, and clean up
  stop_serve              SIGSTOP of serve for a random time below the trainers' batch
                          timeout, then SIGCONT: nothing may notice but the wait figures
  stop_trainer            the same for a trainer
  stop_serve_past_timeout SIGSTOP of serve for longer than the trainers' batch timeout: each
                          waiting trainer raises Timeout after that long, not before and not
                          much after; then SIGCONT and the trainers restart

The moment is a random number of batches into the run (0: during start-up), plus a random
delay. After a kill the documented recovery follows: the trainers that stopped restart from
their checkpoints (load_state_dict of the last batch they finished) and serve restarts with
the same job, cache and config; half the time `shmloader clean` runs first.

After every iteration, checked (a failure names the iteration, its seed and the command that
repeats it):
- each wait ended within its documented bound: a killed serve is noticed by every attached
  trainer within DETECT_S, a batch wait ends at the batch timeout, serve gives up on an
  abandoned rank within the drain timeout; nothing is left running at the end;
- what a kill -9 of serve leaves in the shared-memory dir is only the job's own files (its
  segments, lock and status file), `shmloader clean` removes them, and after the last serve
  the dir is empty; no process naming the job is left;
- every rank's checkpoint log, the batches its trainers finished, equals the stream of an
  undisturbed run with no cache byte for byte, each batch once: restart plus seek gives the
  identical stream;
- the cache holds no temp file afterwards, `cache ls` finds nothing corrupt, and no serve
  dropped a corrupt entry: nothing torn was written, or served.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import servekit
from harness import Failure, drive, driver_parser, generate

TRAINER = servekit.TESTS / "faulttrainer.py"

# Fault kinds and their weights.
KINDS = {
    "kill_serve": 2.0,
    "kill_serve_cache_write": 2.0,
    "kill_trainer": 2.0,
    "abandon_trainer": 0.6,
    "stop_serve": 1.5,
    "stop_trainer": 1.5,
    "stop_serve_past_timeout": 0.6,
}

RANKS = 3
EPOCHS = 2
BATCH = 64
ROWS = 6000
ROW_GROUP_ROWS = 500
ROW_GROUPS = ROWS // ROW_GROUP_ROWS
SHARDS = 2
DEPTH = 4
GEN_FLAGS = [
    "--rows", str(ROWS), "--files", "2", "--row-group-rows", str(ROW_GROUP_ROWS),
    "--features", "4", "--categoricals", "2", "--strings", "1", "--list-max", "6",
    "--null-fraction", "0.1", "--seed", "7", "--quiet",
]  # fmt: skip
OUTPUTS: dict[str, Any] = {
    "x": {
        "columns": ["f000..f003"],
        "transforms": [{"fill_null": 0}, {"normalize": {"mean": 0.5, "std": 2}}],
    },
    "cats": {"columns": "c0*", "transforms": [{"hash_bucket": 1000}]},
    "strs": {"columns": "s0*", "transforms": [{"fill_null": ""}, {"hash_bucket": 99}]},
    "seq": {"columns": "seq", "transforms": [{"pad": 6}]},
    "label": "label",
    "id": "id",
}

# The documented bounds each wait is held to.
DETECT_S = 2.0  # a dead producer is reported to trainers (RELIABILITY.md: "within about 0.1 s")
BATCH_TIMEOUT_S = 3.0  # the trainers' batch_timeout here
DRAIN_TIMEOUT_S = 4.0  # serve --drain-timeout here
ATTACH_TIMEOUT_S = 60.0  # the trainers' attach timeout: serve may restart meanwhile
SLACK_S = 2.0  # scheduling on a loaded 2-core machine, on top of each bound
RUN_S = 90.0  # the longest an iteration's processes may take in all


@dataclass
class Settings:
    stop_max_s: float = 1.0  # the longest SIGSTOP below the batch timeout
    slow_max_s: float = 0.004  # the most a trainer spends per batch
    cold_share: float = 0.25  # iterations (besides kill_serve_cache_write) with an empty cache


@dataclass
class Figures:
    """What every iteration adds to the summary."""

    kind: str
    moment: int = 0  # batches finished, in all or by the rank, before the fault
    batches: int = 0  # checkpoint lines compared with the undisturbed stream
    restarts: dict[str, int] = field(default_factory=lambda: {"serve": 0, "trainer": 0})
    detect_s: list[float] = field(default_factory=list)  # serve's death noticed by trainers
    timeout_s: list[float] = field(default_factory=list)  # batch waits ended by the timeout
    abandon_s: float | None = None  # serve giving up on a rank, from the kill
    stopped_s: float | None = None  # how long a process was stopped, below the batch timeout
    leftovers: int = 0  # files a killed serve left in the shared-memory dir
    cleaned: bool = False  # `shmloader clean` ran and removed them
    cache_temps: int = 0  # temp files a killed serve left in the cache
    caught_write: bool | None = None  # kill_serve_cache_write: killed mid-write
    seconds: float = 0.0
    note: str = ""


def line_count(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def read_json(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None


def processes_naming(tag: str) -> list[str]:
    """Live processes (other than this one) whose command line contains tag."""
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == os.getpid():
            continue
        try:
            cmd = Path(f"/proc/{d}/cmdline").read_bytes()
            stat = Path(f"/proc/{d}/stat").read_text()
        except OSError:
            continue
        if tag.encode() in cmd and stat.rsplit(")", 1)[1].split()[0] != "Z":
            found.append(d + ": " + cmd.replace(b"\0", b" ").decode(errors="replace"))
    return found


def cache_files(cache: Path, pattern: str) -> list[Path]:
    return sorted(cache.glob(f"s[0-9][0-9]/{pattern}"))


ENTRY = "*.ent"
ENTRY_TEMP = "[0-9a-f]*.tmp"  # <key>.<pid>.<seq>.<size>.tmp, an entry being written
TEMP = "*.tmp"  # those and manifest temps


def write_config(path: Path, dataset: Path) -> Path:
    return servekit.write_config(
        path, dataset=str(dataset), batch_size=BATCH, seed=11, epochs=EPOCHS, ranks=RANKS,
        shuffle={"row_groups": True, "window": 2}, outputs=OUTPUTS, ring_depth=DEPTH,
        cache={"shards": SHARDS}, progress=0,
    )  # fmt: skip


class Run:
    """One run of serve and RANKS trainers in its own shared-memory dir."""

    def __init__(self, drv: Driver, g: servekit.Group, job: str, logs: Path, cache: Path | None,
                 slow: float) -> None:  # fmt: skip
        self.drv, self.g, self.job, self.logs = drv, g, job, logs
        self.cache, self.slow = cache, slow
        self.serve: servekit.Serve | None = None
        self.serves: list[servekit.Serve] = []
        self.trainers: dict[int, servekit.Child] = {}
        self.starts = Counter[int]()
        self.finished: set[int] = set()  # ranks whose killed trainer had finished every batch

    # -- processes ------------------------------------------------------------------------

    def log(self, r: int) -> Path:
        return self.logs / f"r{r}.log"

    def end(self, r: int) -> dict[str, Any] | None:
        return read_json(Path(f"{self.log(r)}.end"))

    def attached(self, r: int) -> bool:
        return Path(f"{self.log(r)}.attached").exists()

    def start_serve(self) -> None:
        flags = ["--drain-timeout", f"{DRAIN_TIMEOUT_S}s", "--metrics", "off"]
        if self.cache is not None:
            flags += ["--cache-dir", str(self.cache)]
        self.serve = self.g.serve(self.drv.cfg, self.job, *flags)
        self.serves.append(self.serve)

    def start_trainer(self, r: int) -> None:
        for suffix in (".end", ".attached"):
            Path(f"{self.log(r)}{suffix}").unlink(missing_ok=True)
        self.starts[r] += 1
        self.trainers[r] = self.g.python(
            f"trainer-r{r}-{self.starts[r]}", TRAINER, "--job", self.job, "--rank", str(r),
            "--dir", str(self.g.shm_dir), "--log", str(self.log(r)),
            "--attach-timeout", str(ATTACH_TIMEOUT_S), "--batch-timeout", str(BATCH_TIMEOUT_S),
            "--slow", f"{self.slow:.4f}",
        )  # fmt: skip

    def lines(self, r: int | None = None) -> int:
        ranks = range(RANKS) if r is None else [r]
        return sum(line_count(self.log(q)) for q in ranks)

    def running(self) -> list[int]:
        return [r for r, t in self.trainers.items() if t.running()]

    def wait_moment(self, k: int, r: int | None = None) -> None:
        """Until k batches are finished (by rank r, or in all), then a random 0-20 ms."""
        deadline = time.monotonic() + RUN_S
        while self.lines(r) < k and time.monotonic() < deadline:
            if r is not None and not self.trainers[r].running():
                break
            if r is None and not self.running():
                break
            time.sleep(0.002)
        time.sleep(self.drv.rng.uniform(0, 0.02))

    def describe(self) -> str:
        parts = [s.describe() for s in self.serves[-2:]]
        parts += [t.describe() for t in self.trainers.values()]
        return "\n".join(parts)

    def fail(self, what: str) -> Failure:
        return Failure(f"{what}\n{self.describe()}")

    # -- after a death --------------------------------------------------------------------

    def trainers_after_serve_died(self, died_at: float, fig: Figures,
                                  killed: int | None = None) -> list[int]:  # fmt: skip
        """Every trainer attached to the dead serve ends within DETECT_S with ProducerGone
        (or had read its whole stream); one still waiting to attach goes on waiting.
        Returns the ranks to restart: every trainer that ended, as a job restarts all of
        them, each from its checkpoint (a serve waits for every rank's trainer)."""
        deadline = died_at + DETECT_S + SLACK_S
        while time.monotonic() < deadline and any(self.attached(r) for r in self.running()):
            time.sleep(0.005)
        restart = []
        for r, t in self.trainers.items():
            if r == killed:
                restart.append(r)
                continue
            if t.running():
                if self.attached(r):
                    raise self.fail(
                        f"rank {r}: its trainer is still running "
                        f"{DETECT_S + SLACK_S} s after its producer died"
                    )
                continue  # still attaching: the next serve takes it
            end = self.end(r) or {}
            if end.get("end") == "stream_end":
                restart.append(r)  # the next serve serves every rank: resume it at its end
                continue
            if end.get("end") != "gone":
                raise self.fail(f"rank {r}: trainer ended with {end} after serve died")
            took = end["noticed"] - died_at
            if took > DETECT_S:
                raise self.fail(f"rank {r}: the producer's death took {took:.3f} s to notice, "
                                f"more than {DETECT_S} s")  # fmt: skip
            fig.detect_s.append(max(0.0, took))
            restart.append(r)
        return restart

    def check_leftovers(self, fig: Figures) -> None:
        """What a dead serve leaves: its job's files, nothing else; `shmloader clean`
        removes them, half the time (the other half the next serve replaces them)."""
        left = servekit.segments(self.g.shm_dir)
        prefix = f"shmloader-{os.getuid()}-{self.job}"
        allowed = {f"{prefix}.lock", f"{prefix}.status"} | {f"{prefix}-r{r}" for r in range(RANKS)}
        if not set(left) <= allowed:
            raise self.fail(f"a killed serve left files that are not its job's: {left}")
        fig.leftovers = len(left)
        if self.drv.rng.random() < 0.5:
            out = subprocess.run([str(self.drv.bin), "clean", "--dir", str(self.g.shm_dir)],
                                 capture_output=True, text=True, timeout=30)  # fmt: skip
            if out.returncode != 0 or servekit.segments(self.g.shm_dir):
                raise self.fail(f"shmloader clean did not remove a dead job's files: rc "
                                f"{out.returncode} {out.stdout} {out.stderr} left "
                                f"{servekit.segments(self.g.shm_dir)}")  # fmt: skip
            fig.cleaned = True

    def restart(self, ranks: list[int], fig: Figures, serve: bool) -> None:
        if serve:
            self.start_serve()
            fig.restarts["serve"] += 1
        for r in ranks:
            self.start_trainer(r)
            fig.restarts["trainer"] += 1

    # -- the end --------------------------------------------------------------------------

    def finish(self, fig: Figures) -> None:
        """Every trainer reads to the end of its stream and serve exits 0."""
        deadline = time.monotonic() + RUN_S
        for r, t in self.trainers.items():
            t.wait(max(0.1, deadline - time.monotonic()))
            if r in self.finished:
                continue
            end = self.end(r) or {}
            if end.get("end") != "stream_end":
                raise self.fail(f"rank {r}: trainer ended with {end}")
        assert self.serve is not None
        rc = self.serve.wait(max(0.1, deadline - time.monotonic()))
        servekit.assert_no_panic(self.serve.stderr)
        if rc != 0:
            raise self.fail(f"serve exited {rc} at the end")

    def check(self, fig: Figures) -> None:
        for s in self.serves:
            servekit.assert_no_panic(s.stderr)
            m = re.search(r"(\d+) corrupt dropped$", s.stderr, re.M)
            if m and int(m[1]) != 0:
                raise self.fail("serve dropped a corrupt cache entry")
        for r in range(RANKS):
            got = [json.loads(ln) for ln in self.log(r).read_text().splitlines()]
            got_s = [(b["epoch"], b["step"], b["base"], b["sha"]) for b in got]
            want = self.drv.want[r]
            if got_s != want:
                i = next((i for i, (a, b) in enumerate(zip(got_s, want, strict=False)) if a != b),
                         min(len(got_s), len(want)))  # fmt: skip
                raise self.fail(
                    f"rank {r}: the finished batches differ from the undisturbed stream at "
                    f"line {i}: got {got_s[i] if i < len(got_s) else 'nothing'}, want "
                    f"{want[i] if i < len(want) else 'nothing'} ({len(got_s)} lines, want "
                    f"{len(want)})"
                )
            fig.batches += len(got_s)
        left = servekit.segments(self.g.shm_dir)
        if left:
            raise self.fail(f"files left in the shared-memory dir after serve's end: {left}")
        procs = processes_naming(self.job)
        if procs:
            raise self.fail(f"processes left: {procs}")
        if self.cache is not None:
            temps = cache_files(self.cache, TEMP)
            if temps:
                raise self.fail(f"temp files left in the cache: {temps}")


class Driver:
    def __init__(self, bin: Path, work: Path, seed: int, settings: Settings | None = None) -> None:
        self.bin, self.work, self.seed = bin, work, seed
        self.settings = settings or Settings()
        self.rng = random.Random(seed)
        self.cache = work / "cache"
        data = work / "data"
        if not data.exists():
            generate(bin, data, *GEN_FLAGS, timeout=120)
        self.cfg = write_config(work / "faults.yaml", data)
        self.want: list[list[tuple[int, int, int, str]]] = []
        self.want = self.baseline()

    def baseline(self) -> list[list[tuple[int, int, int, str]]]:
        """The undisturbed stream of every rank, without a cache."""
        fig = Figures("baseline")
        with self.run_dir("baseline", cache=False, slow=0.0) as run:
            for r in range(RANKS):
                run.start_trainer(r)
            run.start_serve()
            run.finish(fig)
            want = []
            for r in range(RANKS):
                lines = [json.loads(ln) for ln in run.log(r).read_text().splitlines()]
                want.append([(b["epoch"], b["step"], b["base"], b["sha"]) for b in lines])
        steps = {len(w) for w in want}
        if len(steps) != 1 or not steps.pop():
            raise RuntimeError(f"baseline: ranks read {[len(w) for w in want]} batches")
        return want

    def run_dir(self, name: str, cache: bool, slow: float) -> RunScope:
        return RunScope(self, name, cache, slow)

    def repeat_command(self, i: int) -> str:
        """The command that runs iteration i again with the same choices, the same
        settings and the work dir (dataset and cache) it ran in."""
        return (
            f"{sys.executable} {Path(__file__)} --seed {self.seed} --first {i} "
            f"--iterations 1 --stop-max {self.settings.stop_max_s:g} --work {self.work}"
        )

    def checked(self, i: int) -> Figures:
        """Iteration i, or a Failure that names it, its seed and the command that runs it
        again."""
        try:
            return self.iteration(i)
        except AssertionError as exc:
            raise Failure(f"iteration {i} (seed {self.seed}): {exc}\n"
                          f"repeat: {self.repeat_command(i)}") from None  # fmt: skip

    def iteration(self, i: int) -> Figures:
        self.rng = random.Random(f"{self.seed}:{i}")
        kind = self.rng.choices(list(KINDS), weights=list(KINDS.values()))[0]
        fig = Figures(kind)
        started = time.monotonic()
        cold = kind == "kill_serve_cache_write" or self.rng.random() < self.settings.cold_share
        if cold:
            shutil.rmtree(self.cache, ignore_errors=True)
        slow = self.rng.uniform(0, self.settings.slow_max_s)
        with self.run_dir(f"it{i}", cache=True, slow=slow) as run:
            trainers_first = self.rng.random() < 0.5
            if trainers_first:
                for r in range(RANKS):
                    run.start_trainer(r)
            run.start_serve()
            if not trainers_first:
                for r in range(RANKS):
                    run.start_trainer(r)
            getattr(self, kind)(run, fig)
            run.finish(fig)
            run.check(fig)
        fig.seconds = time.monotonic() - started
        return fig

    # -- the faults -----------------------------------------------------------------------

    def total(self) -> int:
        return sum(len(w) for w in self.want)

    def kill_serve(self, run: Run, fig: Figures) -> None:
        fig.moment = self.rng.randrange(self.total())
        run.wait_moment(fig.moment)
        self.kill_and_recover(run, fig)

    def kill_and_recover(self, run: Run, fig: Figures) -> None:
        assert run.serve is not None
        if not run.serve.running():
            if run.lines() == self.total():
                fig.note = "the run ended before the fault"  # the moment's random delay
                return
            raise run.fail("serve ended before the fault, with batches left to read")
        run.serve.kill()
        died = time.monotonic()
        if run.serve.popen.returncode != -signal.SIGKILL:
            raise run.fail(f"serve exited {run.serve.popen.returncode} instead of being killed")
        restart = run.trainers_after_serve_died(died, fig)
        run.check_leftovers(fig)
        if fig.caught_write:
            assert run.cache is not None
            ls = subprocess.run([str(self.bin), "cache", "ls", str(run.cache)],
                                capture_output=True, text=True, timeout=30)  # fmt: skip
            if "left by a dead process" not in ls.stdout:
                raise run.fail(f"cache ls does not report the dead writer's temp files:\n"
                               f"{ls.stdout}{ls.stderr}")  # fmt: skip
        run.restart(restart, fig, serve=True)

    def kill_serve_cache_write(self, run: Run, fig: Figures) -> None:
        """Kill serve while an entry is being written: stop it when a temp file shows, and
        kill it only if the temp file is still there (else let it go on and look again)."""
        assert run.serve is not None and run.cache is not None
        fig.moment = self.rng.randrange(ROW_GROUPS - 1)  # entries committed before
        deadline = time.monotonic() + RUN_S
        fig.caught_write = False
        while time.monotonic() < deadline and run.serve.running():
            entries = len(cache_files(run.cache, ENTRY))
            if entries >= ROW_GROUPS:
                break  # every entry written: nothing left to catch
            if entries >= fig.moment and cache_files(run.cache, ENTRY_TEMP):
                servekit.stop_and_wait(run.serve)
                if cache_files(run.cache, ENTRY_TEMP):
                    fig.caught_write = True
                    break
                run.serve.signal(signal.SIGCONT)
            time.sleep(0.0005)
        if not fig.caught_write:
            fig.note = "every entry was written before one could be caught mid-write"
            if not run.serve.running():
                return
        fig.cache_temps = len(cache_files(run.cache, ENTRY_TEMP))
        self.kill_and_recover(run, fig)

    def pick_rank(self, run: Run, fig: Figures) -> int:
        r = self.rng.randrange(RANKS)
        fig.moment = self.rng.randrange(len(self.want[r]))
        return r

    def kill_rank(self, run: Run, fig: Figures, r: int) -> bool:
        """kill -9 of rank r's trainer at the moment; returns whether the rank needs a
        trainer again: not if the killed one had finished every batch (the moment's random
        delay can take it there), as a training script whose checkpoint is at the run's end
        is done, and serve, which needs a rank's batches released, not its end-of-stream
        marker read, finishes without it."""
        run.wait_moment(fig.moment, r)
        t = run.trainers[r]
        if not t.running():
            raise run.fail(f"rank {r}: trainer ended before the fault")
        t.kill()
        if run.lines(r) == len(self.want[r]):
            run.finished.add(r)
            fig.note = "killed after its last batch"
            return False
        return True

    def kill_trainer(self, run: Run, fig: Figures) -> None:
        r = self.pick_rank(run, fig)
        if self.kill_rank(run, fig, r):
            time.sleep(self.rng.uniform(0, 0.5))
            run.restart([r], fig, serve=False)

    def abandon_trainer(self, run: Run, fig: Figures) -> None:
        """Nobody restarts the killed trainer: serve gives up on the rank after
        --drain-timeout, exits 1 naming it, and removes its segments; then the job is
        restarted from every rank's checkpoint."""
        r = self.pick_rank(run, fig)
        deadline = time.monotonic() + RUN_S
        while not run.attached(r) and time.monotonic() < deadline:
            time.sleep(0.002)  # a rank that never had a trainer waits for one for ever
        if not self.kill_rank(run, fig, r):
            return
        killed = time.monotonic()
        assert run.serve is not None
        bound = DRAIN_TIMEOUT_S + SLACK_S + 1.0
        try:
            rc = run.serve.wait(bound)
        except AssertionError:
            raise run.fail(f"serve did not give up on rank {r} within {bound} s of its "
                           "trainer's death") from None  # fmt: skip
        fig.abandon_s = time.monotonic() - killed
        named = (f"rank {r}: its trainer left at step", f"rank {r}: the consumer did not read")
        if rc != 1 or not any(n in run.serve.stderr for n in named):
            raise run.fail(f"serve exited {rc} without naming rank {r}")
        restart = run.trainers_after_serve_died(killed + fig.abandon_s, fig, killed=r)
        if servekit.segments(run.g.shm_dir):
            raise run.fail(f"serve gave up but left {servekit.segments(run.g.shm_dir)}")
        run.restart(restart, fig, serve=True)

    def stop(self, run: Run, child: servekit.Child, fig: Figures, seconds: float) -> None:
        servekit.stop_and_wait(child)
        time.sleep(seconds)
        child.signal(signal.SIGCONT)
        fig.stopped_s = seconds

    def stop_serve(self, run: Run, fig: Figures) -> None:
        fig.moment = self.rng.randrange(self.total())
        run.wait_moment(fig.moment)
        assert run.serve is not None
        self.stop(run, run.serve, fig, self.rng.uniform(0.05, self.settings.stop_max_s))

    def stop_trainer(self, run: Run, fig: Figures) -> None:
        r = self.pick_rank(run, fig)
        run.wait_moment(fig.moment, r)
        self.stop(run, run.trainers[r], fig, self.rng.uniform(0.05, self.settings.stop_max_s))

    def stop_serve_past_timeout(self, run: Run, fig: Figures) -> None:
        """Every trainer waiting on a stopped serve raises Timeout once its batch wait
        reaches the batch timeout; serve goes on after SIGCONT and they restart."""
        fig.moment = self.rng.randrange(self.total())
        run.wait_moment(fig.moment)
        assert run.serve is not None
        servekit.stop_and_wait(run.serve)
        stopped = time.monotonic()
        deadline = stopped + self.settings.slow_max_s + BATCH_TIMEOUT_S + SLACK_S
        while run.running() and time.monotonic() < deadline:
            time.sleep(0.01)
        still = [r for r in run.running() if run.attached(r)]
        stopped_s = time.monotonic() - stopped
        run.serve.signal(signal.SIGCONT)
        if still:
            raise run.fail(
                f"ranks {still}: trainers still waiting {stopped_s:.1f} s into "
                f"a stop of serve, with a batch timeout of {BATCH_TIMEOUT_S} s"
            )
        restart = []
        for r, t in run.trainers.items():
            if t.running():
                continue  # not attached yet: it attaches once serve goes on
            end = run.end(r) or {}
            if end.get("end") == "stream_end":
                continue
            if end.get("end") != "timeout":
                raise run.fail(f"rank {r}: trainer ended with {end} while serve was stopped")
            if not BATCH_TIMEOUT_S - 0.05 <= end["call_s"] <= BATCH_TIMEOUT_S + SLACK_S:
                raise run.fail(f"rank {r}: a batch wait of {BATCH_TIMEOUT_S} s ended after "
                               f"{end['call_s']:.3f} s")  # fmt: skip
            fig.timeout_s.append(end["call_s"])
            if run.lines(r) == len(self.want[r]):
                # It had finished every batch and waited for the end-of-stream marker: its
                # checkpoint is the run's end, so its training is done (serve, which needs
                # the batches released, not the marker read, finishes the rank without it).
                run.finished.add(r)
                continue
            restart.append(r)
        run.restart(restart, fig, serve=False)


class RunScope:
    """A Run in a fresh shared-memory dir; leaving it kills what is left and removes the dir."""

    def __init__(self, drv: Driver, name: str, cache: bool, slow: float) -> None:
        self.drv, self.name, self.cache, self.slow = drv, name, cache, slow

    def __enter__(self) -> Run:
        self.shm = Path(tempfile.mkdtemp(prefix="shmloader-fault-", dir="/dev/shm"))
        tmp = self.drv.work / self.name
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        self.group = servekit.Group(self.drv.bin, self.shm, tmp)
        job = f"flt-{self.name}-{uuid.uuid4().hex[:10]}"
        return Run(self.drv, self.group, job, tmp, self.drv.cache if self.cache else None,
                   self.slow)  # fmt: skip

    def __exit__(self, exc_type: object, *exc: object) -> None:
        for child in self.group.children:
            child.signal(signal.SIGCONT)  # a stopped process cannot die of SIGKILL's wait
        self.group.__exit__(exc_type, *exc)
        shutil.rmtree(self.shm, ignore_errors=True)
        if exc_type is None:
            shutil.rmtree(self.drv.work / self.name, ignore_errors=True)


def summarize(figs: list[Figures]) -> dict[str, Any]:
    def stat(xs: list[float]) -> dict[str, float] | None:
        if not xs:
            return None
        xs = sorted(xs)
        return {"n": len(xs), "median": xs[len(xs) // 2], "max": xs[-1]}

    return {
        "iterations": len(figs),
        "faults": dict(Counter(f.kind for f in figs)),
        "batches_checked": sum(f.batches for f in figs),
        "restarts": {k: sum(f.restarts[k] for f in figs) for k in ("serve", "trainer")},
        "caught_mid_write": sum(1 for f in figs if f.caught_write),
        "cache_temps_left_by_kills": sum(f.cache_temps for f in figs),
        "leftover_files_after_kills": sum(f.leftovers for f in figs),
        "cleaned_by_clean": sum(1 for f in figs if f.cleaned),
        "detect_s": stat([x for f in figs for x in f.detect_s]),
        "timeout_s": stat([x for f in figs for x in f.timeout_s]),
        "abandon_s": stat([f.abandon_s for f in figs if f.abandon_s is not None]),
        "stopped_s": stat([f.stopped_s for f in figs if f.stopped_s is not None]),
        "seconds": sum(f.seconds for f in figs),
        "lost": 0,
        "repeated": 0,
    }


def main() -> None:
    p = driver_parser(__doc__, work="a new temp dir, removed if all pass")
    p.add_argument("--iterations", type=int, default=100)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--first", type=int, default=0, help="index of the first iteration")
    p.add_argument("--stop-max", type=float, default=Settings.stop_max_s)
    args = p.parse_args()

    def run(work: Path) -> dict[str, Any]:
        drv = Driver(args.bin, work, args.seed, Settings(stop_max_s=args.stop_max))
        figs: list[Figures] = []
        for i in range(args.first, args.first + args.iterations):
            fig = drv.checked(i)
            figs.append(fig)
            print(f"{i:5d} {fig.kind:24s} at {fig.moment:4d} {fig.seconds:5.2f} s "
                  f"restarts {fig.restarts['serve']}+{fig.restarts['trainer']} {fig.note}",
                  flush=True)  # fmt: skip
        return {"summary": summarize(figs), "seed": args.seed,
                "iterations": [f.__dict__ for f in figs]}  # fmt: skip

    drive("faults", args, run, shown=lambda figs: figs["summary"])


if __name__ == "__main__":
    main()
