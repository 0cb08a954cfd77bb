#!/bin/sh
# SPDX-License-Identifier: MIT
# The profiler's sample types against perf's decoding of the same samples
# (TAP; the test itself is tests/profile_perf.py, in Debian's python3).
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "1..0 # SKIP $PY is not installed"; exit 0; }
PYTHONPATH="${top_srcdir:-.}/tests" exec timeout -k 5 120 "$PY" "${top_srcdir:-.}/tests/profile_perf.py"
