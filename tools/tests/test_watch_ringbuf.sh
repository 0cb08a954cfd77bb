#!/bin/sh
# SPDX-License-Identifier: MIT
# perfring-watch and perfring-exporter --bpf-map on a BPF_MAP_TYPE_RINGBUF
# (TAP): another tool (tests/bpfpin --ringbuf) loads the tests' ring-buffer program
# for its own tgid (of N calls, half submitted, half discarded), pins its
# RINGBUF on a private bpffs, and makes its calls when told. The watch shows
# the ring buffer as a row of its own, the exporter as perfring_ringbuf_*
# series. The bpffs is private (a mount namespace, or the temporary
# directory), so no pin outlives the test.

top_builddir=${top_builddir:-.}
W="$top_builddir/tools/perfring-watch"
X="$top_builddir/tools/perfring-exporter"
P="$top_builddir/tests/bpfpin"
case $W in /*) ;; *) W="$PWD/$W" X="$PWD/$X" P="$PWD/$P" ;; esac
LOOPS=$("$W" --version | sed -n 's/^loops: //p')
N_TESTS=$((14 + $(echo $LOOPS | wc -w)))
N=5000
HALF=$((N / 2))

n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "# $l"; done; }
skip_all() { while [ $n -lt $N_TESTS ]; do n=$((n + 1)); echo "ok $n - # SKIP $1"; done; exit 0; }
check() {
	name=$1
	shift
	if eval "$*"; then ok "$name"; else not_ok "$name" "failed: $*"; sed 's/^/#   /' "$T/err" | head -20; fi
}

if [ -z "${PERFRING_TEST_NS:-}" ]; then
	echo "1..$N_TESTS"
	[ "$(id -u)" = 0 ] || skip_all "needs root"
	command -v jq >/dev/null || skip_all "needs jq"
	command -v curl >/dev/null || skip_all "needs curl"
	if command -v unshare >/dev/null && unshare -m --propagation private true 2>/dev/null; then
		PERFRING_TEST_NS=1 exec unshare -m --propagation private "$0" "$@"
	fi
	echo "# no mount namespace (unshare -m): the bpffs is mounted in the temporary directory"
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/test_watch_ringbuf.XXXXXX") || skip_all "mktemp failed"
pids=
cleanup() {
	exec 3>&- 2>/dev/null
	for p in $pids; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	umount "$T/bpffs" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
if ! mkdir "$T/bpffs" || ! mount -t bpf bpf "$T/bpffs" 2>"$T/err"; then
	skip_all "cannot mount a bpffs: $(head -1 "$T/err")"
fi
PIN="$T/bpffs/getpid_rb"
ARR="$T/bpffs/an_array"
TO="timeout -k 5 60"

# Up to 20 s for a line matching $2 in file $1.
wait_line() {
	i=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 200 ] && return 1
		sleep 0.1
	done
}
dones=0
# One round of bpfpin's N calls, and its "done".
calls() {
	echo go >&3
	dones=$((dones + 1))
	i=0
	while [ "$(grep -c '^done' "$T/rb.out")" -lt $dones ]; do
		i=$((i + 1))
		[ $i -gt 200 ] && return 1
		sleep 0.1
	done
}

mkfifo "$T/rb.in"
"$P" --ringbuf "$PIN" $N --array "$ARR" <"$T/rb.in" >"$T/rb.out" 2>"$T/rb.err" &
rp=$!
pids=$rp
exec 3>"$T/rb.in"
if ! wait_line "$T/rb.out" '^pinned'; then
	exec 3>&-
	wait $rp
	[ $? = 77 ] && skip_all "BPF unavailable: $(head -1 "$T/rb.err")"
	sed 's/^/# /' "$T/rb.err"
	echo "Bail out! bpfpin did not pin its ring buffer"
	exit 1
fi

# --json --dump: the ring buffer's own row, and one line per record.
$TO "$W" --bpf-map "$PIN" --json --dump -d 50 >"$T/out" 2>"$T/err" &
wp=$!
pids="$pids $wp"
wait_line "$T/out" '"type":"start"' || echo "# no start line"
calls || echo "# bpfpin made no calls"
sleep 1.3
kill -INT $wp
wait $wp
rc=$?
check "exit 0 after SIGINT (rc $rc)" '[ $rc = 0 ]'
rb=$(jq -s -c '[.[] | select(.type == "summary")][0].ringbufs[0]' "$T/out")
echo "# summary ringbufs[0]: $rb"
check "the summary's ring buffer row: map is the pin, $HALF records of 24 bytes, $HALF discarded" \
	'[ "$(echo "$rb" | jq -r .map)" = "$PIN" ] &&
	 [ "$(echo "$rb" | jq .records)" = $HALF ] &&
	 [ "$(echo "$rb" | jq .bytes)" = $((HALF * 24)) ] &&
	 [ "$(echo "$rb" | jq .discarded)" = $HALF ]'
events=$(jq -s '[.[] | select(.type == "summary")][0].events' "$T/out")
check "the CPUs' rows count none of them (events $events)" '[ "$events" = 0 ]'
ints=$(jq -s '[.[] | select(.type == "interval") | .ringbufs[0].records] | add' "$T/out")
check "the intervals' ring buffer rows add up to at most $HALF ($ints)" \
	'[ "$ints" != null ] && [ "$ints" -le $HALF ]'
bad=$(jq -s --arg magic 31765f6670627270 '[.[] | select(.type == "sample") |
	select(.cpu != -1 or .raw_size != 24 or .hex[0:16] != $magic)] | length' "$T/out")
samples=$(jq -s '[.[] | select(.type == "sample")] | length' "$T/out")
check "--dump: $HALF lines, each cpu -1, raw_size 24 (exact, no padding), the magic ($samples, $bad bad)" \
	'[ "$samples" = $HALF ] && [ "$bad" = 0 ]'

# piped text: a ringbuf line per second, and the summary's line.
: >"$T/out"    # the last run's lines must not start this one's calls
$TO "$W" --bpf-map "$PIN" -d 50 >"$T/out" 2>"$T/err" &
wp=$!
pids="$pids $wp"
wait_line "$T/out" '^# perfring-watch' || echo "# no header"
calls || echo "# bpfpin made no calls"
sleep 1.3
kill -INT $wp
wait $wp
rc=$?
rows=$(grep -c "^ *[0-9.]*   ringbuf .* $PIN\$" "$T/out")
check "piped: exit 0, a ringbuf row each second naming the pin ($rows)" '[ $rc = 0 ] && [ "$rows" -ge 1 ]'
check "piped: the summary's ringbuf line counts $HALF records and $HALF discarded" \
	'grep -q "^  ringbuf $PIN: $HALF records, $((HALF * 24)) bytes, $HALF discarded" "$T/out"'

# the exporter's perfring_ringbuf_* series.
PORT=$((20000 + $$ % 20000))
$TO "$X" --bpf-map "$PIN" --listen 127.0.0.1:$PORT -d 50 >"$T/out" 2>"$T/err" &
xp=$!
pids="$pids $xp"
i=0
while ! curl -sf "http://127.0.0.1:$PORT/metrics" >/dev/null 2>&1 && [ $i -lt 200 ]; do
	i=$((i + 1))
	sleep 0.1
done
calls || echo "# bpfpin made no calls"
sleep 0.5
curl -sf "http://127.0.0.1:$PORT/metrics" >"$T/metrics"
kill -TERM $xp
wait $xp
rc=$?
grep "^perfring_ringbuf" "$T/metrics" | sed 's/^/# /'
check "exporter: records, bytes and discarded of the map by its pin" \
	'grep -qx "perfring_ringbuf_records_total{map=\"$PIN\"} $HALF" "$T/metrics" &&
	 grep -qx "perfring_ringbuf_bytes_total{map=\"$PIN\"} $((HALF * 24))" "$T/metrics" &&
	 grep -qx "perfring_ringbuf_discarded_total{map=\"$PIN\"} $HALF" "$T/metrics"'
check "exporter: each family has its HELP and TYPE, and exit 0 on SIGTERM (rc $rc)" \
	'[ $rc = 0 ] && for f in records bytes discarded; do
	 grep -qx "# TYPE perfring_ringbuf_${f}_total counter" "$T/metrics" || exit 1; done'

# On every loop: the ring buffer's records all arrive, and it is a slot of
# the loop's reactor (records come while the run goes on, not at the end).
for loop in $LOOPS; do
	: >"$T/out"
	$TO "$W" --loop $loop --bpf-map "$PIN" --json -d 50 >"$T/out" 2>"$T/err" &
	wp=$!
	pids="$pids $wp"
	wait_line "$T/out" '"type":"start"' || echo "# no start line"
	calls || echo "# bpfpin made no calls"
	sleep 1.3
	kill -INT $wp
	wait $wp
	rc=$?
	rec=$(jq -s '[.[] | select(.type == "summary")][0].ringbufs[0].records' "$T/out")
	live=$(jq -s '[.[] | select(.type == "interval") | .ringbufs[0].records] | add' "$T/out")
	check "--loop $loop: exit 0, $HALF records, $HALF of them during the run (rc $rc, $rec, $live)" \
		'[ $rc = 0 ] && [ "$rec" = $HALF ] && [ "$live" = $HALF ]'
done

# --overwrite: the recorder reads no ring until a snapshot, and a ring
# buffer has no overwrite mode, so it is refused before anything runs.
$TO "$W" --overwrite --bpf-map "$PIN" -d 1 >"$T/out" 2>"$T/err"
rc=$?
check "--overwrite with a ring buffer: exit 2, the sentence names the map, its type and why" \
	'[ $rc = 2 ] && grep -qF -- "--bpf-map $PIN is a BPF_MAP_TYPE_RINGBUF (type 27)" "$T/err" &&
	 grep -q "has no overwrite mode" "$T/err"'

# a map of another type, and a program's pin: usage errors (exit 2)
# with the library's sentence.
$TO "$W" --bpf-map "$ARR" -d 1 >"$T/out" 2>"$T/err"
rc=$?
check "an ARRAY map: exit 2, the sentence names its type" \
	'[ $rc = 2 ] && grep -q -- "--bpf-map" "$T/err" && grep -qi "array\|type 2" "$T/err"'
$TO "$X" --bpf-map "$ARR" -d 1 >"$T/out" 2>"$T/err"
rc=$?
check "the exporter too: an ARRAY map is exit 2" '[ $rc = 2 ]'
$TO "$W" --bpf-map "${ARR}_prog" -d 1 >"$T/out" 2>"$T/err"
rc=$?
check "a program's pin: exit 2, not a BPF map" \
	'[ $rc = 2 ] && grep -q -- "--bpf-map: " "$T/err"'

# the pin goes with bpfpin, and nothing is left running.
exec 3>&-
wait $rp
rc=$?
check "bpfpin removed its pins and exited 0 (rc $rc)" \
	'[ $rc = 0 ] && [ ! -e "$PIN" ] && [ ! -e "$ARR" ] && [ ! -e "${ARR}_prog" ]'
