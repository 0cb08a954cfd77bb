#!/bin/sh
# SPDX-License-Identifier: MIT
# examples/getpidsnoop end to end (TAP): its raw-instruction BPF program
# writes a ring-buffer record per getpid(2) call, libperfring-uv reads them
# on uv_default_loop, one line each. tests/getpid_n makes exactly N calls.
top_builddir=${top_builddir:-.}
E="$top_builddir/examples/getpidsnoop"
G="$top_builddir/tests/getpid_n"
N_TESTS=9
N=5000

n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; }
check() { if eval "$2"; then ok "$1"; else not_ok "$1"; sed 's/^/#   /' "$T/err" | head -20; fi; }
echo "1..$N_TESTS"
if [ "$(id -u)" != 0 ]; then
	while [ $n -lt $N_TESTS ]; do n=$((n + 1)); echo "ok $n - # SKIP needs root"; done
	exit 0
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/test_getpidsnoop.XXXXXX") || exit 1
pids=
cleanup() {
	for p in $pids; do kill -9 "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# Until the tool says it traces (its stderr line), at most 20 s.
wait_tracing() {
	i=0
	while ! grep -q "^Tracing" "$T/err" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 200 ] && return 1
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.1
	done
}
# Lines of the tool's output whose PID column is $1 and COMM getpid_n.
lines_of() { awk -v p="$1" '$2 == p && $4 == "getpid_n"' "$T/out" | wc -l; }

# 1-3: -p PID -c N: the program keeps one process's calls, the tool ends by
# itself after N events. getpid_n waits on a FIFO until the tool traces.
mkfifo "$T/go"
"$G" $N 0 "$T/go" & gp=$!
pids="$gp"
timeout -k 5 60 "$E" -p $gp -c $N -d 50 >"$T/out" 2>"$T/err" & ep=$!
pids="$pids $ep"
if wait_tracing $ep; then : >"$T/go"; else echo "# never traced"; fi
wait $ep
rc=$?
wait $gp
got=$(lines_of $gp)
check "-p PID -c $N: exit 0 by itself (rc $rc)" '[ $rc = 0 ]'
check "-p PID -c $N: $N lines of getpid_n's pid (got $got)" '[ "$got" = $N ]'
other=$(awk 'NR > 1 && $2 != '$gp'' "$T/out" | wc -l)
check "-p PID: no other process's line ($other)" '[ "$other" = 0 ]'

# 4-6: every process, until SIGINT (an 8 MiB ring: other processes may call
# getpid too): getpid_n's N calls among the rest, and
# the summary counts at least those.
: >"$T/err"    # the last run's line must not start this one's calls
timeout -k 5 60 "$E" -s 8388608 -d 50 >"$T/out" 2>"$T/err" & ep=$!
pids="$pids $ep"
wait_tracing $ep || echo "# never traced"
"$G" $N & gp=$!
wait $gp
sleep 0.3
kill -INT $ep
wait $ep
rc=$?
got=$(lines_of $gp)
check "SIGINT ends it: exit 0 (rc $rc)" '[ $rc = 0 ]'
check "every process: $N lines of getpid_n's pid (got $got)" '[ "$got" = $N ]'
events=$(sed -n 's/^getpidsnoop: \([0-9]*\) events.*/\1/p' "$T/err")
total=$(($(wc -l <"$T/out") - 1))
check "the summary's count is the lines printed ($events, $total)" \
	'[ -n "$events" ] && [ "$events" = "$total" ] && [ "$events" -ge $N ]'

# 7-8: a 4 KiB ring under a burst of 100000 calls: the program's failed
# reserves are counted, and lines + dropped = calls exactly.
M=100000
mkfifo "$T/go2"
"$G" $M 0 "$T/go2" & gp=$!
pids="$pids $gp"
: >"$T/err"
timeout -k 5 60 "$E" -p $gp -s 4096 -d 50 >"$T/out" 2>"$T/err" & ep=$!
pids="$pids $ep"
if wait_tracing $ep; then : >"$T/go2"; else echo "# never traced"; fi
wait $gp
sleep 0.3
kill -INT $ep
wait $ep
got=$(lines_of $gp)
dropped=$(sed -n 's/.* events, \([0-9]*\) dropped.*/\1/p' "$T/err")
echo "# 4 KiB ring: $got lines, $dropped dropped"
check "4 KiB ring: lines + dropped = $M ($got + $dropped)" \
	'[ -n "$dropped" ] && [ $((got + dropped)) = $M ]'
check "4 KiB ring: the burst overflowed it (dropped $dropped > 0)" '[ "${dropped:-0}" -gt 0 ]'

# 9: bad arguments: exit 2 with the usage line.
"$E" -p -5 >/dev/null 2>"$T/err"
rc=$?
check "-p -5: exit 2 with its usage (rc $rc)" '[ $rc = 2 ] && grep -q "^usage:" "$T/err"'
