"""Turns bench/results/peers.json (from run.py) into the table between the
``<!-- peers:begin -->`` and ``<!-- peers:end -->`` markers of bench/RESULTS.md and the
plots in bench/plots/. Every figure is the median over the rounds with the spread
(min-max); every ratio is taken within a round, then summarized the same way.

    .venv-bench/bin/python bench/peers/report.py [--results FILE] [--markdown FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from collections import defaultdict
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CEILINGS = ("raw arrow-go decode", "raw pyarrow decode", "memcpy")
BEGIN, END = "<!-- peers:begin -->", "<!-- peers:end -->"

# Table order; ceilings last.
ORDER = ["shmloader", "shmloader fill", "shmloader warm", "shmloader epoch 2", "torch", "torch in-process", "petastorm", "petastorm fill",
         "petastorm warm", "raw arrow-go decode", "raw pyarrow decode", "memcpy"]
LABEL = {
    "shmloader": "shmloader serve (cold)",
    "shmloader fill": "shmloader serve, filling its cache",
    "shmloader warm": "shmloader serve (warm: every row group from the cache)",
    "shmloader epoch 2": "shmloader serve, its second epoch (the first filled a fresh cache)",
    "torch": "PyTorch DataLoader (worker processes)",
    "torch in-process": "PyTorch DataLoader, num_workers=0 (loading in the trainer)",
    "petastorm": "Petastorm (cold)",
    "petastorm fill": "Petastorm, filling its cache",
    "petastorm warm": "Petastorm (warm cache)",
    "raw arrow-go decode": "ceiling: raw arrow-go decode",
    "raw pyarrow decode": "reference: raw pyarrow decode (the DataLoader's decoder)",
    "memcpy": "ceiling: memcpy",
}
SHORT = {
    "shmloader": "shmloader", "shmloader fill": "shmloader\nfill", "shmloader warm": "shmloader\nwarm", "shmloader epoch 2": "shmloader\nepoch 2", "torch": "DataLoader\nworkers", "torch in-process": "DataLoader\nin-process", "petastorm": "Petastorm\ncold",
    "petastorm fill": "Petastorm\nfill", "petastorm warm": "Petastorm\nwarm",
    "raw arrow-go decode": "arrow-go\ndecode", "raw pyarrow decode": "pyarrow\ndecode",
    "memcpy": "memcpy",
}


def med(xs: list[float]) -> tuple[float, float, float]:
    return statistics.median(xs), min(xs), max(xs)


def fmt(xs: list[float], f: str = "{:,.0f}", unit: str = "") -> str:
    if not xs:
        return "–"
    m, lo, hi = med(xs)
    return f"{f.format(m)}{unit} ({f.format(lo)}–{f.format(hi)})" if len(xs) > 1 else f"{f.format(m)}{unit}"


def group(records: list[dict[str, Any]], step: bool) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        if bool(r["step_ms"]) == step:
            out[r["contender"]].append(r)
    return out


def ratios(records: list[dict[str, Any]], a: str, b: str) -> list[float]:
    """rows/s of a over rows/s of b, within each round (throughput runs)."""
    by_round: dict[int, dict[str, float]] = defaultdict(dict)
    for r in records:
        if not r["step_ms"]:
            by_round[r["round"]][r["contender"]] = r["rows_per_s"]
    return [v[a] / v[b] for v in by_round.values() if a in v and b in v]


def rss_cell(rs: list[dict[str, Any]]) -> str:
    """Peak RSS per process (median over rounds) and the sum over all processes."""
    parts = []
    prod = [r["rss_kib"].get("producer", 0) / 1024 for r in rs]
    if any(prod):
        parts.append(f"producer {statistics.median(prod):,.0f}")
    cons = [r["rss_kib"].get("consumer", 0) / 1024 for r in rs]
    base = [r["rss_kib"].get("consumer_ready", 0) / 1024 for r in rs]
    if any(cons):
        parts.append(f"2 × consumer {statistics.median(cons):,.0f} ({statistics.median(base):,.0f} before the loader)")
    work = [r["rss_kib"].get("worker", 0) / 1024 for r in rs]
    n = max(r["rss_kib"].get("workers", 0) for r in rs)
    if n:
        parts.append(f"{n} × worker ≤ {statistics.median(work):,.0f}")
    total = [r["rss_total_kib"] / 1024 for r in rs if r.get("rss_total_kib")]
    return (", ".join(parts) + f"; **{statistics.median(total):,.0f}** in all (PSS)") if total else "–"


def cpu_cell(rs: list[dict[str, Any]]) -> str:
    total = [r["cpu_per_mrow"] for r in rs]
    parts = []
    for k, name in (("producer", "producer"), ("workers", "workers"), ("consumers", "consumers")):
        xs = [r["cpu"].get(k, 0) / r["rows"] * 1e6 for r in rs]
        if statistics.median(xs) >= 0.05:
            parts.append(f"{name} {statistics.median(xs):.2f}")
    return f"**{fmt(total, '{:.2f}')}**" + (f" ({', '.join(parts)})" if len(parts) > 1 else "")


def markdown(res: dict[str, Any]) -> str:
    recs = res["records"]
    thr, stall = group(recs, False), group(recs, True)
    m = res["machine"]
    out = [BEGIN, ""]
    out.append("Command (from the repository root, after nothing but the README's set-up; it installs")
    out.append("`.venv-bench` from bench/requirements.txt, generates the dataset once, runs")
    out.append("bench/peers/run.py and then bench/peers/report.py, which writes this table and the plots):")
    out += ["", "```sh", res["command"], "```", ""]
    ds = res["dataset"]
    out.append(
        f"Recorded {res['date']} in {res['minutes']} minutes on {m['cpus']} vCPUs ({m['cpu_model']}), "
        f"{m['memory_gib']} GiB, Linux {m['kernel']}; Go {m['go'].removeprefix('go')}, Python {m['python']}, "
        f"numpy {m['numpy']}, pyarrow {m['pyarrow']}, torch {m['torch']}, Petastorm {m['petastorm']}. "
        f"Dataset: `shmloader gen --rows {res['rows']}` ({ds['bytes'] / 1e6:,.0f} MB of snappy Parquet in "
        f"`{ds['path']}`). {res['rounds']} round{'s' if res['rounds'] > 1 else ''}; medians with the spread (min–max) in brackets. "
        f"Tuned on this machine: DataLoader num_workers = {res['torch_workers']} per rank, "
        f"Petastorm workers_count = {res['petastorm_workers']} per rank."
    )
    out += ["", "Goals (each ratio taken within a round):", "",
            "| goal | measured | |", "|---|---|---|"]

    def goal(text: str, a: str, b: str, target: float, note: str = "", verdict: str = "") -> None:
        xs = ratios(recs, a, b)
        if not xs:
            return
        ok = statistics.median(xs) >= target
        verdict = verdict or ("met" if ok else "**missed**")
        out.append(f"| {text} ≥ {target:g}× | **{fmt(xs, '{:.2f}', '×')}** | {verdict}{note} |")

    goal("shmloader / Petastorm, cold epoch", "shmloader", "petastorm", 3)
    goal("shmloader warm / Petastorm warm", "shmloader warm", "petastorm warm", 30)
    goal("shmloader warm / shmloader cold", "shmloader warm", "shmloader", 5)
    goal("shmloader epoch 2 / shmloader cold (one serve, warm from its own first epoch)",
         "shmloader epoch 2", "shmloader", 5)
    goal("shmloader warm / memcpy, bytes delivered", "shmloader warm", "memcpy", 0.5)
    goal("shmloader epoch 2 / memcpy, bytes delivered", "shmloader epoch 2", "memcpy", 0.5)
    for name in ("shmloader warm", "shmloader epoch 2"):
        warm = [r for r in recs if r["contender"] == name and not r["step_ms"]]
        if warm:
            allcpu = [r["cpu_per_mrow"] for r in warm]
            serve = [r["cpu"]["producer"] / r["rows"] * 1e6 for r in warm]
            ok = statistics.median(allcpu) <= 0.3
            out.append(f"| {name}, CPU s per 1M rows ≤ 0.3 (every process) | **{fmt(allcpu, '{:.2f}')}** | "
                       f"{'met' if ok else '**missed**'}: serve alone {fmt(serve, '{:.2f}')}, the rest is the "
                       f"consumers reading and summing every byte |")
    goal("shmloader / PyTorch DataLoader with worker processes", "shmloader", "torch", 5)
    goal("shmloader / DataLoader with num_workers=0", "shmloader", "torch in-process", 2)
    goal("shmloader cold / raw pyarrow decode of the same columns", "shmloader", "raw pyarrow decode", 1.0)
    cold = [r for r in recs if r["contender"] == "shmloader" and not r["step_ms"]]
    if cold:
        allcpu = [r["cpu_per_mrow"] for r in cold]
        serve = [r["cpu"]["producer"] / r["rows"] * 1e6 for r in cold]
        ok = statistics.median(allcpu) <= 1.2
        out.append(f"| shmloader cold, CPU s per 1M rows ≤ 1.2 (every process) | **{fmt(allcpu, '{:.2f}')}** | "
                   f"{'met' if ok else '**missed**'}: serve alone {fmt(serve, '{:.2f}')}, the rest is the "
                   f"consumers reading and summing every byte |")
    goal("shmloader / raw arrow-go decode, cold epoch", "shmloader", "raw arrow-go decode", 0.7)
    xs = ratios(recs, "raw arrow-go decode", "raw pyarrow decode")
    if xs:
        out.append(f"| arrow-go decode / pyarrow decode, same columns (for the cause) | {fmt(xs, '{:.2f}', '×')} | |")
    xs = ratios(recs, "shmloader", "memcpy")
    if xs:
        out.append(f"| shmloader / memcpy of the same bytes (for scale) | {fmt(xs, '{:.3f}', '×')} | |")
    out += ["", f"Throughput runs (consumers read every byte and take no step) and the data stall "
            f"(the same run with a {res['step_ms']:g} ms simulated step per batch, i.e. a demand of "
            f"{2 * 1024 / res['step_ms'] * 1000:,.0f} rows/s from the 2 ranks):", "",
            "| contender | rows/s | MB/s | CPU s per 1M rows | peak RSS, MiB | first batch, s | data stall | checksum |",
            "|---|---|---|---|---|---|---|---|"]
    notes = [
        "",
        "- Every run starts from the same point: the consumer processes are up with numpy, pyarrow and "
        "torch imported; then serve (for shmloader) and the loaders start. rows/s and MB/s (of tensors) "
        "cover the whole epoch from there to the last batch of both ranks; first batch is the time "
        "from there until every rank holds a batch.",
        "- CPU counts every process of the contender from that start: serve, the DataLoader workers, "
        "and the consumer processes (Petastorm's reader threads run inside them).",
        "- Peak RSS is each process's high-water mark (the largest of each role is shown; "
        "bench/results/peers.json has every process's). A page shared by several processes "
        "counts in each: the ring slots shmloader's consumers map, the pages a DataLoader worker "
        "shares with the trainer it was forked from. *In all* is the run's memory with every "
        "page counted once: the largest sum of the processes' PSS, sampled every 0.2 s.",
        "- Checksum: rows and the bit sums of every tensor, against shmloader's (bench/peers/work.py).",
    ]
    for c in ORDER:
        rs = thr.get(c)
        if not rs:
            continue
        ttfb = [r["ttfb"] for r in rs if r.get("ttfb") is not None]
        st = [r["stall_pct"] for r in stall.get(c, [])]
        checks = {r.get("checksum") for r in rs + stall.get(c, []) if r.get("checksum")}
        check = "–" if not checks else ("same rows and sums" if checks <= {"ok", "reference"} else "; ".join(
            sorted(x for x in checks if x not in ("ok", "reference"))))
        out.append(
            f"| {LABEL[c]} | **{fmt([r['rows_per_s'] for r in rs])}** | {fmt([r['mb_per_s'] for r in rs], '{:,.0f}')} "
            f"| {cpu_cell(rs)} | {rss_cell(rs) if c != 'memcpy' else '–'} | {fmt(ttfb, '{:.2f}')} "
            f"| {fmt(st, '{:.0f}', ' %')} | {check} |"
        )
    out += notes
    fails: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for f in res.get("failures", []):
        fails[f["contender"]].append(f)
    for c, fs in fails.items():
        runs = len(thr.get(c, [])) + len(stall.get(c, [])) + len(fs)
        out.append(f"- **{LABEL.get(c, c)} delivered wrong data in {len(fs)} of {runs} runs** (each such run "
                   f"was recorded and run again): {fs[0]['what'].split(': ', 1)[1].split(' (see')[0]}.")
    if res.get("tuning"):
        out += ["", "Tuning (one run each, before the rounds; the fastest is used):", ""]
        by: dict[str, list[str]] = defaultdict(list)
        for r in res["tuning"]:
            if r.get("workers") is not None:
                by[r["contender"]].append(f"{r['workers']}: {r['rows_per_s']:,.0f}")
        for c, cells in by.items():
            out.append(f"- {LABEL[c]}, rows/s by workers per rank: {'; '.join(cells)}")
    out += ["", "![throughput](plots/throughput.png)", "![cost](plots/cost.png)",
            "![first batch and stall](plots/latency.png)", "", END]
    return "\n".join(out)


def plots(res: dict[str, Any], outdir: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(outdir, exist_ok=True)
    thr, stall = group(res["records"], False), group(res["records"], True)
    names = [c for c in ORDER if c in thr]
    colors = ["#1f77b4" if c == "shmloader" else "#999999" if c in CEILINGS else "#ff7f0e"
              for c in names]
    sub = f"{res['rows']:,} rows, {res['machine']['cpus']} vCPUs, median of {res['rounds']} round(s) (bars: min–max)"

    def bars(ax: Any, cs: list[str], vals: list[list[float]], cols: list[str], ylabel: str, log: bool = False) -> None:
        ms = [statistics.median(v) for v in vals]
        err = [[m - min(v) for m, v in zip(ms, vals)], [max(v) - m for m, v in zip(ms, vals)]]
        ax.bar(range(len(cs)), ms, yerr=err, color=cols, capsize=4)
        ax.set_xticks(range(len(cs)), [SHORT[c] for c in cs], fontsize=7)
        ax.set_ylabel(ylabel)
        if log:
            ax.set_yscale("log")
        for i, m in enumerate(ms):
            ax.annotate(f"{m:,.0f}" if m >= 100 else f"{m:.2f}", (i, m), ha="center", va="bottom", fontsize=7,
                        xytext=(0, 3), textcoords="offset points")

    fig, ax = plt.subplots(figsize=(9, 4.5))
    bars(ax, names, [[r["rows_per_s"] for r in thr[c]] for c in names], colors, "rows/s (log scale)", log=True)
    ax.set_title(f"Throughput to 2 consumer processes reading every byte\n{sub}", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, "throughput.png"), dpi=110)
    plt.close(fig)

    loaders = [c for c in names if c not in ("memcpy",)]
    lcolors = [colors[names.index(c)] for c in loaders]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(14, 4.8))
    bars(a1, loaders, [[r["cpu_per_mrow"] for r in thr[c]] for c in loaders], lcolors, "CPU seconds per 1M rows")
    a1.set_title("CPU, all processes (producer, workers, consumers)", fontsize=10)
    bars(a2, loaders, [[r["rss_total_kib"] / 1024 for r in thr[c]] for c in loaders], lcolors, "MiB")
    a2.set_title("Memory of the run: largest sum of every process's PSS", fontsize=10)
    fig.suptitle(sub, fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, "cost.png"), dpi=110)
    plt.close(fig)

    fed = [c for c in names if c not in CEILINGS]
    fcolors = [colors[names.index(c)] for c in fed]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(14, 4.8))
    bars(a1, fed, [[r["ttfb"] for r in thr[c]] for c in fed], fcolors, "seconds")
    a1.set_title("Time to first batch (start to every rank fed)", fontsize=10)
    sc = [c for c in fed if c in stall]
    bars(a2, sc, [[r["stall_pct"] for r in stall[c]] for c in sc], [colors[names.index(c)] for c in sc], "% of the time")
    a2.set_title(f"Data stall with a {res['step_ms']:g} ms step per batch", fontsize=10)
    a2.set_ylim(0, 100)
    fig.suptitle(sub, fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, "latency.png"), dpi=110)
    plt.close(fig)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", default=os.path.join(REPO, "bench", "results", "peers.json"))
    ap.add_argument("--markdown", default=os.path.join(REPO, "bench", "RESULTS.md"))
    ap.add_argument("--plots", default=os.path.join(REPO, "bench", "plots"))
    args = ap.parse_args()
    with open(args.results) as f:
        res = json.load(f)
    section = markdown(res)
    with open(args.markdown) as f:
        text = f.read()
    if BEGIN not in text or END not in text:
        print(f"report: {args.markdown} has no {BEGIN} ... {END} markers", file=sys.stderr)
        return 1
    head, rest = text.split(BEGIN, 1)
    text = head + section + rest.split(END, 1)[1]
    with open(args.markdown, "w") as f:
        f.write(text)
    plots(res, args.plots)
    print(f"report: wrote the table into {args.markdown} and 3 plots into {args.plots}")
    print(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
