#!/bin/sh
# The example program, shml-checksum (both builds), against the C test producer,
# shml-fakeprod: counts and the payload's CRC-32 equal what the producer published, the
# schema is printed, and errors (producer killed, no producer, no batch in time, bad
# arguments) give their message and exit status. bindings/python/tests/test_c_example.py
# checks every tensor against a real `shmloader serve`.
# Usage: sh tests/checksum.sh <abs build dir>
B=$1
FP=$B/c-tests/shml-fakeprod
dir=$(mktemp -d /dev/shm/shml-checksum-XXXXXX)
trap 'rm -rf "$dir"' EXIT

is() { # got want what
  if [ "$1" = "$2" ]; then echo "ok - $3"; else
    echo "not ok - $3"
    echo "#   want: $2"
    echo "#   got:  $1"
  fi
}
# Run in the background; exec so that $! is the producer itself.
produce() { exec "$FP" --dir "$dir" --rank 1 --ranks 2 --depth 4 --rows 16 --row-bytes 256 "$@"; }
# The fields of the producer's summary line `rank=R batches=N rows=M crc32=X`.
field() { sed -n "s/.*$1=\([0-9a-f]*\).*/\1/p" "$dir/p"; }

for tool in "$B/bin/shml-checksum" "$B/asan/shml-checksum"; do
  t=$(basename "$(dirname "$tool")")/shml-checksum
  check() { "$tool" "$1" 1 --dir "$dir" --timeout 5; }

  # One epoch: the producer's crc32 covers every payload byte it published, in order.
  produce --job one --batches 40 --var-rows 1 >"$dir/p" &
  p=$!
  check one >"$dir/c" 2>"$dir/e"
  rc=$?
  wait $p
  is "$rc $? $(cat "$dir/e")" "0 0 " "$t: exits 0 at the end of the stream, nothing on stderr"
  is "$(field crc32 | grep -c '^[0-9a-f]\{8\}$')" 1 "$t: the producer's summary has a crc32"
  is "$(grep '^epoch 0:' "$dir/c" | cut -d, -f1,2)" \
    "epoch 0: $(field batches) batches, $(field rows) rows" "$t: batches and rows of the epoch"
  is "$(awk '$1 == "payload" && $2 == "crc32" { print $3 }' "$dir/c")" "$(field crc32)" \
    "$t: payload CRC-32 equals the producer's"
  is "$(grep -c '^  x  *float32  *\[2, 3\]  *24 bytes per row$' "$dir/c")" 1 \
    "$t: schema line of a [2, 3] float32 tensor"
  is "$(grep -c '^job one rank 1 of 2 ' "$dir/c")" 1 "$t: prints the ring's info"

  produce --job three --batches 10 --epochs 3 >"$dir/p" &
  p=$!
  check three >"$dir/c" 2>"$dir/e"
  rc=$?
  wait $p
  is "$rc $(grep -c '^epoch [012]: 10 batches, 160 rows' "$dir/c")" "0 3" "$t: 3 epochs of 10 batches"
  is "$(grep '^total:' "$dir/c" | cut -d, -f1-3)" "total: 3 epochs, 30 batches, 480 rows" \
    "$t: totals"

  produce --job kill --epochs 0 --interval-us 1000 >/dev/null &
  p=$!
  check kill >/dev/null 2>"$dir/e" &
  c=$!
  sleep 0.5
  kill -9 $p
  wait $c
  rc=$?
  wait $p 2>/dev/null
  is "$rc $(grep -c '^shml-checksum: the producer (pid [0-9]*) died' "$dir/e")" "1 1" \
    "$t: producer killed with -9: message, exit 1"
  rm -f "$dir"/shmloader-*

  produce --job slow --batches 3 --interval-us 3000000 >/dev/null &
  p=$!
  "$tool" slow 1 --dir "$dir" --timeout 0.5 >/dev/null 2>"$dir/e"
  rc=$?
  kill -9 $p
  wait $p 2>/dev/null
  is "$rc $(grep -c '^shml-checksum: no batch within 0.5 s' "$dir/e")" "1 1" \
    "$t: no batch in time: message, exit 1"
  rm -f "$dir"/shmloader-*

  "$tool" none --dir "$dir" --timeout 0.2 >/dev/null 2>"$dir/e"
  is "$? $(grep -c '^shml-checksum: no producer for job none rank 0 within 0.2 s' "$dir/e")" \
    "1 1" "$t: no producer: message, exit 1"
  "$tool" 'bad/name' --dir "$dir" --timeout 0.2 >/dev/null 2>"$dir/e"
  is "$? $(cut -d: -f2,3 "$dir/e")" "1  attach: SHML_EINVAL" "$t: invalid job name: SHML_EINVAL"

  "$tool" -h >"$dir/c" 2>"$dir/e"
  is "$? $(head -c 20 "$dir/c") $(wc -c <"$dir/e")" "0 usage: shml-checksum 0" "$t -h: usage on stdout"
  for args in "" "job one" "job 1 2" "job --timeout 0" "job --timeout x" "job --dir" "job --bad"; do
    # shellcheck disable=SC2086 # split on purpose
    "$tool" $args >"$dir/c" 2>"$dir/e"
    is "$? $(wc -c <"$dir/c") $(grep -c '^usage: ' "$dir/e")" "2 0 1" "$t $args: usage on stderr, exit 2"
  done
done
