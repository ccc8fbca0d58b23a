"""`make soak`: the long versions of the reliability suite. It prints a summary and writes
the figures into RELIABILITY.md (between its soak markers) and the memory bound's into
bench/RESULTS.md.

Sections (--only picks some; each one's short version runs in `make test`):
  faults  faultkit.py: ITERATIONS fault-injection iterations (default 1,000)
  load    loadsoak.py: 16 rings for LOAD_SECONDS (default 600)
  memory  membound.py: a dataset 1x and 10x the demo's
  fuzz    every Go fuzz target for FUZZ_SECONDS each, and the C validator's random
          corruptions (SHML_CORRUPTIONS) under ASan and UBSan
A failing section stops the soak with its error and writes nothing.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import faultkit
import loadsoak
import membound
import servekit
from harness import Failure

REPO = servekit.REPO
RELIABILITY = REPO / "RELIABILITY.md"
RESULTS = REPO / "bench" / "RESULTS.md"
FIGURES = REPO / "build" / "soak" / "figures.json"
BEGIN, END = "<!-- soak:begin -->", "<!-- soak:end -->"
MEM_BEGIN, MEM_END = "<!-- membound:begin -->", "<!-- membound:end -->"
MIB = 1 << 20


STOP_MAX_S = 2.0  # the longest SIGSTOP below the batch timeout, in the soak


def faults(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="shmloader-faults-"))
    drv = faultkit.Driver(args.bin, work, args.seed, faultkit.Settings(stop_max_s=STOP_MAX_S))
    figs = []
    for i in range(args.iterations):
        try:
            figs.append(drv.checked(i))
        except Failure as exc:
            raise SystemExit(f"faults: FAILED: {exc}\nwork dir: {work}") from None
        if (i + 1) % 50 == 0:
            print(f"faults: {i + 1}/{args.iterations}", flush=True)
    summary = faultkit.summarize(figs)
    summary["seed"] = args.seed
    shutil.rmtree(work, ignore_errors=True)  # kept only when an iteration failed
    return summary


def load(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="shmloader-load-"))
    try:
        figs = loadsoak.run(args.bin, work, args.load_seconds, sample_s=5.0, warmup_s=30.0)
    except Failure as exc:
        raise SystemExit(f"load: FAILED: {exc}\nwork dir: {work}") from None
    shutil.rmtree(work, ignore_errors=True)
    return figs


def memory(args: argparse.Namespace) -> dict[str, Any]:
    try:
        return membound.run(args.bin, REPO / "build" / "membound", [1, 10])
    except Failure as exc:
        raise SystemExit(f"memory: FAILED: {exc}") from None


def fuzz(args: argparse.Namespace) -> dict[str, Any]:
    listed = subprocess.run(
        ["make", "-s", "--no-print-directory", "print-fuzz-targets"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    targets = listed.stdout.split()
    execs = {}
    for t in targets:
        pkg, name = t.split(":")
        for attempt in (1, 2):
            out = subprocess.run(["go", "test", f"./{pkg}", "-run", "^$", "-fuzz", f"^{name}$",
                                  "-fuzztime", f"{args.fuzz_seconds}s"],
                                 cwd=REPO, capture_output=True, text=True)  # fmt: skip
            text = out.stdout + out.stderr
            # Go's coordinator can fail a duration-limited run with "context deadline
            # exceeded" and no input (go.dev/issue/75804, see the Makefile): once more.
            spurious = "context deadline exceeded" in text and "Failing input" not in text
            if out.returncode == 0 or not spurious or attempt == 2:
                break
        if out.returncode != 0:
            raise SystemExit(f"fuzz: {t} FAILED (a failing input is kept in "
                             f"{pkg}/testdata/fuzz):\n{text[-5000:]}")  # fmt: skip
        found = re.findall(r"execs: (\d+)", text)
        execs[t] = int(found[-1]) if found else 0
        if execs[t] == 0:
            raise SystemExit(f"fuzz: {t} tried no input in {args.fuzz_seconds} s (still "
                             "gathering its corpus's coverage): raise --fuzz-seconds")  # fmt: skip
        print(f"fuzz: {t}: {execs[t]:,} inputs in {args.fuzz_seconds} s", flush=True)
    env = dict(os.environ, SHML_CORRUPTIONS=str(args.corruptions))
    test = REPO / "build" / "c-tests" / "test_validate"
    out = subprocess.run([str(test)], capture_output=True, text=True, env=env)
    ran = f"{args.corruptions} corruptions" in out.stdout
    if out.returncode != 0 or "not ok" in out.stdout or not ran:
        raise SystemExit(f"fuzz: the C validator FAILED:\n{out.stdout[-3000:]}{out.stderr[-3000:]}")
    return {
        "seconds_per_target": args.fuzz_seconds,
        "go_inputs": execs,
        "go_inputs_total": sum(execs.values()),
        "c_corruptions": args.corruptions,
    }


# Fuzzing first: the shortest, and the one a spurious toolchain failure could stop.
SECTIONS = {"fuzz": fuzz, "faults": faults, "load": load, "memory": memory}


def mib(n: float) -> str:
    return f"{n / MIB:.0f} MiB"


def render(figs: dict[str, Any], command: str) -> str:
    """RELIABILITY.md's figures section."""
    out = [f"Last soak: {figs['date']}, {figs['machine']}, `{command}` "
           f"({figs['seconds'] / 60:.0f} min). Nothing was lost in any section."]  # fmt: skip
    if f := figs.get("faults"):
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(f["faults"].items()))
        d, t, a, s = f["detect_s"], f["timeout_s"], f["abandon_s"], f["stopped_s"]
        out += ["", f"**Fault injection** (`faultkit.py`, seed {f['seed']}): {f['iterations']:,} "
                f"iterations, one fault each: {kinds}.",  # fmt: skip
                f"- {f['batches_checked']:,} finished batches compared byte for byte with the "
                f"undisturbed stream: **{f['lost']} lost, {f['repeated']} repeated, 0 differing**.",
                f"- Recovery: {f['restarts']['serve']} serve restarts, {f['restarts']['trainer']} "
                f"trainer restarts from checkpoints; {f['caught_mid_write']} kills landed while a "
                f"cache entry was being written (leaving {f['cache_temps_left_by_kills']} temp "
                f"files, all removed by the next serve); killed serves left "
                f"{f['leftover_files_after_kills']} files in all, removed by `shmloader clean` "
                f"after {f['cleaned_by_clean']} of the kills and by the next serve after the "
                "others; nothing was left after any iteration."]  # fmt: skip
        if d:
            out.append(
                f"- A killed serve was noticed by attached trainers after "
                f"{d['median'] * 1e3:.0f} ms (median of {d['n']}), at most "
                f"{d['max'] * 1e3:.0f} ms."
            )
        if t:
            out.append(
                f"- Batch waits on a stopped serve ended after {t['median']:.3f} s "
                f"(median of {t['n']}), at most {t['max']:.3f} s, against a batch "
                f"timeout of {faultkit.BATCH_TIMEOUT_S:g} s."
            )
        if a:
            out.append(
                f"- Serve gave up on an abandoned rank {a['median']:.1f} s after the kill "
                f"(median of {a['n']}), at most {a['max']:.1f} s, with --drain-timeout "
                f"{faultkit.DRAIN_TIMEOUT_S:g}s."
            )
        if s:
            out.append(
                f"- Processes stopped (SIGSTOP) for less than the batch timeout, up to "
                f"{s['max']:.1f} s, were noticed by nothing but the wait figures."
            )
    if lo := figs.get("load"):
        sv, tr = lo["serve"], lo["trainer_max"]
        out += ["", f"**Load held** (`loadsoak.py`): {lo['ranks']} rings, batches of "
                f"{lo['batch_rows']} rows, {lo['seconds'] / 60:.0f} min, {lo['samples']} samples "
                f"per process.",  # fmt: skip
                f"- {lo['epochs_checked']} epochs, {lo['batches_checked']:,} batches "
                f"({lo['rows_checked']:,} rows) checked: every row once per epoch, "
                f"**{lo['lost']} lost, {lo['repeated']} repeated**.",  # fmt: skip
                f"- serve: RSS {mib(sv['rss_first'])} in the first third, {mib(sv['rss_last'])} in "
                f"the last; open files {sv['fds_first']} → {sv['fds_last']}; mappings "
                f"{sv['maps_first']} → {sv['maps_last']}.",
                f"- trainers (largest of 16): RSS {mib(tr['rss_first'])} → {mib(tr['rss_last'])}; "
                f"open files {tr['fds_first']} → {tr['fds_last']}; mappings {tr['maps_first']} → "
                f"{tr['maps_last']}.",
                f"- Waits: {lo['batches_per_s']:,.0f} batches/s in all; trainers waited "
                f"{lo['stall_median']:.0%} of the time (median; at most {lo['stall_max']:.0%}), "
                f"next() p50 ≤ {lo['wait_p50_s_max'] * 1e3:.2f} ms, p99 ≤ "
                f"{lo['wait_p99_s_max'] * 1e3:.1f} ms, longest {lo['wait_max_s'] * 1e3:.0f} ms "
                "(2 cores for 17 processes)."]  # fmt: skip
    if m := figs.get("memory"):
        out += ["", "**Memory bound** (`membound.py`): one epoch of the demo's config, cache off, "
                "datasets of the demo's files (125,000 rows each).", "",
                "| dataset rows | serve peak RSS | bound: rings + windows + runtime | serve RSS, "
                "middle third → last third | trainer peak RSS |",
                "|---|---|---|---|---|"]  # fmt: skip
        for res in m["scales"].values():
            tr = max(v["hwm"] for k, v in res["peaks"].items() if k != "serve")
            out.append(
                f"| {res['rows']:,} | {mib(res['peaks']['serve']['hwm'])} | "
                f"{mib(res['bound'])} = {mib(res['rings'])} + {mib(res['windows'])} + "
                f"{mib(res['runtime'])} ({res['workers']} workers) | "
                f"{mib(res['rss_middle_third'])} → {mib(res['rss_last_third'])} | "
                f"{mib(tr)} |"
            )
    if fz := figs.get("fuzz"):
        out += ["", f"**Inputs tried**: {fz['go_inputs_total']:,} fuzzed inputs over "
                f"{len(fz['go_inputs'])} Go targets ({fz['seconds_per_target']} s each, from the "
                f"committed corpora), and {fz['c_corruptions']:,} randomly corrupted ring headers "
                "through the C library's validator under ASan and UBSan: no crash, no hang, "
                "every one answered with a validation result."]  # fmt: skip
    return "\n".join(out)


def replace_between(path: Path, begin: str, end: str, text: str) -> None:
    doc = path.read_text()
    i, j = doc.find(begin), doc.find(end)
    if i < 0 or j < i:
        raise SystemExit(f"{path}: no {begin} ... {end} markers")
    path.write_text(doc[: i + len(begin)] + "\n" + text + "\n" + doc[j:])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", default=",".join(SECTIONS), help="sections, comma-separated: "
                   + ", ".join(SECTIONS))  # fmt: skip
    p.add_argument("--iterations", type=int, default=1000)
    p.add_argument("--seed", type=int, default=int(time.time()) % 100000)
    p.add_argument("--load-seconds", type=float, default=600)
    p.add_argument("--fuzz-seconds", type=int, default=15)
    p.add_argument("--corruptions", type=int, default=1_000_000)
    p.add_argument("--bin", type=Path, default=REPO / "build" / "bin" / "shmloader")
    args = p.parse_args()
    only = args.only.split(",")
    unknown = [s for s in only if s not in SECTIONS]
    if unknown:
        p.error(f"--only: no section {', '.join(unknown)}; the sections are {', '.join(SECTIONS)}")
    # Only the whole soak, as `make soak` runs it (any seed), rewrites the recorded figures.
    full = sorted(only) == sorted(SECTIONS) and all(
        getattr(args, k) == p.get_default(k)
        for k in ("iterations", "load_seconds", "fuzz_seconds", "corruptions", "bin")
    )
    started = time.monotonic()
    figs: dict[str, Any] = {}
    for name in only:
        t0 = time.monotonic()
        print(f"== soak: {name}", flush=True)
        figs[name] = SECTIONS[name](args)
        print(f"== soak: {name} passed in {time.monotonic() - t0:.0f} s", flush=True)
    figs["seconds"] = time.monotonic() - started
    figs["date"] = datetime.date.today().isoformat()
    figs["machine"] = f"{os.cpu_count()} CPUs, {platform.machine()}"
    FIGURES.parent.mkdir(parents=True, exist_ok=True)
    FIGURES.write_text(json.dumps(figs, indent=1))
    text = render(figs, "make soak" if full else f"soak.py {' '.join(sys.argv[1:])}")
    print("\n" + text)
    if not full:
        print(f"\na partial soak: the figures in {RELIABILITY.name} stay as they were")
        return
    replace_between(RELIABILITY, BEGIN, END, text)
    mem = render({**{k: figs[k] for k in ("date", "machine", "seconds")},
                  "memory": figs["memory"]}, "make soak")  # fmt: skip
    replace_between(RESULTS, MEM_BEGIN, MEM_END, mem)
    print(f"\nwrote the figures into {RELIABILITY.name} and {RESULTS.relative_to(REPO)}")


if __name__ == "__main__":
    main()
