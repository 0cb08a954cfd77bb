#!/bin/sh
# SPDX-License-Identifier: MIT
# perfring-watch --overwrite (issue 21; TAP, as root): a flight recorder whose
# SIGUSR2 snapshots each hold the newest records of that moment, contiguous
# and ending at the last one made, written to --snapshot-dir; a text-mode
# run; and nothing left behind. The command is a generator in this test's
# temporary directory, numbering its close(2) calls through the fd argument
# (close(1000000 + N) fails harmlessly), pinned to one CPU.

top_builddir=${top_builddir:-.}
W="$top_builddir/examples/perfring-watch"
case $W in /*) ;; *) W="$PWD/$W" ;; esac
TO=""
command -v timeout >/dev/null && TO="timeout -k 5 60"
T=$(mktemp -d "${TMPDIR:-/tmp}/test_watch_overwrite.XXXXXX") || exit 1
BG=""

# Everything of this test's runs (their command lines name $T), then $T.
ours() { pgrep -f "$T/" | tr '\n' ' '; }
trap 'kill_bg $BG $(ours); wait; rm -rf "$T"' EXIT
trap 'exit 1' INT TERM HUP

. "${top_srcdir:-$(dirname "$0")/..}/tests/tap.sh"
# check NAME COND: TAP ok when the shell condition holds, else not ok and stderr.
check() {
	n=$((n + 1))
	if eval "$2"; then
		echo "ok $n - $1"
	else
		echo "not ok $n - $1"
		sed 's/^/#   /' "$T/err" 2>/dev/null | tail -8
	fi
}

echo "1..8"
if [ "$(id -u)" != 0 ] || ! command -v python3 >/dev/null || ! command -v pgrep >/dev/null; then
	for i in 1 2 3 4 5 6 7 8; do echo "ok $i - recorder # SKIP needs root, python3 and pgrep"; done
	exit 0
fi
PY=$(python3 -c 'import sys; print(sys.executable)')

# Round r: 20,000 closes numbered r*100000 + i, then $T/round-r, then wait for $T/go-r.
cat >"$T/gen.py" <<'PYEOF'
import os, sys, time
d = sys.argv[1]
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
for r in range(3):
    for i in range(20000):
        try:
            os.close(1000000 + r * 100000 + i)
        except OSError:
            pass
    open(os.path.join(d, "round-%d" % r), "w").close()
    while not os.path.exists(os.path.join(d, "go-%d" % r)):
        time.sleep(0.01)
PYEOF

# wait_for FILE or stderr PATTERN (10 s at most)
wait_file() {
	i=0
	until [ -e "$1" ]; do
		i=$((i + 1)); [ $i -gt 1000 ] && return 1; sleep 0.01
	done
}
wait_err() {
	i=0
	until grep -q "$1" "$T/err" 2>/dev/null; do
		i=$((i + 1)); [ $i -gt 1000 ] && return 1; sleep 0.01
	done
}

mkdir "$T/snaps"
$TO "$W" --overwrite --snapshot-on SIGUSR2 --snapshot-dir "$T/snaps" --json --pages 1 \
	-e syscalls:sys_enter_close -- "$PY" "$T/gen.py" "$T" >"$T/out" 2>"$T/err" &
tpid=$!
BG="$tpid"
pid=$tpid
if [ -n "$TO" ]; then
	i=0
	while ! pid=$(pgrep -P $tpid) && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
fi
sent=0
for r in 0 1 2; do
	wait_file "$T/round-$r" || break
	kill -USR2 "$pid"
	wait_err "snapshot $((r + 1)):" || break
	touch "$T/go-$r"
	sent=$((sent + 1))
done
wait $tpid
rc=$?
left=$(ours)
check "three SIGUSR2 snapshots, then the last one at the end (rc $rc)" \
	'[ $sent = 3 ] && [ $rc = 0 ] && [ -s "$T/snaps/snapshot-3.json" ] && [ -e "$T/snaps/snapshot-4.json" ]'

# Each snapshot: closes of its own round only, contiguous, ending at the last made.
"$PY" - "$T/snaps" >"$T/verdict" 2>&1 <<'PYEOF'
import json, sys
bad = []
for r in range(3):
    fds = []
    for line in open("%s/snapshot-%d.json" % (sys.argv[1], r + 1)):
        o = json.loads(line)
        assert o["event"] == "syscalls:sys_enter_close" and o["cpu"] >= 0 and o["time"] > 0
        fd = o["fields"]["fd"]
        if fd >= 1000000:
            fds.append(fd - 1000000)
    base = r * 100000
    if not fds or fds[-1] != base + 19999:
        bad.append("snapshot %d ends at %s, want %d" % (r + 1, fds[-1:] or None, base + 19999))
    elif fds != list(range(fds[0], fds[-1] + 1)) or fds[0] < base:
        bad.append("snapshot %d: not one contiguous run of round %d: %s..%s (%d)" %
                   (r + 1, r, fds[0], fds[-1], len(fds)))
    elif len(fds) > 4096 // 48:
        bad.append("snapshot %d: %d records cannot fit in a page" % (r + 1, len(fds)))
print("; ".join(bad) or "ok")
PYEOF
check "each snapshot is the newest run of its round: $(cat "$T/verdict")" '[ "$(cat "$T/verdict")" = ok ]'
check "stderr reports the overwritten bytes" 'grep -q "snapshot 3: [0-9]* samples; .* bytes overwritten" "$T/err"'
check "nothing of the run is left [$left]" '[ -z "$left" ]'

# 30 closes, fds 1000000 to 1000029.
cat >"$T/close30.py" <<'PYEOF'
import os
for i in range(30):
    try:
        os.close(1000000 + i)
    except OSError:
        pass
PYEOF

# Text mode to stdout: one perf script-like line per sample; the command's exit ends it.
$TO "$W" --overwrite --pages 4 -e syscalls:sys_enter_close -- "$PY" "$T/close30.py" \
	>"$T/out" 2>"$T/err"
rc=$?
check "text: a line per close, fd=1000029 the last (rc $rc)" \
	'[ $rc = 0 ] && grep "sys_enter_close:" "$T/out" | grep "fd=10000" | tail -1 | grep -q "fd=1000029"'
# The visit wait: the same records, by the thread's visit to each CPU (strace
# sees its moves: one a CPU, and the affinity back).
# LeakSanitizer cannot run under ptrace: the sanitizer tree's leak check is
# off for this one run (test_overwrite checks the visit's memory).
ST="env ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
ST="$ST strace -f -qq -e trace=sched_setaffinity -o $T/strace"
command -v strace >/dev/null || ST="" # then only the records are checked
$TO $ST "$W" --overwrite --snapshot-wait visit --pages 4 -e syscalls:sys_enter_close -- \
	"$PY" "$T/close30.py" >"$T/out" 2>"$T/err"
rc=$?
check "--snapshot-wait visit: a line per close, fd=1000029 the last (rc $rc)" \
	'[ $rc = 0 ] && [ "$(grep "sys_enter_close:" "$T/out" | grep -c "fd=10000")" = 30 ] &&
	 grep "sys_enter_close:" "$T/out" | grep "fd=10000" | tail -1 | grep -q "fd=1000029" &&
	 { [ -z "$ST" ] || [ "$(grep -c "sched_setaffinity.* = 0" "$T/strace")" -gt "$(nproc)" ]; }'
check "--snapshot-wait takes grace or visit only" \
	'"$W" --overwrite --snapshot-wait soon -d 1 2>"$T/err"; [ $? = 2 ] && grep -q "grace or visit" "$T/err"'
check "options of waking are refused with --overwrite" \
	'"$W" --overwrite --watermark 4096 -d 1 2>"$T/err"; [ $? = 2 ] && grep -q overwrite "$T/err"'
