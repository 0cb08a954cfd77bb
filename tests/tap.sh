# SPDX-License-Identifier: MIT
# TAP helpers for the shell tests (sourced): ok, not_ok, skip, and check
# NAME COND..., which is ok when the shell condition holds and otherwise
# calls the test's own dump.
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "# $l"; done; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
# Kills the processes named (a test's background pids) and reaps its own, so
# that no exit path leaves one behind.
kill_bg() {
	for p in "$@"; do kill -KILL "$p" 2>/dev/null; done
	for p in "$@"; do wait "$p" 2>/dev/null; done
}
check() {
	name=$1
	shift
	if eval "$*"; then ok "$name"; else not_ok "$name" "failed: $*"; dump; fi
}
