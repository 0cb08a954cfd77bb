#!/bin/sh
# SPDX-License-Identifier: MIT
# perfring-exporter end to end (TAP; the test itself is tools/tests/exporter.py,
# in Debian's python3 with python3-prometheus-client, against Debian's
# prometheus).
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "1..0 # SKIP $PY is not installed"; exit 0; }
PYTHONPATH="${top_srcdir:-.}/tests" exec timeout -k 5 120 "$PY" "${top_srcdir:-.}/tools/tests/exporter.py"
