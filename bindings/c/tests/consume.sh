#!/bin/sh
# shml-consume (both builds) against the C test producer, shml-fakeprod: the summary
# line equals the producer's, and the exit codes are the documented ones.
# Usage: sh tests/consume.sh <abs build dir>
B=$1
FP=$B/c-tests/shml-fakeprod
dir=$(mktemp -d /dev/shm/shml-consume-XXXXXX)
trap 'rm -rf "$dir"' EXIT

is() { # got want what
  if [ "$1" = "$2" ]; then echo "ok - $3"; else
    echo "not ok - $3"
    echo "#   want: $2"
    echo "#   got:  $1"
  fi
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# Run in the background; exec so that $! is the producer itself.
produce() { exec "$FP" --dir "$dir" --rank 1 --ranks 2 --depth 4 --rows 16 --row-bytes 256 "$@"; }

for tool in "$B/bin/shml-consume" "$B/asan/shml-consume"; do
  t=$(basename "$(dirname "$tool")")/shml-consume
  consume() { "$tool" --dir "$dir" --rank 1 --timeout-ms 5000 "$@"; }

  produce --job plain --batches 50 --epochs 2 --var-rows 1 >"$dir/p" &
  p=$!
  consume --job plain --each >"$dir/c"
  rc=$?
  wait $p
  is "$rc $?" "0 0" "$t: exits 0 at end of stream; the producer saw its ring drained"
  is "$(tail -n 1 "$dir/c")" "$(cat "$dir/p")" "$t: summary equals the producer's"
  is "$(grep -cE '^batch epoch=[01] step=[0-9]+ rows=[0-9]+ crc32=[0-9a-f]{8}$' "$dir/c")" 100 \
    "$t: --each prints one line per batch"

  produce --job hold --batches 40 >"$dir/p" &
  p=$!
  consume --job hold --hold 2 --sleep-us 200 >"$dir/c"
  rc=$?
  wait $p
  is "$rc $?" "0 0" "$t --hold 2: exits 0"
  is "$(cat "$dir/c")" "$(cat "$dir/p")" "$t --hold 2: summary equals the producer's"

  produce --job seek --batches 50 >"$dir/p" &
  p=$!
  consume --job seek --seek 0 40 --each >"$dir/c"
  rc=$?
  wait $p
  is "$rc $(head -n 1 "$dir/c" | cut -d' ' -f2,3) $(tail -n 1 "$dir/c" | cut -d' ' -f2)" \
    "0 epoch=0 step=40 batches=10" "$t --seek 0 40: steps 40..49 delivered"

  produce --job noseek --batches 5 --no-seek 1 >/dev/null &
  p=$!
  consume --job noseek --seek 0 2 >"$dir/c" 2>"$dir/e"
  rc=$?
  wait $p
  is "$rc $? $(cat "$dir/c")$(cat "$dir/e")" \
    "1 0 shml-consume: SHML_ESEEK: seek not answered: the producer finished its stream before it saw the request" \
    "$t --seek to a producer that never answers: exit 1 with SHML_ESEEK, not a silent end"

  ("$FP" --dir "$dir" --job ranks --rank 0 --ranks 2 --depth 4 --rows 1 --row-bytes 8 \
    --batches 100000 >/dev/null) &
  p=$!
  start=$(now_ms)
  "$tool" --dir "$dir" --job ranks --rank 5 --timeout-ms 5000 >/dev/null 2>"$dir/e"
  rc=$?
  took=$(($(now_ms) - start))
  kill -9 $p
  wait $p 2>/dev/null
  is "$rc $(cut -d: -f2 "$dir/e")" "1  SHML_ERANK" "$t --rank 5 of a 2-rank job: exit 1 with SHML_ERANK"
  is "$([ "$took" -lt 2000 ] && echo at-once || echo "after $took ms")" at-once \
    "$t: ... at once, not at the 5 s timeout"

  produce --job max --batches 50 >/dev/null &
  p=$!
  consume --job max --max-batches 7 >"$dir/c"
  rc=$?
  kill -9 $p
  wait $p 2>/dev/null
  is "$rc $(cut -d' ' -f2,3 "$dir/c")" "0 batches=7 rows=112" "$t --max-batches 7"

  produce --job crc --batches 50 --bad-crc-step 3 >/dev/null &
  p=$!
  consume --job crc >"$dir/c" 2>"$dir/e"
  rc=$?
  kill -9 $p
  wait $p 2>/dev/null
  is "$rc $(grep -c 'epoch=0 step=3 row=0' "$dir/e")" "5 1" "$t: crc mismatch exits 5 naming the row"

  produce --job kill --epochs 0 --interval-us 1000 >/dev/null &
  p=$!
  "$tool" --dir "$dir" --rank 1 --job kill --timeout-ms 20000 >"$dir/c" 2>"$dir/e" &
  c=$!
  sleep 0.5
  kill -9 $p
  t0=$(now_ms)
  wait $c
  rc=$?
  ms=$(($(now_ms) - t0))
  wait $p 2>/dev/null
  is "$rc $(cat "$dir/e")" "3 shml-consume: SHML_EGONE: the producer died or stopped" \
    "$t: producer killed with -9: exit 3"
  is "$([ $ms -lt 2000 ] && echo fast)" fast "$t: ... within 2 s ($ms ms)"
  rm -f "$dir"/shmloader-*

  consume --job none --timeout-ms 300 2>"$dir/e"
  is "$? $(cut -d: -f2 "$dir/e")" "4  SHML_ETIMEOUT" "$t: no producer: exit 4"
  "$tool" --job x >/dev/null 2>&1
  is "$?" 2 "$t: usage error: exit 2"
  "$tool" --job x --rank one >/dev/null 2>&1
  is "$?" 2 "$t: bad number: exit 2"
  consume --job 'bad/name' 2>/dev/null
  is "$?" 1 "$t: invalid job name: exit 1"
done
