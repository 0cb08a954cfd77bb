#!/bin/sh
# SPDX-License-Identifier: MIT
# perfring-watch --overwrite (issue 21; TAP, as root): a flight recorder whose
# SIGUSR2 snapshots each hold the newest records of that moment, contiguous
# and ending at the last one made, written to --snapshot-dir; a text-mode
# run; and nothing left behind. The command is a generator in this test's
# temporary directory, numbering its close(2) calls through the fd argument
# (close(1000000 + N) fails harmlessly), pinned to one CPU.
# Issue 31: each snapshot file is created new inside the directory opened at
# start (a planted link or file is refused, a directory swapped for a link is
# not followed), a snapshot that cannot be written is an error, a closed
# stdout neither breaks --snapshot-dir nor lets output into our own fds, an
# early snapshot signal is held, and a bad --snapshot-dir is refused at start.
# Two small tmpfs mounts in the temporary directory are unmounted on exit.

top_builddir=${top_builddir:-.}
W="$top_builddir/tools/perfring-watch"
case $W in /*) ;; *) W="$PWD/$W" ;; esac
TO=""
command -v timeout >/dev/null && TO="timeout -k 5 60"
T=$(mktemp -d "${TMPDIR:-/tmp}/test_watch_overwrite.XXXXXX") || exit 1
BG=""
MNT=""

# Everything of this test's runs (their command lines name $T), then $T.
ours() { pgrep -f "$T/" | tr '\n' ' '; }
unmount() { for m in $MNT; do umount "$m" 2>/dev/null; done; MNT=""; }
trap 'kill_bg $BG $(ours); wait; unmount; rm -rf "$T"' EXIT
trap 'exit 1' INT TERM HUP

. "${top_srcdir:-$(dirname "$0")/../..}/tests/tap.sh"
# $pid: the recorder itself, $tpid's child when timeout(1) runs it.
find_recorder() {
	pid=$tpid
	[ -n "$TO" ] || return 0
	i=0
	while ! pid=$(pgrep -P $tpid) && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
}
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

echo "1..16"
if [ "$(id -u)" != 0 ] || ! command -v python3 >/dev/null || ! command -v pgrep >/dev/null; then
	for i in $(seq 16); do echo "ok $i - recorder # SKIP needs root, python3 and pgrep"; done
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
find_recorder
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

# ------------------------------------------------------------ issue 31
# 30 closes, then wait for the file $1 (20 s at most); with $2, write there
# whether fd 1 was open in the command.
cat >"$T/wait30.py" <<'PYEOF'
import os, sys, time
for i in range(30):
    try:
        os.close(1000000 + i)
    except OSError:
        pass
if len(sys.argv) > 2:
    try:
        os.fstat(1)
        st = "open"
    except OSError:
        st = "closed"
    with open(sys.argv[2], "w") as f:
        f.write(st)
for _ in range(2000):
    if os.path.exists(sys.argv[1]):
        break
    time.sleep(0.01)
PYEOF

# rec_start GO ARGS...: a recorder of wait30.py's closes in the background, up
# and recording; $tpid to wait for, $pid to signal.
rec_start() {
	go=$1
	shift
	rm -f "$T/err"
	$TO "$W" --overwrite --pages 4 "$@" -e syscalls:sys_enter_close -- \
		"$PY" "$T/wait30.py" "$T/$go" >"$T/out" 2>"$T/err" &
	tpid=$!
	BG="$BG $tpid"
	find_recorder
	wait_err "recording into"
}
# rec_end GO: the command's wait ends; rc is the recorder's status.
rec_end() {
	touch "$T/$1"
	wait $tpid
	rc=$?
}
# last_close FILE: the file's last numbered close is fd=1000029.
last_close() {
	grep "sys_enter_close:" "$1" 2>/dev/null | grep "fd=10000" | tail -1 | grep -q "fd=1000029"
}

# 3: a link and a file planted at snapshot-1 and -2 are refused, neither
# followed nor truncated; each later snapshot tries its own name, and the
# records refused wait for the next; the run's status says it failed.
mkdir "$T/d3"
echo precious >"$T/victim"
ln -s "$T/victim" "$T/d3/snapshot-1.txt"
echo keep >"$T/d3/snapshot-2.txt"
rec_start go3 --snapshot-on SIGUSR2 --snapshot-dir "$T/d3"
kill -USR2 "$pid"
wait_err "snapshot 1:"
kill -USR2 "$pid"
wait_err "snapshot 2:"
rec_end go3
check "planted snapshot-1 link and -2 file refused by name, not followed; snapshot 3 has the records (rc $rc)" \
	'[ $rc = 1 ] && [ "$(cat "$T/victim")" = precious ] && [ -L "$T/d3/snapshot-1.txt" ] &&
	 [ "$(cat "$T/d3/snapshot-2.txt")" = keep ] &&
	 grep -q "snapshot 1: $T/d3/snapshot-1.txt: File exists" "$T/err" &&
	 grep -q "snapshot 2: $T/d3/snapshot-2.txt: File exists" "$T/err" &&
	 last_close "$T/d3/snapshot-3.txt"'

# 3: the directory swapped for a link once running: the files still go into
# the directory opened at start.
mkdir "$T/d4" "$T/elsewhere"
rec_start go4 --snapshot-dir "$T/d4"
mv "$T/d4" "$T/d4.old" && ln -s "$T/elsewhere" "$T/d4"
rec_end go4
check "a --snapshot-dir swapped for a link after start is not followed (rc $rc)" \
	'[ $rc = 0 ] && last_close "$T/d4.old/snapshot-1.txt" && [ -z "$(ls -A "$T/elsewhere")" ]'

# 4: a snapshot on a full filesystem (a one-page tmpfs, filled) is an error
# naming its file; to a full stdout, an error too.
mkdir "$T/full"
if mount -t tmpfs -o size=4k,mode=0755 perfring-test "$T/full"; then
	MNT="$T/full"
	cat /dev/zero >"$T/full/fill" 2>/dev/null
fi
rec_start go5 --snapshot-dir "$T/full"
rec_end go5
unmount
check "a snapshot that cannot be written is an error naming the file (rc $rc)" \
	'[ $rc = 1 ] && grep -q "snapshot 1: $T/full/snapshot-1.txt: No space left on device" "$T/err" &&
	 ! grep -q "snapshot 1: [0-9]* samples" "$T/err"'
touch "$T/go6"
$TO "$W" --overwrite --pages 4 -e syscalls:sys_enter_close -- "$PY" "$T/wait30.py" "$T/go6" \
	>/dev/full 2>"$T/err"
rc=$?
check "a snapshot to a full stdout is an error (rc $rc)" \
	'[ $rc = 1 ] && grep -q "snapshot 1 of [0-9]* samples: stdout: No space left on device" "$T/err"'

# 5: stdout closed, as daemons run: both --snapshot-dir snapshots are
# written (fd 1 is no fd of ours), and the command gets the closed stdout it
# was given.
mkdir "$T/d7"
rm -f "$T/fd1" "$T/err"
$TO "$W" --overwrite --snapshot-on SIGUSR2 --snapshot-dir "$T/d7" --pages 4 \
	-e syscalls:sys_enter_close -- "$PY" "$T/wait30.py" "$T/go7" "$T/fd1" >&- 2>"$T/err" &
tpid=$!
BG="$BG $tpid"
find_recorder
wait_err "recording into"
wait_file "$T/fd1"
kill -USR2 "$pid"
wait_err "snapshot 1:"
rec_end go7
check "stdout closed: both --snapshot-dir snapshots are written, the command's fd 1 closed (rc $rc)" \
	'[ $rc = 0 ] && last_close "$T/d7/snapshot-1.txt" && [ -e "$T/d7/snapshot-2.txt" ] &&
	 [ "$(cat "$T/fd1")" = closed ]'

# 5: what writes to a closed stdout ends at its first write as on SIGPIPE:
# 141 at once, the command never run, instead of -d 8 into our own fds.
cp "$(command -v sleep)" "$T/sleep" || exit 1
t0=$(date +%s)
bad=""
for mode in "-s page-faults" "--json -s page-faults" "--print -e syscalls:sys_enter_close" \
	"-s page-faults -- $T/sleep 20"; do
	# shellcheck disable=SC2086
	$TO "$W" -d 8 $mode >&- 2>"$T/err"
	rc=$?
	[ $rc = 141 ] || bad="$bad [$mode: $rc]"
done
secs=$(($(date +%s) - t0))
left=$(ours)
check "stdout closed: text, --json, --print and a command end at once with 141 [$bad] (${secs} s) [$left]" \
	'[ -z "$bad" ] && [ $secs -lt 8 ] && [ -z "$left" ]'

# 6: the snapshot signal is held from the first thing main does: one sent
# as soon as perfring-watch catches SIGHUP/SIGPIPE or holds the signal (read
# in /proc without a fork), then 0-4 ms later, never kills it and is taken
# once the recorder runs. The real binary, not libtool's shell wrapper (its
# shell would die of the signal before the exec). Half the runs at once.
RW="$W" RENV=""
if [ -x "$(dirname "$W")/.libs/perfring-watch" ]; then
	RW="$(dirname "$W")/.libs/perfring-watch"
	RENV="LD_LIBRARY_PATH=$top_builddir/core/.libs"
	for d in uv event ev; do RENV="$RENV:$top_builddir/adapters/$d/.libs"; done
fi
# sig_ready PID MASK: PID runs perfring-watch and blocks a signal of MASK or catches SIGHUP/SIGPIPE.
sig_ready() {
	exe="" blk=0 cgt=0
	while read -r k v; do
		case $k in
		Name:) exe=$v ;;
		SigBlk:) blk=$v ;;
		SigCgt:) cgt=$v ;;
		esac
	done 2>/dev/null <"/proc/$1/status" || return 1
	[ "$exe" = perfring-watch ] && [ $(((0x$blk & $2) | (0x$cgt & 0x1001))) != 0 ]
}
bad=""
for i in $(seq 30); do
	if [ $((i % 2)) = 0 ]; then sig=USR2 mask=0x800; else sig=USR1 mask=0x200; fi
	env $RENV "$RW" --overwrite --snapshot-on SIG$sig -e syscalls:sys_enter_close \
		-e syscalls:sys_exit_close -s page-faults -d 0.2 >/dev/null \
		2>"$T/err" &
	p=$!
	BG="$BG $p"
	j=0
	until sig_ready $p $mask || [ $j -gt 100000 ]; do j=$((j + 1)); done
	d=$((i <= 15 ? 0 : i % 5))
	[ $d = 0 ] || sleep 0.00$d
	kill -$sig $p
	wait $p
	rc=$?
	if [ $rc != 0 ] || ! grep -q "snapshot 2:" "$T/err"; then
		bad="$bad [run $i, SIG$sig +${d}ms: rc $rc, $(grep -c "snapshot [0-9]*:" "$T/err") snapshots]"
	fi
done
check "an early snapshot signal is held and taken, never fatal, in 30 runs:$bad" '[ -z "$bad" ]'

# 7: a --snapshot-dir that is missing, not a directory or read-only is
# refused at start (exit 2), before the command runs or anything is recorded.
mkdir "$T/ro"
mount -t tmpfs -o ro,size=4k perfring-test "$T/ro" && MNT="$T/ro"
bad=""
for d in "$T/missing:No such file or directory" "$T/victim:Not a directory" \
	"$T/ro:Read-only file system"; do
	rm -f "$T/ran"
	$TO "$W" --overwrite --snapshot-dir "${d%%:*}" -d 8 -e syscalls:sys_enter_close -- \
		touch "$T/ran" >"$T/out" 2>"$T/err"
	rc=$?
	{ [ $rc = 2 ] && [ ! -e "$T/ran" ] && [ ! -s "$T/out" ] &&
	  grep -q -- "--snapshot-dir ${d%%:*}: ${d#*:}" "$T/err"; } ||
		bad="$bad [${d#*:}: rc $rc, $(head -1 "$T/err")]"
done
unmount
check "a missing, non-directory or read-only --snapshot-dir is exit 2 at start:$bad" '[ -z "$bad" ]'
