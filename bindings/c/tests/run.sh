#!/bin/sh
# Runs each C test and the tool checks; counts "ok"/"not ok" lines. A test that exits
# nonzero without a failed check (a sanitizer report, a crash) counts as one failure.
# Usage: BUILD=<abs build dir> GOLDEN=<layout.golden> RESUME_TABLE=<resume.golden> \
#        sh tests/run.sh TEST...
pass=0
fail=0
log=$(mktemp)
run() {
  name=$1
  shift
  "$@" >"$log" 2>&1
  rc=$?
  cat "$log"
  p=$(grep -c '^ok ' "$log")
  f=$(grep -c '^not ok ' "$log")
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    echo "not ok - $name exited with status $rc"
    f=1
  fi
  pass=$((pass + p))
  fail=$((fail + f))
}
for t in "$@"; do
  if [ "$t" = test_layout ]; then
    run "$t" "$BUILD/c-tests/$t" "$GOLDEN"
  elif [ "$t" = test_resume ]; then
    run "$t" "$BUILD/c-tests/$t" "$RESUME_TABLE"
  else
    run "$t" "$BUILD/c-tests/$t"
  fi
done
run exports sh tests/exports.sh "$BUILD/lib/libshmloader.so"
run consume sh tests/consume.sh "$BUILD"
run checksum sh tests/checksum.sh "$BUILD"
rm -f "$log"
echo "C tests: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
