#!/usr/bin/env bash
# Transport benchmarks (issue: shared-memory transport). Run through `make bench-transport`, which
# builds everything first. Prints every figure bench/RESULTS.md quotes, all from one run:
#   1. in-process Go benchmarks: handoff, ring throughput, memcpy ceilings;
#   2. cross-process handoff of empty batches to Go, C and Python consumers;
#   3. cross-process throughput of 1 MiB and 16 MiB batches to Go and C consumers.
#   4. the spin before a sleep (SHMLOADER_SPIN_US): 1 MiB batches, 100 us against 1 ms.
# ROUNDS (default 3) repeats the cross-process runs; BATCHES scales the handoff runs;
# SECTIONS (default "1 2 3 4") picks sections.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${SHMLOADER_BIN:-build/bin/shmloader}
CBENCH=build/bin/shml-bench
PY=.venv/bin/python
ROUNDS=${ROUNDS:-3}
BATCHES=${BATCHES:-100000}
SECTIONS=${SECTIONS:-1 2 3 4}  # 5 (torch) runs through `make bench-torch`
want() { [[ " $SECTIONS " == *" $1 "* ]]; }
export SHMLOADER_SHM_DIR=$(mktemp -d /dev/shm/shmloader-bench.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$SHMLOADER_SHM_DIR"' EXIT

echo "== machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), go $(go env GOVERSION)"
# bps: the bytes_per_s of a consumer's line. memcpy_bps MIB: bytes/s of the rotating
# memcpy of that batch size, measured now.
bps() { sed -n 's/.*bytes_per_s=\([0-9]*\).*/\1/p'; }
memcpy_bps() {
  go test -run '^$' -bench "Memcpy/${1}MiB/rotating" -benchtime 1s ./ring | awk '/^Benchmark/ {print $(NF-1) * 1e6}'
}

want 1 && echo "== 1. in-process (go test -bench)" &&
go test -run '^$' -bench 'Handoff|Throughput|Memcpy' -benchtime 2s -count "$ROUNDS" ./ring | grep -E '^Benchmark'

# run_pair NAME PRODUCER_FLAGS -- CONSUMER_CMD...: one producer and one consumer process.
run_pair() {
  local job="b$$-$RANDOM" pflags=$1; shift
  # shellcheck disable=SC2086
  "$BIN" debug-produce --job "$job" --ranks 1 --quiet --drain-timeout 60s $pflags >/dev/null &
  local prod=$!
  "$@" --job "$job"
  # The consumer stops at its count, before the end markers: stop the producer (SIGTERM is
  # a clean stop that removes its segments).
  kill -TERM "$prod" 2>/dev/null || true
  wait "$prod" || true
}

if want 2; then
echo "== 2. cross-process handoff, $BATCHES batches: empty (one 8-byte stamp tensor) and 4 tensors (id, payload, crc, t_ns)"
n=$((BATCHES + 1000))
for r in $(seq "$ROUNDS"); do
  for mode in "empty-saturated:--empty --interval-us 0" "empty-paced-20us:--empty --interval-us 20" \
    "4tensors-saturated:--interval-us 0" "4tensors-paced-20us:--interval-us 20"; do
    name=${mode%%:*} flags="--depth 64 --rows 1 --row-bytes 8 --batches $n ${mode#*:}"
    echo "round=$r mode=$name $(run_pair "$flags" "$BIN" debug-consume --batches "$BATCHES")"
    echo "round=$r mode=$name $(run_pair "$flags" "$CBENCH" --batches "$BATCHES")"
    echo "round=$r mode=$name $(run_pair "$flags" "$PY" bench/handoff.py --batches "$BATCHES")"
  done
done

fi

if want 3; then
echo "== 3. cross-process throughput: the producer copies each batch into its slot (its one copy);"
echo "   the consumer takes views (view) or also reads every byte (touch). memcpy: the same bytes copied"
echo "   in turn into 4 buffers (the ring depth), measured right before, in the same round."
for r in $(seq "$ROUNDS"); do
  for size in 1:65536:3000 16:1048576:300; do
    IFS=: read -r mib rowb nb <<<"$size"
    memcpy=$(memcpy_bps "$mib")
    echo "round=$r size=${mib}MiB memcpy_bytes_per_s=$memcpy"
    flags="--copy --depth 4 --rows 16 --row-bytes $rowb --batches $((nb + 20))"
    for mode in view touch; do
      t=""
      [ "$mode" = touch ] && t=--touch
      for c in "$BIN debug-consume" "$CBENCH"; do
        # shellcheck disable=SC2086
        line=$(run_pair "$flags" $c $t --warmup 20 --batches "$nb")
        ratio=$(awk -v a="$(bps <<<"$line")" -v b="$memcpy" 'BEGIN {printf "%.2f", a / b}')
        echo "round=$r size=${mib}MiB mode=$mode $line ratio_to_memcpy=$ratio"
      done
    done
  done
done
fi

if want 4; then
echo "== 4. spin before a sleep: 1 MiB batches, C consumer taking views, SHMLOADER_SPIN_US for both sides"
for r in $(seq "$ROUNDS"); do
  memcpy=$(memcpy_bps 1)
  for spin in 100 1000; do
    line=$(SHMLOADER_SPIN_US=$spin run_pair "--copy --depth 4 --rows 16 --row-bytes 65536 --batches 3020" \
      "$CBENCH" --warmup 20 --batches 3000)
    ratio=$(awk -v a="$(bps <<<"$line")" -v b="$memcpy" 'BEGIN {printf "%.2f", a / b}')
    echo "round=$r spin_us=$spin $line ratio_to_memcpy=$ratio"
  done
done
fi

if want 5; then
# Needs torch: `make bench-torch` runs this section with the torch tests' venv.
TPY=${TORCH_PY:-.venv-torch/bin/python}
echo "== 5. handoff through shmloader.torch next to numpy: alternating blocks of 1000 batches (4 tensors) on one stream, $BATCHES each"
cuda=$("$TPY" -c 'import torch; print(int(torch.cuda.is_available()))')
n=$((2 * BATCHES + 2000))
for r in $(seq "$ROUNDS"); do
  flags="--depth 64 --rows 1 --row-bytes 8 --batches $n --interval-us 0"
  echo "round=$r $(run_pair "$flags" "$TPY" bench/handoff.py --api paired --batches "$BATCHES")"
  if [[ $cuda == 1 ]]; then
    echo "round=$r $(run_pair "$flags" "$TPY" bench/handoff.py --api paired --pin --batches "$BATCHES")"
    echo "round=$r $(run_pair "$flags" "$TPY" bench/handoff.py --api paired --device cuda --batches "$BATCHES")"
  else
    echo "round=$r api=torch pin: not measured (torch sees no CUDA device here)"
  fi
done
fi
