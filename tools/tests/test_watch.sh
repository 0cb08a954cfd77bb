#!/bin/sh
# SPDX-License-Identifier: MIT
# perfring-watch end to end (TAP). Runs as root: it opens real perf events.
# Exact workloads come from tests/getpid_n (N getpid calls, then a chosen
# exit status), so every count below is known in advance.

top_builddir=${top_builddir:-.}
W="$top_builddir/tools/perfring-watch"
G="$top_builddir/tests/getpid_n"
# Absolute paths: tmux and setpriv run them from elsewhere.
case $W in /*) ;; *) W="$PWD/$W" G="$PWD/$G" ;; esac

N_TESTS=25
# Every run is bounded: a hang fails its test instead of stalling make check.
TO=""
command -v timeout >/dev/null && TO="timeout -k 5 60"
T=$(mktemp -d "${TMPDIR:-/tmp}/test_watch.XXXXXX") || exit 1
SOCK="$T/tmux"      # a private tmux server, its socket removed with $T
BG=""
U=""                # a copy of the program for nobody, when needed

cleanup() {
	tmux -S "$SOCK" kill-server 2>/dev/null
	kill_bg $BG
	rm -rf "$T"
	[ -n "$U" ] && rm -rf "$U"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

echo "1..$N_TESTS"
. "${top_srcdir:-$(dirname "$0")/../..}/tests/tap.sh"
dump() {
	echo "#   rc=$rc st=${st-} heads=${heads-}"
	for f in "$T/out" "$T/err"; do
		[ -s "$f" ] && sed 's/^/#   /' "$f" | head -40
	done
}

if [ "$(id -u)" != 0 ]; then
	echo "# SKIP: perfring-watch tests open system-wide perf events and need root"
	while [ $n -lt $N_TESTS ]; do skip "needs root" "not root"; done
	exit 0
fi
if ! command -v jq >/dev/null; then
	while [ $n -lt $N_TESTS ]; do skip "needs jq" "jq is not installed"; done
	exit 0
fi

LOOPS=$("$W" --version | sed -n 's/^loops: //p')
built() { case " $LOOPS " in *" $1 "*) return 0 ;; esac; return 1; }
echo "# loops built: $LOOPS"

# json_get KEY: the summary's KEY from $T/out.
json_get() { jq -r "select(.type == \"summary\") | .$1" "$T/out"; }

# ---------------------------------------------------------------- --help
$TO "$W" --help >"$T/out" 2>"$T/err"
rc=$?
check "--help prints the full usage and exits 0" \
	'[ $rc = 0 ] && grep -q -- "--watermark BYTES" "$T/out" && grep -q -- "--json" "$T/out" &&
	 grep -q "Exit status" "$T/out" && grep -q -- "--loop uv|event|ev|epoll" "$T/out"'

# ---------------------------------------- COMMAND: exact count and status
for loop in uv event ev epoll; do
	if ! built $loop; then
		skip "--loop $loop: exact getpid count and the command's exit status" \
			"libperfring-$loop is not built"
		continue
	fi
	$TO "$W" --json -d 2 --loop $loop -e syscalls:sys_enter_getpid -- "$G" 1000 7 \
		>"$T/out" 2>"$T/err"
	rc=$?
	check "--loop $loop: 1000 getpid calls give 1000 events, exit status 7" \
		'[ $rc = 7 ] && [ "$(json_get events)" = 1000 ] && [ "$(json_get lost)" = 0 ] &&
		 [ "$(json_get loop)" = $loop ] && [ "$(json_get command_status)" = 7 ] &&
		 [ "$(jq -r "select(.type == \"start\") | .event_names[0]" "$T/out")" = \
		   syscalls:sys_enter_getpid ]'
done

if built uv; then want=uv; else want=epoll; fi
$TO "$W" --json -d 1 -e syscalls:sys_enter_getpid -- "$G" 10 0 >"$T/out" 2>"$T/err"
check "the default loop is $want" '[ "$(json_get loop)" = $want ] && [ "$(json_get events)" = 10 ]'

# Budgeted drains (continued by the loop) and per-event wakeups lose nothing.
bad=""
for loop in $LOOPS; do
	$TO "$W" --json -d 3 --loop $loop --budget 5 --wakeup-events 16 --pages 256 \
		-e syscalls:sys_enter_getpid -- "$G" 10000 0 >"$T/out" 2>"$T/err"
	[ $? = 0 ] && [ "$(json_get events)" = 10000 ] || bad="$bad $loop"
done
check "--budget 5 --wakeup-events 16: 10000 events exactly on every loop ($LOOPS)" \
	'[ -z "$bad" ]'

# ---------------------------------------------------------- bad arguments
# bad_arg NAME PATTERN ARGS...: exit 2 and one line on stderr matching PATTERN.
bad_arg() {
	name=$1 pat=$2
	shift 2
	$TO "$W" -d 1 "$@" >"$T/out" 2>"$T/err"
	rc=$?
	check "$name: exit 2 and one line" \
		'[ $rc = 2 ] && [ "$(wc -l <"$T/err")" = 1 ] && grep -q -e "$pat" "$T/err" && [ ! -s "$T/out" ]'
}
bad_arg "unknown event" "no tracepoint nosuch:event" -e nosuch:event
bad_arg "offline CPU 999" "CPU 999 is offline" -c 0,999
bad_arg "watermark at the ring size" "--watermark = 262144 bytes must be smaller" \
	--pages 64 --watermark 256k
bad_arg "both wakeup modes" "--watermark (4096) and --wakeup-events (8) exclude each other" \
	--watermark 4096 --wakeup-events 8

# ------------------------------------------------------- output formats
$TO "$W" -d 2 -c 0-1 >"$T/out" 2>"$T/err"
rc=$?
# Each data line: time, cpu (0, 1 or all), then 8 numbers.
bad_lines=$(grep -v '^#' "$T/out" | grep -v '^summary:' | grep -v '^  cpu [01]:' |
	grep -v '^stopped by' |
	awk 'NF != 10 || $2 !~ /^(0|1|all)$/ { print }' | wc -l)
rows=$(grep -v '^#' "$T/out" | awk 'NF == 10 && $2 ~ /^(0|1|all)$/' | wc -l)
check "piped: a header naming loop, mode and events, then one line per CPU per second" \
	'[ $rc = 0 ] && grep -q "^# perfring-watch: loop .*, watermark 4096 B, flush 100 ms, CPUs 0-1" "$T/out" &&
	 grep -q "^# events: sched:sched_switch" "$T/out" && [ $bad_lines = 0 ] &&
	 [ $rows -ge 3 ] && [ $((rows % 3)) = 0 ] && grep -q "^summary: " "$T/out"'

$TO "$W" --json -d 2 >"$T/out" 2>"$T/err"
rc=$?
lines=$(wc -l <"$T/out")
parsed=$(jq -c . "$T/out" 2>/dev/null | wc -l)
ivals=$(jq -r 'select(.type == "interval") | .type' "$T/out" | wc -l)
cpusum=$(jq -r 'select(.type == "summary") | [.cpus[].events] | add' "$T/out")
check "--json: one object per line: start, one per second, a summary whose events add up" \
	'[ $rc = 0 ] && [ $lines = $parsed ] && [ $ivals -ge 1 ] && [ $ivals -le 2 ] &&
	 [ "$(head -n 1 "$T/out" | jq -r .type)" = start ] &&
	 [ "$(tail -n 1 "$T/out" | jq -r .type)" = summary ] &&
	 [ "$(json_get events)" = "$cpusum" ] && [ "$cpusum" -gt 0 ] &&
	 [ "$(jq -r "select(.type == \"interval\") | .cpus | length" "$T/out" | sort -u)" = 2 ]'

# ------------------------------------------------ signals end runs cleanly
# wait_exit PID: up to 20 s for background PID to end (then SIGKILL); sets rc.
wait_exit() {
	i=0
	while [ -e /proc/$1 ] && ! grep -q '^[0-9]* ([^)]*) Z' /proc/$1/stat 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 200 ] && break
		sleep 0.1
	done
	kill -KILL $1 2>/dev/null
	wait $1
	rc=$?
}
# wait_for FILE PATTERN: up to 10 s for PATTERN to show up in FILE.
wait_for() {
	i=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 100 ] && return 1
		sleep 0.1
	done
}
for loop in uv event ev epoll; do
	if ! built $loop; then
		skip "--loop $loop: SIGTERM prints the summary and exits 0" "not built"
		continue
	fi
	# A fresh file: a stale header would send the signal before exec, while
	# the forked shell still runs this script's trap handlers.
	rm -f "$T/out"
	"$W" --loop $loop >"$T/out" 2>"$T/err" &
	pid=$!
	BG="$BG $pid"
	wait_for "$T/out" "^# events"
	kill -TERM $pid
	wait_exit $pid
	check "--loop $loop: SIGTERM prints the summary and exits 0" \
		'[ $rc = 0 ] && grep -q "^summary: .* on $loop:" "$T/out" &&
		 grep -q "^stopped by Terminated" "$T/out" && [ ! -s "$T/err" ]'
done

# ------------------------------------------------------------ -p PID
mkfifo "$T/go"
"$G" 10000 0 "$T/go" &
gp=$!
BG="$BG $gp"
rm -f "$T/out"
"$W" --json --pages 256 -p $gp -e syscalls:sys_enter_getpid >"$T/out" 2>"$T/err" &
wp=$!
BG="$BG $wp"
wait_for "$T/out" '"type":"start"'
$TO sh -c 'echo go >"$1"' sh "$T/go"
wait_exit $gp
grc=$rc
wait_exit $wp
check "-p PID: exact count, and the watch ends when the process exits" \
	'[ $grc = 0 ] && [ $rc = 0 ] && [ "$(json_get events)" = 10000 ] &&
	 [ "$(json_get lost)" = 0 ]'

# -------------------------------------------------- the command's status
$TO "$W" -d 5 -- sh -c 'kill -KILL $$' >"$T/out" 2>"$T/err"
rc1=$?
$TO "$W" -d 5 -- /nonexistent/command >"$T/out" 2>"$T/err"
rc2=$?
check "a command killed by SIGKILL gives 137; one that cannot run gives 127" \
	'[ $rc1 = 137 ] && [ $rc2 = 127 ] && grep -q "cannot run /nonexistent/command" "$T/err"'

# ------------------------------------------------------- unprivileged
# A build tree inside a private directory (a clean clone under mktemp -d is
# 0700) hides the program and its libraries from nobody: then nobody runs a
# copy of the real binary (behind libtool's wrapper) and of the libraries.
NW="$W" NG="$G" NENV=""
nobody_copy() {
	U=$(mktemp -d "${TMPDIR:-/tmp}/test_watch_nobody.XXXXXX") || return 1
	cp "$(dirname "$W")/.libs/perfring-watch" "$G" "$U/" || return 1
	for d in core adapters/uv adapters/event adapters/ev; do
		for l in "$top_builddir/$d/.libs/"*.so.0; do
			[ ! -e "$l" ] || cp -L "$l" "$U/" || return 1
		done
	done
	chmod -R a+rX "$U" || return 1
	NW="$U/perfring-watch" NG="$U/getpid_n" NENV="LD_LIBRARY_PATH=$U"
}
as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups env $NENV "$@"
}
if command -v setpriv >/dev/null && ! as_nobody test -x "$W" &&
	[ -x "$(dirname "$W")/.libs/perfring-watch" ]; then
	nobody_copy
fi
if command -v setpriv >/dev/null && as_nobody test -x "$NW"; then
	$TO setpriv --reuid=65534 --regid=65534 --clear-groups env $NENV "$NW" -d 1 \
		>"$T/out" 2>"$T/err"
	rc=$?
	check "unprivileged, system-wide: exit 1 with the cause and the fix" \
		'[ $rc = 1 ] && grep -q "Permission denied" "$T/err" && grep -q "run as root" "$T/err" &&
		 [ ! -s "$T/out" ]'
	$TO setpriv --reuid=65534 --regid=65534 --clear-groups env $NENV "$NW" -d 1 \
		-s context-switches >"$T/out" 2>"$T/err"
	rc=$?
	check "unprivileged perf_event_open: the sentence names paranoid and CAP_PERFMON" \
		'[ $rc = 1 ] && grep -q "perf_event_paranoid (now [0-9-]*)" "$T/err" &&
		 grep -q "CAP_PERFMON" "$T/err"'
	$TO setpriv --reuid=65534 --regid=65534 --clear-groups env $NENV "$NW" --json -d 2 -- \
		"$NG" 10 5 >"$T/out" 2>"$T/err"
	rc=$?
	check "unprivileged with COMMAND: user-only fallback, said so, command's status" \
		'[ $rc = 5 ] && [ "$(jq -r "select(.type == \"start\") | .user_only" "$T/out")" = true ] &&
		 grep -q "user-only" "$T/err" && [ "$(json_get command_status)" = 5 ]'
else
	for t in 1 2 3; do skip "unprivileged run" "setpriv missing or nobody cannot run $NW"; done
fi

# ------------------------------------------------------------ TTY
if command -v tmux >/dev/null; then
	unset TMUX
	# The shell records the exit status (tmux's own pane_dead_status is not
	# always filled in); its INT trap lets it outlive the Ctrl-C it shares
	# with perfring-watch, whose disposition exec resets to the default.
	tmux -S "$SOCK" -f /dev/null new-session -d -s watch -x 160 -y 40 \
		sh -c 'trap true INT; "$0" -c 0-1; echo $? >"$1"' "$W" "$T/rc"
	tmux -S "$SOCK" set-option -t watch remain-on-exit on >/dev/null
	i=0
	until tmux -S "$SOCK" capture-pane -p -t watch | grep -q "^ all "; do
		i=$((i + 1))
		[ $i -gt 100 ] && break
		sleep 0.1
	done
	tmux -S "$SOCK" capture-pane -p -t watch >"$T/out"
	check "TTY ($want, the default): the table shows the header, a row per CPU and the total" \
		'grep -q "^perfring-watch: loop $want, watermark 4096 B, flush 100 ms, CPUs 0-1" "$T/out" &&
		 grep -q "^events: sched:sched_switch" "$T/out" &&
		 grep -q "^ CPU  *events/s  *bytes/s  *wakeups/s  *rec/wakeup  *lost  *fill%  *p50  *p99" "$T/out" &&
		 grep -q "^ *0 " "$T/out" && grep -q "^ *1 " "$T/out" && grep -q "^ all " "$T/out"'
	tmux -S "$SOCK" send-keys -t watch C-c
	i=0
	until [ -s "$T/rc" ]; do
		i=$((i + 1))
		[ $i -gt 100 ] && break
		sleep 0.1
	done
	tmux -S "$SOCK" capture-pane -p -S -100 -t watch >"$T/out"
	st=$(cat "$T/rc" 2>/dev/null)
	# Redrawn in place: the header appears once, not once a second.
	heads=$(grep -c "^perfring-watch: loop" "$T/out")
	check "TTY: Ctrl-C ends with the summary, exit 0, table drawn in place" \
		'[ "$st" = 0 ] && grep -q "^summary: .* on $want:" "$T/out" &&
		 grep -q "^stopped by Interrupt" "$T/out" && [ "$heads" = 1 ]'
	tmux -S "$SOCK" kill-server 2>/dev/null
else
	skip "TTY table" "tmux is not installed"
	skip "TTY Ctrl-C" "tmux is not installed"
fi

# ------------------------------------------------------ nothing left over
left=""
for p in $BG; do kill -0 "$p" 2>/dev/null && left="$left $p"; done
check "no process is left behind" '[ -z "$left" ]'
[ $n = $N_TESTS ] || echo "# planned $N_TESTS tests but ran $n"
