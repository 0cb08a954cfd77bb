#!/bin/sh
# SPDX-License-Identifier: MIT
# examples/bpf-uv end to end (TAP): libbpf loads the clang-built program,
# libperfring-uv reads it; every getpid call the tool made arrives.
top_builddir=${top_builddir:-.}
E="$top_builddir/examples/bpf-uv"
echo "1..2"
if [ "$(id -u)" != 0 ]; then
	echo "ok 1 - # SKIP needs root"; echo "ok 2 - # SKIP needs root"; exit 0
fi
out=$(timeout -k 5 60 "$E" -n 5000 -d 1 2>&1)
rc=$?
echo "# $out"
if [ $rc = 0 ]; then echo "ok 1 - exit 0"; else echo "not ok 1 - exit $rc"; fi
case $out in
*"5000 records of 5000 calls, 0 lost, 0 short"*) echo "ok 2 - 5000 records of 5000 calls" ;;
*) echo "not ok 2 - 5000 records of 5000 calls" ;;
esac
