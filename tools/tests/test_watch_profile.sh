#!/bin/sh
# SPDX-License-Identifier: MIT
# perfring-watch's profiler options end to end (TAP), as root: --profile's
# top user IPs as PATH+0xOFFSET, -u uprobes counting every call and return
# with nothing left in tracefs, and --cgroup seeing only its tasks; -u on a
# FIFO or directory and --cgroup outside cgroup v2 refused as usage errors.

top_builddir=${top_builddir:-.}
W="$top_builddir/tools/perfring-watch"
G="$top_builddir/tests/getpid_n"
UT="$top_builddir/tests/uprobe_target"
W=$(realpath "$W") G=$(realpath "$G") UT=$(realpath "$UT")

N_TESTS=10
TO=""
command -v timeout >/dev/null && TO="timeout -k 5 60"
T=$(mktemp -d "${TMPDIR:-/tmp}/test_watch_profile.XXXXXX") || exit 1
CG=""
BG=""

cleanup() {
	kill_bg $BG
	[ -n "$CG" ] && [ -d "$CG" ] && rmdir "$CG"
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

echo "1..$N_TESTS"
. "${top_srcdir:-$(dirname "$0")/../..}/tests/tap.sh"
dump() {
	for f in "$T/out" "$T/err"; do
		[ -s "$f" ] && sed 's/^/#   /' "$f" | tail -20
	done
}

if [ "$(id -u)" != 0 ] || ! command -v jq >/dev/null || ! command -v nm >/dev/null; then
	while [ $n -lt $N_TESTS ]; do skip "needs root, jq and nm" "not available"; done
	exit 0
fi
summary() { jq -c 'select(.type == "summary")' "$T/out"; }

# 1-2. --profile: the command spins in main and prtest_uprobe_fn; the top
# user IPs must be offsets of the target inside one of those two.
$TO "$W" --profile 999 --json -- "$UT" 300000000 >"$T/out" 2>"$T/err"
rc=$?
top=$(summary | jq -r '.profile.top[0].at')
check "--profile runs the command and reports its top user IPs" \
	'[ $rc = 0 ] && [ "${top%+0x*}" = "$UT" ]'
inside=0 total=0
summary | jq -r '.profile.top[] | "\(.at) \(.count)"' >"$T/top"
nm -S "$UT" | awk '$4 == "main" || $4 == "prtest_uprobe_fn" { print $1, $2 }' >"$T/syms"
while read -r at cnt; do
	off=$((0x${at##*+0x}))
	total=$((total + cnt))
	while read -r addr size; do
		a=$((0x$addr)) s=$((0x$size))
		if [ "$off" -ge "$a" ] && [ "$off" -lt $((a + s)) ]; then
			inside=$((inside + cnt))
		fi
	done <"$T/syms"
done <"$T/top"
check "--profile offsets lie in the spinning functions (nm -S): $inside of $total" \
	'[ $total -gt 0 ] && [ $((inside * 10)) -ge $((total * 9)) ]'

# 3-4. -u: 1234 calls give 1234 entries and 1234 returns; tracefs untouched.
# In a sanitizer tree the target's own LeakSanitizer cannot stop its threads
# once a uretprobe has been hit (a fatal error at exit): the workload, not the
# library under test, so its leak check is off.
$TO "$W" -u "$UT:prtest_uprobe_fn" -u "$UT:prtest_uprobe_fn%return" --json -- \
	env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$UT" 1234 \
	>"$T/out" 2>"$T/err"
rc=$?
events=$(summary | jq -r '.events')
check "-u PATH:SYMBOL and %return count every call: $events of 2468" \
	'[ $rc = 0 ] && [ "$events" = 2468 ]'
check "-u writes nothing to uprobe_events" \
	'! grep -qF "$UT" /sys/kernel/tracing/uprobe_events 2>/dev/null'

# 5-6. --cgroup: 3000 getpid calls inside, 2000 outside: 3000 seen.
mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
rel="prtest-watch.$$"
if [ -z "$mnt" ] || ! mkdir "$mnt/$rel"; then
	skip "--cgroup sees only its tasks" "no cgroup v2 mount"
else
	CG="$mnt/$rel"
	$TO "$W" --cgroup "$rel" -e syscalls:sys_enter_getpid --json >"$T/out" 2>"$T/err" &
	wpid=$!
	BG="$wpid"
	i=0
	while ! grep -q '"type":"start"' "$T/out" 2>/dev/null && [ $i -lt 200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	sh -c "echo \$\$ > '$CG/cgroup.procs' && exec '$G' 3000"
	"$G" 2000
	kill -INT "$wpid"
	wait "$wpid"
	rc=$?
	BG=""
	events=$(summary | jq -r '.events')
	check "--cgroup sees the 3000 calls inside and none of the 2000 outside: $events" \
		'[ $rc = 0 ] && [ "$events" = 3000 ]'
	rmdir "$CG" && CG=""
fi
check "no cgroup is left behind" '[ -z "$CG" ] && [ ! -d "$mnt/$rel" ]'

# 7. A missing cgroup is a usage error naming it and the option.
$TO "$W" --cgroup prtest-no-such.slice -d 1 >"$T/out" 2>"$T/err"
rc=$?
check "--cgroup with a missing directory: exit 2, naming it" \
	'[ $rc = 2 ] && grep -q "prtest-no-such.slice" "$T/err" && grep -q -- "--cgroup" "$T/err"'

# 8-9. -u on a FIFO is refused at once (never waited on for a writer), and
# on a directory named as one: usage errors.
mkfifo "$T/fifo"
timeout -k 2 10 "$W" -u "$T/fifo:main" -d 1 >"$T/out" 2>"$T/err"
rc=$?
check "-u FIFO:main: exit 2 at once, naming it a FIFO (rc $rc)" \
	'[ $rc = 2 ] && grep -qF "$T/fifo is a FIFO" "$T/err"'
timeout -k 2 10 "$W" -u "$T:main" -d 1 >"$T/out" 2>"$T/err"
rc=$?
check "-u DIR:main: exit 2, naming it a directory (rc $rc)" \
	'[ $rc = 2 ] && grep -qF "$T is a directory" "$T/err"'

# 10. A directory outside cgroup v2 that holds a file named
# cgroup.controllers is refused before start: a usage error naming it.
mkdir "$T/cg" && : >"$T/cg/cgroup.controllers"
$TO "$W" --cgroup "$T/cg" -d 1 >"$T/out" 2>"$T/err"
rc=$?
check "--cgroup outside cgroup v2: exit 2, naming it (rc $rc)" \
	'[ $rc = 2 ] && grep -qF "$T/cg is not a cgroup v2 directory" "$T/err"'
