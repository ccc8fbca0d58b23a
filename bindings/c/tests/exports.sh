#!/bin/sh
# The shared library exports exactly the functions declared in shmloader.h.
lib=$1
hdr=$(dirname "$0")/../shmloader.h
syms=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ { print $3 }' | sort)
want=$(grep -o '\bshml_[a-z_]*(' "$hdr" | tr -d '(' | sort -u)
extra=$(echo "$syms" | grep -v '^shml_[a-z]')
if [ -z "$extra" ]; then echo "ok - only shml_* symbols exported"; else
  echo "not ok - unexpected exports: $extra"
fi
if [ "$syms" = "$want" ]; then echo "ok - every shmloader.h function exported, nothing else"; else
  echo "not ok - exports differ from shmloader.h"
  echo "#   exported: $(echo $syms)"
  echo "#   declared: $(echo $want)"
fi
