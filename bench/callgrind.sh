#!/bin/sh
# SPDX-License-Identifier: MIT
# Instructions per record, counted by callgrind (repeatable whatever the load
# on this machine), for the hot paths of two builds side by side:
#   bench/callgrind.sh SRCDIR BUILDDIR [SRCDIR2 BUILDDIR2]
# bench/parse's tracepoint workload through parse_for_cpu, and bench/merge's
# parse_all over K=1 and K=128 rings, fine and coarse. Each is compiled here
# from the tree's own sources with small sizes (-D overrides) and linked with
# that build's convenience libraries.
#   bench/callgrind.sh --methods SRCDIR BUILDDIR [SRCDIR2 BUILDDIR2]
# Each of bench/parse's ways to read a ring (the bare walk, parse_for_cpu,
# perfring_cpu_next, perfring_cpu_pull of 64 items, with and without
# PERFRING_PULL_PRESENT_ONLY), per record, for each of
# its three workloads: the instructions inside the method's function of
# bench/parse (its loop included) over the records it read.
set -eu
out=${TMPDIR:-/tmp}/prcg.$$
mkdir -p "$out"
trap 'rm -rf "$out"' EXIT

build() { # SRC BUILD NAME FILE DEFS -> binary
	src=$1 b=$2 name=$3 file=$4; shift 4
	supp=$b/tests/.libs/libprtest.a
	[ -f "$supp" ] || supp=$b/tests/.libs/libsynth.a
	gcc -std=c11 -O2 -pthread -D_GNU_SOURCE "$@" -I"$src/core/include" -I"$src/core" \
		-I"$src/tests/support" -I"$src/tests" -I"$src/bench" -I"$b" \
		"$src/bench/$file" "$src/bench/benchutil.c" $(ls "$src"/tests/support/synthsession.c 2>/dev/null) \
		"$supp" "$b/core/.libs/libperfring-core.a" -o "$out/$name"
}

# Ir inside FN per call of CB (one call a record).
per_record() { # BIN FN CB ARGS...
	bin=$1 fn=$2 cb=$3; shift 3
	valgrind --tool=callgrind --callgrind-out-file="$out/cg.out" --toggle-collect="$fn" \
		"$bin" "$@" >/dev/null 2>&1
	callgrind_annotate --inclusive=yes --tree=caller "$out/cg.out" 2>/dev/null |
		awk -v fn=":$fn " -v cb=":$cb " '
		function num(s) { gsub(/,/, "", s); return s + 0 }
		function times(s) { s = substr(s, match(s, /\([0-9,]+x\)/) + 1); sub(/x\).*/, "", s); return num(s) }
		# In --tree=caller, a function'"'"'s callers ("<" lines) come right before its "*" line.
		index($0, "%)  < ") { callers += times($0); next }
		index($0, "%)  *  ") && index($0, fn) && !ir { ir = num($1) }
		index($0, "%)  *  ") && index($0, cb) && !calls { calls = callers }
		{ callers = 0 }
		END { if (calls) printf "%.1f", ir / calls; else printf "?" }'
}

# Ir inside each of bench/parse's method functions, per record: the
# records are the callback's calls in the parse method, the same number
# every method reads.
methods() { # BIN CB
	bin=$1 cb=$2
	# GCC may clone a function (bench_push.isra.0): the patterns take the
	# clones, and match nothing in the library (a nested match would toggle
	# the collection off inside it).
	valgrind --tool=callgrind --callgrind-out-file="$out/cgm.out" \
		--toggle-collect='bench_walk*' --toggle-collect='bench_push*' \
		--toggle-collect='bench_next*' --toggle-collect='bench_pull*' \
		--toggle-collect='bench_present*' "$bin" >/dev/null 2>&1
	callgrind_annotate --threshold=100 --inclusive=yes --tree=caller "$out/cgm.out" 2>/dev/null |
		awk -v cb=":$cb " '
		function num(s) { gsub(/,/, "", s); return s + 0 }
		function times(s) { s = substr(s, match(s, /\([0-9,]+x\)/) + 1); sub(/x\).*/, "", s); return num(s) }
		index($0, "%)  < ") { callers += times($0); next }
		index($0, "%)  *  ") {
			for (m = 1; m <= 5; m++)
				if ($0 ~ (":" name[m] "[ .]") && !ir[m]) ir[m] = num($1)
			if (index($0, cb) && !calls) calls = callers
		}
		{ callers = 0 }
		BEGIN { name[1] = "bench_walk"; name[2] = "bench_push"; name[3] = "bench_next"
			name[4] = "bench_pull"; name[5] = "bench_present" }
		END { for (m = 1; m <= 5; m++) printf " | %s", calls ? sprintf("%.1f", ir[m] / calls) : "?" }'
}

methods_rows() { # SRC BUILD
	src=$1 b=$2
	w=0
	for cb in cb_raw cb_time cb_callchain; do
		build "$src" "$b" "parse$w" parse.c -DWORKLOAD=$w -DREPS=1 -DCOLD_BYTES='(1u<<20)' \
			-DHOT_BYTES='(256u<<10)'
		printf '| %s | %s' "$(git -C "$src" rev-parse --short HEAD)" "$cb"
		methods "$out/parse$w" "$cb"
		echo ' |'
		w=$((w + 1))
	done
}

if [ "${1:-}" = --methods ]; then
	shift
	echo '| build | workload (callback) | bare walk | parse_for_cpu | cpu_next | cpu_pull, 64 | present only, 64 |'
	echo '|---|---|---|---|---|---|---|'
	methods_rows "$1" "$2"
	[ $# -lt 4 ] || methods_rows "$3" "$4"
	exit 0
fi

row() { # SRC BUILD
	src=$1 b=$2
	build "$src" "$b" parse parse.c -DWORKLOAD=0 -DREPS=1 -DCOLD_BYTES='(1u<<20)' -DHOT_BYTES='(256u<<10)'
	build "$src" "$b" merge merge.c
	p=$(per_record "$out/parse" perfring_session_parse_for_cpu cb_raw)
	printf '| %s | %s' "$(git -C "$src" rev-parse --short HEAD)" "$p"
	for pat in --fine --coarse; do
		for k in 1 128; do
			printf ' | %s' "$(per_record "$out/merge" perfring_session_parse_all on_sample $pat 262144 $k)"
		done
	done
	echo ' |'
}

echo '| build | parse_for_cpu, tracepoint | merge fine K=1 | fine K=128 | coarse K=1 | coarse K=128 |'
echo '|---|---|---|---|---|---|'
row "$1" "$2"
[ $# -lt 4 ] || row "$3" "$4"
