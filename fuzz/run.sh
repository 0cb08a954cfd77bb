#!/bin/sh
# SPDX-License-Identifier: MIT
# Builds every libFuzzer target fuzz/fuzz_*.c with clang and runs each for
# SECONDS (default 60) over a copy of fuzz/corpus/<name>. Exits 1 on any
# build failure, crash, leak, timeout or OOM.
#
#   fuzz/run.sh [SECONDS]
#   env: FUZZ_BUILD (default fuzz/build), CLANG (default clang), FUZZ_JOBS
#        (targets run at once, default 2),
#        FUZZ_TARGETS (e.g. "ring cpulist"; default all), FUZZ_TIMEOUT
#        (seconds per input, default 10), FUZZ_FLAGS (extra libFuzzer flags)
set -u

secs=${1:-60}
case $secs in
'' | *[!0-9]*) echo "usage: $0 [SECONDS]" >&2; exit 2 ;;
esac

cd "$(dirname "$0")/.." || exit 1
build=${FUZZ_BUILD:-fuzz/build}
clang=${CLANG:-clang}
# -Itests/support: the test-support library's headers (synth.h, synthsession.h).
cflags="-std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
	-D_GNU_SOURCE -DPERFRING_BUILDING -Icore/include -Icore -Itests/support"

# The library sources each target links; a new target may instead name them
# in a comment line "fuzz-sources: a.c b.c".
sources_for() {
	case $1 in
	ring) echo tests/support/synth.c core/kernel/ring.c core/decode/record.c \
		core/decode/profile.c core/base/sys.c ;;
	tracefs) echo core/kernel/tracefs.c core/kernel/format.c core/decode/field.c \
		core/base/err.c core/base/sys.c ;;
	cpulist) echo core/kernel/cpulist.c core/base/sys.c ;;
	parse) echo tests/support/synthsession.c tests/support/synth.c \
		$(find core -name '*.c' -not -path 'core/include/*' | sort) ;;
	*) sed -n 's/.*fuzz-sources:[[:space:]]*\([^*]*\).*/\1/p' "fuzz/fuzz_$1.c" | head -n 1 ;;
	esac
}

# Prints one libFuzzer final stat (-print_final_stats=1) from a log.
stat_of() {
	sed -n "s/^stat::$1:[[:space:]]*//p" "$2" | tail -n 1
}

mkdir -p "$build/artifacts" || exit 1
summary=$build/summary.txt
printf '%-10s %-6s %12s %14s\n' target result execs/s "total execs" >"$summary"
failed=0

run_target() {
	name=$1
	src=fuzz/fuzz_$name.c
	bin=$build/fuzz_$name
	log=$build/fuzz_$name.log
	corpus=$build/corpus/$name

	srcs=$(sources_for "$name")
	if [ -z "$srcs" ]; then
		echo "fuzz_$name: no sources known (add a 'fuzz-sources:' line)" >&2
		return 1
	fi
	echo "== fuzz_$name: building"
	# shellcheck disable=SC2086 # word splitting of the flag and source lists is intended
	if ! $clang $cflags "$src" $srcs -o "$bin"; then
		printf '%-10s %-6s\n' "$name" BUILD >>"$summary"
		return 1
	fi

	rm -rf "$corpus" && mkdir -p "$corpus" || return 1
	if [ -d "fuzz/corpus/$name" ]; then
		cp -R "fuzz/corpus/$name/." "$corpus/" || return 1
	fi
	echo "== fuzz_$name: running ${secs}s over $(find "$corpus" -type f | wc -l) seeds"
	# shellcheck disable=SC2086
	"$bin" -max_total_time="$secs" -timeout="${FUZZ_TIMEOUT:-10}" -print_final_stats=1 \
		-artifact_prefix="$build/artifacts/fuzz_$name-" ${FUZZ_FLAGS:-} "$corpus" >"$log" 2>&1
	rc=$?
	execs=$(stat_of number_of_executed_units "$log")
	rate=$(stat_of average_exec_per_sec "$log")
	result=ok
	[ "$rc" -eq 0 ] || result=FAIL
	printf '%-10s %-6s %12s %14s\n' "$name" "$result" "${rate:-?}" "${execs:-?}" >>"$summary"
	echo "== fuzz_$name: $result, ${rate:-?} execs/s, ${execs:-?} execs (log: $log)"
	if [ "$rc" -ne 0 ]; then
		grep -E 'ERROR|SUMMARY|Test unit written|timeout|out-of-memory' "$log" | head -n 20 >&2
		return 1
	fi
}

targets=${FUZZ_TARGETS:-}
if [ -z "$targets" ]; then
	for f in fuzz/fuzz_*.c; do
		[ -e "$f" ] || continue
		n=${f#fuzz/fuzz_}
		targets="$targets ${n%.c}"
	done
fi
# FUZZ_JOBS targets at a time (default 2, this machine's cores): each
# fuzzer is one process on one core, and CI's time is short.
jobs=${FUZZ_JOBS:-2}
running=0
for t in $targets; do
	if [ ! -f "fuzz/fuzz_$t.c" ]; then
		echo "fuzz_$t: fuzz/fuzz_$t.c not found" >&2
		failed=1
		continue
	fi
	(run_target "$t" >"$build/run_$t.out" 2>&1; echo $? >"$build/run_$t.rc") &
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		wait
		running=0
	fi
done
wait
for t in $targets; do
	[ -f "$build/run_$t.rc" ] || continue
	cat "$build/run_$t.out"
	[ "$(cat "$build/run_$t.rc")" = 0 ] || failed=1
	rm -f "$build/run_$t.out" "$build/run_$t.rc"
done

echo
cat "$summary"
exit "$failed"
