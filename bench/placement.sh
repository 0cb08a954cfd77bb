#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/parse with its items array at other offsets from a page: where the
# array lies against the ring moves both batch pulls by up to 10% on the
# machines here (bench/RESULTS.md, session 9). Builds one bench/parse per
# offset as bench/callgrind.sh does, runs them in turn ROUNDS times, and
# prints the medians of the hot tracepoint target line's x walk.
#   bench/placement.sh SRCDIR BUILDDIR [ROUNDS [OFFSET...]]
# OFFSETs are bytes, multiples of 8 (default 0 8 40 1024 2048 3000).
set -eu
src=$1 b=$2
rounds=${3:-5}
[ $# -lt 3 ] || shift 3
[ $# -gt 0 ] || set -- 0 8 40 1024 2048 3000
out=${TMPDIR:-/tmp}/prplace.$$
mkdir -p "$out"
trap 'rm -rf "$out"' EXIT

for at in "$@"; do
	gcc -std=c11 -O2 -pthread -D_GNU_SOURCE -DITEMS_AT="$at" -I"$src/core/include" \
		-I"$src/core" -I"$src/tests/support" -I"$src/tests" -I"$src/bench" -I"$b" \
		"$src/bench/parse.c" "$src/bench/benchutil.c" "$src/tests/support/synthsession.c" \
		"$b/tests/.libs/libprtest.a" "$b/core/.libs/libperfring-core.a" -o "$out/parse$at"
done
r=0
while [ $r -lt "$rounds" ]; do
	for at in "$@"; do
		rm -f "$out/r.md"
		PERFRING_RESULTS="$out/r.md" "$out/parse$at" >/dev/null
		sed -n "s/^Target (hot.*: parse_for_cpu \([0-9.]*\).*present fields only \([0-9.]*\).*with zeros \([0-9.]*\).*/$at \1 \2 \3/p" \
			"$out/r.md" >>"$out/all.txt"
	done
	r=$((r + 1))
done
echo '| items at | parse_for_cpu | batch pull, present only | batch pull with zeros |'
echo '|---|---|---|---|'
for at in "$@"; do
	med() { awk -v at="$at" -v f="$1" '$1 == at { print $f }' "$out/all.txt" | sort -n |
		awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
	echo "| page + $at | $(med 2) | $(med 3) | $(med 4) |"
done
