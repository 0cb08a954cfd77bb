#!/bin/sh
# SPDX-License-Identifier: MIT
# perfring-watch --print --order-window (TAP): hostile values are usage
# errors; the window reaches the session and the loop (the stderr note says
# which window, and a two-CPU getpid storm prints in time order on every
# loop: each CPU's ring is delivered on its own without it).

top_builddir=${top_builddir:-.}
W="$top_builddir/tools/perfring-watch"
X="$top_builddir/tools/perfring-exporter"
G="$top_builddir/tests/getpid_n"
LOOPS=$("$W" --version | sed -n 's/^loops: //p')
NLOOPS=$(echo $LOOPS | wc -w)
N_TESTS=$((11 + 2 * NLOOPS))
N=20000

n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; }
skip() { n=$((n + 1)); echo "ok $n - # SKIP $1"; }
check() { if eval "$2"; then ok "$1"; else not_ok "$1"; sed 's/^/#   /' "$T/err" | head -10; fi; }
echo "1..$N_TESTS"
T=$(mktemp -d "${TMPDIR:-/tmp}/test_watch_order.XXXXXX") || exit 1
pids=
cleanup() {
	for p in $pids; do kill -9 "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# 1-9: what --order-window refuses before anything opens (exit 2, named):
# seven hostile values, the option without --print, and the exporter.
for v in -1 1.5 abc "" " 5" 60001 18446744073709551616; do
	"$W" -s cpu-clock --print --order-window "$v" -d 1 >/dev/null 2>"$T/err"
	rc=$?
	check "--order-window '$v': exit 2, the range named (rc $rc)" \
		'[ $rc = 2 ] && grep -q -- "--order-window: .* is not a number from 0 to 60000" "$T/err"'
done
"$W" -s cpu-clock --order-window 5 -d 1 >/dev/null 2>"$T/err"
rc=$?
check "--order-window without --print: exit 2 (rc $rc)" \
	'[ $rc = 2 ] && grep -q -- "--order-window needs --print" "$T/err"'
"$X" -s cpu-clock --order-window 5 -d 1 >/dev/null 2>"$T/err"
rc=$?
check "perfring-exporter --order-window: exit 2 (rc $rc)" '[ $rc = 2 ]'

if [ "$(id -u)" != 0 ] || [ "$(nproc)" -lt 2 ]; then
	while [ $n -lt $N_TESTS ]; do skip "needs root and two CPUs"; done
	exit 0
fi

# 10-11: the note says which window; a 60 s window still ends at once (stop,
# then one merged parse delivers what is kept).
timeout -k 5 30 "$W" -s cpu-clock --print -d 0.3 >/dev/null 2>"$T/err"
rc=$?
check "default: exit 0, the note says 10 ms (rc $rc)" \
	'[ $rc = 0 ] && grep -q "time-ordered across CPUs with a 10 ms window" "$T/err"'
start=$(date +%s)
timeout -k 5 30 "$W" -s cpu-clock -c 0 --print --order-window 60000 -d 0.5 >"$T/out" 2>"$T/err"
rc=$?
secs=$(($(date +%s) - start))
lines=$(wc -l <"$T/out")
check "--order-window 60000 -d 0.5: exit 0 within 5 s, its lines all printed at the end ($lines, ${secs} s)" \
	'[ $rc = 0 ] && [ $secs -le 5 ] && [ "$lines" -gt 0 ] &&
	 grep -q "with a 60000 ms window" "$T/err"'

# A storm: two getpid_n, one on CPU 0 and one on CPU 1, released together
# once the watch runs; 512 pages hold each CPU's records whole. $1 = the
# loop, the rest = options. Sets: rc, lines, lost, cpus, back (lines older than
# the line before them).
storm() {
	loop=$1
	shift
	mkfifo "$T/go1" "$T/go2"
	taskset -c 0 "$G" $N 0 "$T/go1" & g1=$!
	taskset -c 1 "$G" $N 0 "$T/go2" & g2=$!
	pids="$pids $g1 $g2"
	: >"$T/err"    # the last run's note must not release this one's calls
	timeout -k 5 60 "$W" --loop "$loop" -e syscalls:sys_enter_getpid \
		--filter "common_pid == $g1 || common_pid == $g2" --print --pages 512 "$@" -d 50 \
		>"$T/out" 2>"$T/err" & wp=$!
	pids="$pids $wp"
	i=0
	while ! grep -q "^perfring-watch: --print" "$T/err" && [ $i -lt 200 ]; do
		i=$((i + 1))
		sleep 0.1
	done
	: >"$T/go1" & : >"$T/go2" & wait $g1 $g2
	sleep 0.3
	kill -INT $wp
	wait $wp
	rc=$?
	rm -f "$T/go1" "$T/go2"
	lines=$(wc -l <"$T/out")
	lost=$(sed -n 's/^perfring-watch: [0-9]* samples, \([0-9]*\) lost$/\1/p' "$T/err")
	cpus=$(awk '{print $3}' "$T/out" | sort -u | tr -d '\n')
	back=$(awk '{t = $4; sub(":", "", t); if (NR > 1 && t + 0 < prev) b++; prev = t + 0}
		END {print b + 0}' "$T/out")
}

for loop in $LOOPS; do
	storm "$loop"
	check "--loop $loop, default window: exit 0, lines + lost = $((2 * N)), from CPUs 0 and 1 (rc $rc, $lines + $lost, $cpus)" \
		'[ $rc = 0 ] && [ -n "$lost" ] && [ $((lines + lost)) = $((2 * N)) ] && [ "$cpus" = "[000][001]" ]'
	check "--loop $loop, default window: every line in time order ($back back)" '[ "$back" = 0 ]'
	storm "$loop" --order-window 0
	echo "# --loop $loop --order-window 0: $back of $lines lines older than the one before"
done
