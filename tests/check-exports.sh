#!/bin/sh
# The shared libraries export nothing but perfring_* (TAP).
set -u
echo "1..1"
libs=$(ls "${top_builddir:-.}"/core/.libs/libperfring.so "${top_builddir:-.}"/adapters/*/.libs/libperfring-*.so 2>/dev/null)
if [ -z "$libs" ]; then echo "not ok 1 - no shared library built"; exit 0; fi
bad=$(for l in $libs; do nm -D --defined-only "$l" | awk '$2 ~ /^[TDBRVW]$/ {print $3}'; done | grep -v '^perfring_' | sort -u)
if [ -n "$bad" ]; then
	echo "not ok 1 - unexpected exported symbols:"; echo "$bad" | sed 's/^/# /'
else
	echo "ok 1 - only perfring_* exported from $(echo $libs | wc -w) libraries ($(for l in $libs; do nm -D --defined-only "$l"; done | grep -c ' T perfring_') functions)"
fi
