#!/usr/bin/env bash
# make demo: generate the default dataset if absent, serve it with demo.yaml to two
# trainer processes (train.py), and print each rank's throughput and a summary.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$REPO"
BIN=${SHMLOADER_BIN:-$REPO/build/bin/shmloader}
PY=${PYTHON:-$REPO/.venv/bin/python}
DATA=${DEMO_DATA:-$REPO/build/demo-data}
JOB=demo-$$
RANKS=2
CACHE=${DEMO_CACHE:-$REPO/build/demo-cache}

# .complete marks a finished gen; without it, gen rewrites the dataset's *.parquet files
# (and nothing else in the directory).
if [ ! -f "$DATA/.complete" ]; then
  echo "== generating the demo dataset in $DATA (once)"
  "$BIN" gen --out "$DATA" --overwrite
  touch "$DATA/.complete"
fi
"$BIN" inspect "$DATA" | tail -n 4

# Start from an empty cache, so that epoch 0 decodes (and fills it) and epoch 1 reads
# from it: the difference is what the cache buys.
if [ -e "$CACHE" ]; then
  "$BIN" cache clear "$CACHE"
fi

echo "== shmloader serve (job $JOB, $RANKS ranks, cache in $CACHE)"
"$BIN" serve bindings/python/examples/demo.yaml --dataset "$DATA" --job "$JOB" --ranks $RANKS --cache-dir "$CACHE" &
SERVE=$!
trap 'kill $SERVE 2>/dev/null || true' EXIT

OUT=$(mktemp -d)
pids=()
for r in $(seq 0 $((RANKS - 1))); do
  "$PY" bindings/python/examples/train.py --job "$JOB" --rank "$r" --json >"$OUT/rank$r" &
  pids+=($!)
done
status=0
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || status=$?
  grep -v '^{' "$OUT/rank$i" || true
done
wait $SERVE || status=$?
trap - EXIT
[ $status -eq 0 ] || { echo "demo: failed (exit $status)"; exit $status; }

echo "== summary"
"$PY" - "$OUT"/rank* <<'PY'
import json, sys
ranks = [json.loads(l) for f in sys.argv[1:] for l in open(f) if l.startswith("{")]
rows = sum(r["rows"] for r in ranks)
secs = max(r["seconds"] for r in ranks)
print(f"{len(ranks)} ranks read {rows:,} rows in {secs:.1f} s: {rows / secs:,.0f} rows/s in total, "
      f"{sum(r['mb_per_s'] for r in ranks):.0f} MB/s; waited for data "
      f"{', '.join(str(r['wait_pct']) + '%' for r in ranks)} of the time; model {ranks[0]['model']}")
for e in range(min(len(r["epochs"]) for r in ranks)):
    n = sum(r["epochs"][e]["rows"] for r in ranks)
    s = max(r["epochs"][e]["seconds"] for r in ranks)
    how = "decoded, filling the cache" if e == 0 else "from the cache"
    print(f"epoch {e}: {n / s:,.0f} rows/s in total ({how})")
PY
rm -rf "$OUT"
