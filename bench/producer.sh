#!/usr/bin/env bash
# Producer benchmark (issue: Parquet producer). Run through `make bench-producer`, which
# builds everything first. In each round, on the same dataset and config:
#   raw   bench/rawdecode: plain arrow-go pqarrow reading the config's columns of every
#         row group on WORKERS goroutines (the decode ceiling: no checksums, no transforms,
#         no rings, no consumers);
#   serve `shmloader serve --epochs 1` with 2 Python consumers (bench/touch.py) that touch
#         one byte per page of every tensor: rows/s as the consumers see it.
# Prints each round's ratio serve/raw and the median; then a CPU profile of one serve run.
# DATA (default build/demo-data, generated if absent), CONFIG, WORKERS (default 2), ROUNDS (3).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${SHMLOADER_BIN:-build/bin/shmloader}
PY=.venv/bin/python
DATA=${DATA:-build/demo-data}
CONFIG=${CONFIG:-bindings/python/examples/demo.yaml}
WORKERS=${WORKERS:-2}
ROUNDS=${ROUNDS:-3}
export SHMLOADER_SHM_DIR=$(mktemp -d /dev/shm/shmloader-bench.XXXXXX)
OUT=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$SHMLOADER_SHM_DIR" "$OUT"' EXIT

if [ ! -f "$DATA/.complete" ]; then
  "$BIN" gen --out "$DATA" --quiet --overwrite && touch "$DATA/.complete"
fi
go build -o "$OUT/rawdecode" ./bench/rawdecode
echo "== machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), go $(go env GOVERSION)"
"$BIN" inspect "$DATA" | tail -n 4
echo "== config $CONFIG, workers $WORKERS, rounds $ROUNDS"

# serve_once [EXTRA FLAGS]: one epoch to two touch consumers; prints total rows/s.
serve_once() {
  local job="p$$-$RANDOM"
  "$BIN" serve --config "$CONFIG" --dataset "$DATA" --job "$job" --epochs 1 --workers "$WORKERS" --quiet "$@" >/dev/null &
  local srv=$!
  for r in 0 1; do "$PY" bench/touch.py --job "$job" --rank $r >"$OUT/touch$r" & done
  wait %2 %3
  wait $srv
  "$PY" -c 'import json,sys; rs=[json.load(open(f)) for f in sys.argv[1:]]; print(round(sum(r["rows"] for r in rs)/max(r["seconds"] for r in rs)), round(sum(r["bytes"] for r in rs)/max(r["seconds"] for r in rs)/1e6, 1))' "$OUT/touch0" "$OUT/touch1"
}

# One untimed pass first, so that every round reads the files from the page cache (the
# first read after other work was up to 2x slower and made round 1 an outlier).
"$OUT/rawdecode" --config "$CONFIG" --dataset "$DATA" --workers "$WORKERS" >/dev/null
ratios=()
for i in $(seq "$ROUNDS"); do
  raw=$("$OUT/rawdecode" --config "$CONFIG" --dataset "$DATA" --workers "$WORKERS")
  raw_rows=$(sed -n 's/.* s, \([0-9]*\) rows\/s.*/\1/p' <<<"$raw")
  read -r serve_rows serve_mb < <(serve_once)
  ratio=$(awk -v a="$serve_rows" -v b="$raw_rows" 'BEGIN {printf "%.2f", a / b}')
  ratios+=("$ratio")
  echo "round $i: raw $raw_rows rows/s | serve to 2 consumers $serve_rows rows/s, $serve_mb MB/s of tensors | ratio $ratio"
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{a[NR]=$1} END {printf "median ratio serve/raw: %s (min %s, max %s)\n", a[int((NR+1)/2)], a[1], a[NR]}'

echo "== CPU profile of one serve run (top 25 by flat time)"
serve_once --cpuprofile "$OUT/serve.prof" >/dev/null
go tool pprof -top -nodecount=25 "$BIN" "$OUT/serve.prof" 2>/dev/null | sed -n '4,40p'
echo "== by stage (cumulative): reading chunks (ReadChunks: pread), page decoding (Decoder.Read: decompression, levels, values), the transforms' ops (op.run, pageDict.load) and stores into records (Output.write; the one-pass forms: fuseF32AVX, Output.storeDict), arrow-go (ReadRowGroup, for columns the page path does not read), gather into the slots, GC"
go tool pprof -top -cum -nodecount=400 "$BIN" "$OUT/serve.prof" 2>/dev/null |
  grep -E 'Total samples|Reader\).ReadChunks$|Decoder\).Read$|s2Decode$|pageDict\).load$|Reader\).ReadRowGroup$|Output\).applyPages$|Output\).ApplyTo$|Output\).write$|Output\).storeDict$|fuseF32AVX$|op\).run$|server\).gather$|runtime.gcBgMarkWorker$' || true
