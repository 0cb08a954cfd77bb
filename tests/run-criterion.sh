#!/bin/sh
# Runs one Criterion program with its TAP report on stdout, for automake's
# TAP driver; Criterion's own report goes to stderr (the test's .log).
# Kernel tests share the machine's CPUs, so tests run one at a time.
# Criterion counts a test as passed even when its worker printed a sanitizer
# report (LeakSanitizer runs at the worker's exit), so stderr is checked too.
prog="$1"; shift
err=$(mktemp) || exit 1
trap 'rm -f "$err"' EXIT
"$prog" --tap=/dev/stdout --jobs 1 "$@" 2>"$err"
rc=$?
cat "$err" >&2
if grep -qE 'ERROR: (Leak|Address|Thread)Sanitizer|WARNING: ThreadSanitizer|runtime error:' "$err"; then
	echo "Bail out! sanitizer report in $prog's output (see its .log)"
	exit 1
fi
exit $rc
