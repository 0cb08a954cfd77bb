#!/bin/sh
# SPDX-License-Identifier: MIT
# perfring-watch --bpf-map (TAP): another tool (tests/bpfpin) loads a BPF
# program for its own tgid, pins its PERF_EVENT_ARRAY on a bpffs, and makes
# N getpid calls once perfring-watch has started on that pin. The test runs
# in a mount namespace of its own with a private bpffs, so no pin can outlive
# it; where no namespace can be made, the private bpffs is mounted in the
# test's temporary directory and unmounted on every way out.

top_builddir=${top_builddir:-.}
W="$top_builddir/tools/perfring-watch"
P="$top_builddir/tests/bpfpin"
case $W in /*) ;; *) W="$PWD/$W" P="$PWD/$P" ;; esac
N_TESTS=13
N=5000

n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "# $l"; done; }
skip_all() { while [ $n -lt $N_TESTS ]; do n=$((n + 1)); echo "ok $n - # SKIP $1"; done; exit 0; }
check() {
	name=$1
	shift
	if eval "$*"; then ok "$name"; else not_ok "$name" "failed: $*"; sed 's/^/#   /' "$T/err" | head -20; fi
}

# The plan comes first, from the first run (a namespaced rerun prints none).
if [ -z "${PERFRING_TEST_NS:-}" ]; then
	echo "1..$N_TESTS"
	[ "$(id -u)" = 0 ] || skip_all "needs root"
	command -v jq >/dev/null || skip_all "needs jq"
	if command -v unshare >/dev/null && unshare -m --propagation private true 2>/dev/null; then
		PERFRING_TEST_NS=1 exec unshare -m --propagation private "$0" "$@"
	fi
	echo "# no mount namespace (unshare -m): the bpffs is mounted in the temporary directory"
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/test_watch_bpf.XXXXXX") || skip_all "mktemp failed"
cleanup() {
	umount "$T/bpffs" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
if ! mkdir "$T/bpffs" || ! mount -t bpf bpf "$T/bpffs" 2>"$T/err"; then
	skip_all "cannot mount a bpffs: $(head -1 "$T/err")"
fi
PIN="$T/bpffs/getpid_out"
TO="timeout -k 5 60"

$TO "$P" "$PIN" $N "$W" --bpf-map "$PIN" --pages 256 --json --dump -d 50 >"$T/out" 2>"$T/err"
rc=$?
if [ $rc = 77 ]; then
	while [ $n -lt $N_TESTS ]; do n=$((n + 1)); echo "ok $n - # SKIP BPF unavailable"; done
	exit 0
fi
check "exit 0" '[ $rc = 0 ]'
# The calls come in one burst: 256 pages hold all of them before a read.
# bpfpin ends the watch with SIGINT once they are made (-d 50 only bounds it).
events=$(jq -s '[.[] | select(.type == "summary")][0].events' "$T/out")
lost=$(jq -s '[.[] | select(.type == "summary")][0].lost' "$T/out")
check "the summary counts exactly $N samples (got $events, $lost lost)" '[ "$events" = $N ]'
percpu=$(jq -s '[.[] | select(.type == "summary")][0].cpus | map(.events) | add' "$T/out")
check "the per-CPU rows add up to $N (got $percpu)" '[ "$percpu" = $N ]'
samples=$(jq -s '[.[] | select(.type == "sample")] | length' "$T/out")
check "--dump: one line per sample ($samples)" '[ "$samples" = $N ]'
# 24 bytes arrive as 28; the magic comes first, little-endian; then the tgid.
bad=$(jq -s --arg magic 31765f6670627270 '[.[] | select(.type == "sample") |
	select(.raw_size != 28 or (.hex | length) != 56 or (.hex[0:16] != $magic) or
	       (.event | startswith("bpf:") | not))] | length' "$T/out")
check "--dump: raw_size 28, 28 bytes in hex, the program's magic ($bad bad)" \
	'[ "$samples" -gt 0 ] && [ "$bad" = 0 ]'

$TO "$W" --bpf-map "$T/bpffs/none" -d 1 >"$T/out" 2>"$T/err"
rc=$?
check "a missing pin: exit 1, naming BPF_OBJ_GET" '[ $rc = 1 ] && grep -q "BPF_OBJ_GET" "$T/err"'
# The kernel's EACCES, as root: the path is no pin, whatever privileges are.
: >"$T/plain"
$TO "$W" --bpf-map "$T/plain" -d 1 >"$T/out" 2>"$T/err"
rc=$?
check "a regular file off any bpffs: exit 1, says it is not on a bpffs and how to mount one" \
	'[ $rc = 1 ] && grep -q "is not on a bpffs" "$T/err" &&
	 grep -q "mount -t bpf bpf /sys/fs/bpf" "$T/err" && ! grep -q "CAP_BPF" "$T/err"'
$TO "$W" --bpf-map "$T/bpffs" -d 1 >"$T/out" 2>"$T/err"
rc=$?
check "a directory on the bpffs: exit 1, not a pinned BPF object" \
	'[ $rc = 1 ] && grep -q "on a bpffs but is not a pinned BPF object" "$T/err" &&
	 ! grep -q "CAP_BPF" "$T/err"'

# --dump-bytes N: N bytes of each payload; 65535 holds any payload whole.
dump_lens() {
	$TO "$P" "$PIN" 300 "$W" --bpf-map "$PIN" --pages 64 --json --dump --dump-bytes "$1" \
		-d 50 >"$T/out" 2>"$T/err"
	rc=$?
	lens=$(jq -s -c '[.[] | select(.type == "sample") | .hex | length] | group_by(.) |
		map([.[0], length])' "$T/out" 2>/dev/null)
}
dump_lens 8
check "--dump-bytes 8: each of the 300 lines holds 8 bytes (16 hex digits) ($lens)" \
	'[ $rc = 0 ] && [ "$lens" = "[[16,300]]" ]'
dump_lens 65535
check "--dump-bytes 65535: each of the 300 lines holds the whole 28-byte payload ($lens)" \
	'[ $rc = 0 ] && [ "$lens" = "[[56,300]]" ]'
$TO "$W" --bpf-map "$PIN" --json --dump --dump-bytes 65536 -d 1 >"$T/out" 2>"$T/err"
rc=$?
check "--dump-bytes 65536: exit 2, the range named" \
	'[ $rc = 2 ] && grep -q -- "--dump-bytes: .65536. is not a number from 0 to 65535" "$T/err"'
$TO "$W" --bpf-map "$PIN" --json --dump-bytes 8 -d 1 >"$T/out" 2>"$T/err"
rc=$?
check "--dump-bytes without --dump: exit 2" \
	'[ $rc = 2 ] && grep -q -- "--dump-bytes needs --dump" "$T/err"'
$TO "$W" --bpf-map "$PIN" --dump -d 1 >"$T/out" 2>"$T/err"
rc=$?
check "--dump without --json: exit 2" '[ $rc = 2 ] && grep -q -- "--dump needs --json" "$T/err"'
