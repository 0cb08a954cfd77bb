#!/bin/sh
# SPDX-License-Identifier: MIT
# perfring-watch --bpf-map (TAP): another tool (tests/bpfpin) loads a BPF
# program for its own tgid, pins its PERF_EVENT_ARRAY on a bpffs, and makes
# N getpid calls once perfring-watch has started on that pin. The whole test
# runs in a mount namespace of its own with a private bpffs, so no pin can
# outlive it.

top_builddir=${top_builddir:-.}
W="$top_builddir/examples/perfring-watch"
P="$top_builddir/tests/bpfpin"
case $W in /*) ;; *) W="$PWD/$W" P="$PWD/$P" ;; esac
N_TESTS=7
N=5000

n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "# $l"; done; }
skip_all() { echo "1..$N_TESTS"; while [ $n -lt $N_TESTS ]; do n=$((n + 1)); echo "ok $n - # SKIP $1"; done; exit 0; }
check() {
	name=$1
	shift
	if eval "$*"; then ok "$name"; else not_ok "$name" "failed: $*"; sed 's/^/#   /' "$T/err" | head -20; fi
}

[ "$(id -u)" = 0 ] || skip_all "needs root"
command -v jq >/dev/null || skip_all "needs jq"
command -v unshare >/dev/null || skip_all "needs unshare (util-linux)"
if [ -z "${PERFRING_TEST_NS:-}" ]; then
	PERFRING_TEST_NS=1 exec unshare -m --propagation private "$0" "$@"
fi

echo "1..$N_TESTS"
T=$(mktemp -d "${TMPDIR:-/tmp}/test_watch_bpf.XXXXXX") || exit 1
cleanup() {
	umount "$T/bpffs" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
if ! mkdir "$T/bpffs" || ! mount -t bpf bpf "$T/bpffs"; then
	while [ $n -lt $N_TESTS ]; do n=$((n + 1)); echo "ok $n - # SKIP cannot mount a bpffs"; done
	exit 0
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
$TO "$W" --bpf-map "$PIN" --dump -d 1 >"$T/out" 2>"$T/err"
rc=$?
check "--dump without --json: exit 2" '[ $rc = 2 ] && grep -q -- "--dump needs --json" "$T/err"'
