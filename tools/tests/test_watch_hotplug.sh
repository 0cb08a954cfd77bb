#!/bin/sh
# SPDX-License-Identifier: MIT
# perfring-watch follows CPU hotplug without -c (TAP; root). A test sysfs
# root (PERFRING_TEST_SYSFS, test-only) stands in for /sys: the test writes
# its online list, and the tool, which has no uevent socket under a test
# root, finds each change at its next flush. Each step waits for the tool
# to show the last one, so nothing depends on how fast the machine is.

top_builddir=${top_builddir:-.}
W="$top_builddir/tools/perfring-watch"
N_TESTS=4
T=$(mktemp -d "${TMPDIR:-/tmp}/test_watch_hotplug.XXXXXX") || exit 1
BG=""
cleanup() {
	kill_bg $BG
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

echo "1..$N_TESTS"
. "${top_srcdir:-$(dirname "$0")/../..}/tests/tap.sh"
not_ok() {
	n=$((n + 1))
	echo "not ok $n - $1"
	grep -E '"type":"(start|cpu)"' "$T/out" 2>/dev/null | sed 's/^/#   /'
	for f in "$T/out" "$T/err"; do [ -s "$f" ] && sed 's/^/#   /' "$f" | tail -20; done
}
skip_all() { while [ $n -lt $N_TESTS ]; do n=$((n + 1)); echo "ok $n - $1 # SKIP $1"; done; exit 0; }
check() { name=$1; shift; if eval "$*"; then ok "$name"; else not_ok "$name"; fi; }

[ "$(id -u)" = 0 ] || skip_all "needs root"
command -v jq >/dev/null || skip_all "needs jq"
online=$(cat /sys/devices/system/cpu/online)
last=$(echo "$online" | tr ',-' '\n\n' | tail -n 1)
without=$(seq 0 "$last" | grep -vx "$last" | paste -sd, -)
[ -n "$without" ] || skip_all "needs two online CPUs"
R="$T/sys"
mkdir -p "$R/devices/system/cpu"
cp /sys/devices/system/cpu/possible /sys/devices/system/cpu/online "$R/devices/system/cpu/"
set_online() { echo "$1" >"$R/devices/system/cpu/.online" && mv "$R/devices/system/cpu/.online" "$R/devices/system/cpu/online"; }

# until CMD: up to 30 s for the shell condition CMD to hold.
until_() {
	i=0
	while ! eval "$1"; do
		i=$((i + 1))
		[ $i -gt 300 ] && return 1
		sleep 0.1
	done
}
# The JSON lines after the last "cpu" object for CPU $last going $1.
after() { awk -v pat="\"type\":\"cpu\",\"cpu\":$last,\"online\":$1" 'f; index($0, pat) { f = 1 }' "$T/out"; }
# Some interval object (of those on stdin) has a row for CPU $1; none has.
has_row() { jq -s -e "[.[] | select(.type == \"interval\") | .cpus | map(.cpu) | index($1) != null] | any" >/dev/null 2>&1; }
no_row() { jq -s -e "[.[] | select(.type == \"interval\") | .cpus | map(.cpu) | index($1) == null] | all" >/dev/null 2>&1; }

run_json() { # LOOP
	set_online "$online"
	PERFRING_TEST_SYSFS="$R" $W --json --loop "$1" --flush-ms 50 -s page-faults >"$T/out" 2>"$T/err" &
	pid=$!
	BG="$BG $pid"
	until_ 'grep -q "\"type\":\"interval\"" "$T/out"' &&
	set_online "$without" &&
	until_ 'after false | has_row 0' &&
	set_online "$online" &&
	until_ 'after true | has_row '"$last"
	step=$?
	kill -INT $pid
	wait $pid
	rc=$?
	[ $step = 0 ] && [ $rc = 0 ] &&
		after false | sed '/"online":true/q' | grep '"type":"interval"' | no_row "$last" &&
		jq -e "select(.type == \"summary\") | .cpus | map(.cpu) | index($last)" "$T/out" >/dev/null
}

for loop in uv epoll; do
	check "--json --loop $loop: a cpu object when CPU $last leaves and joins, rows without it between, with it after" \
		run_json $loop
done

set_online "$online"
PERFRING_TEST_SYSFS="$R" $W --flush-ms 50 -s page-faults >"$T/out" 2>"$T/err" &
pid=$!
BG="$BG $pid"
until_ 'grep -q "^ *[0-9.]* *all " "$T/out"' && set_online "$without" &&
	until_ 'grep -q "CPU $last left" "$T/err"' && set_online "$online" &&
	until_ 'grep -q "CPU $last joined" "$T/err"'
step=$?
kill -INT $pid
wait $pid
rc=$?
check "piped: a line on stderr when CPU $last leaves and when it joins" '[ $step = 0 ] && [ $rc = 0 ]'
check "the summary has a row for CPU $last" 'grep -q "cpu $last:" "$T/out"'
