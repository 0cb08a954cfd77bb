#!/bin/sh
# SPDX-License-Identifier: MIT
# perfring-watch --by, --print, --filter and the TTY screen (TAP; the test
# itself is tools/tests/watch_by.py, in Debian's python3).
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "1..0 # SKIP $PY is not installed"; exit 0; }
PYTHONPATH="${top_srcdir:-.}/tests" exec timeout -k 5 120 "$PY" "${top_srcdir:-.}/tools/tests/watch_by.py"
