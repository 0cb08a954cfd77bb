#!/bin/sh
# Runs one Criterion program with its TAP report on stdout, for automake's
# TAP driver; Criterion's own report goes to stderr (the test's .log).
# Kernel tests share the machine's CPUs, so tests run one at a time.
prog="$1"; shift
exec "$prog" --tap=/dev/stdout --jobs 1 "$@"
