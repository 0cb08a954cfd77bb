#!/bin/sh
# The shared libraries export nothing but perfring_*, and every exported
# symbol carries a version node of its library's script, abi/<lib>.map (TAP).
set -u
echo "1..2"
b=${top_builddir:-.}
libs=$(ls "$b"/core/.libs/libperfring.so "$b"/adapters/*/.libs/libperfring-*.so 2>/dev/null)
if [ -z "$libs" ]; then
	echo "not ok 1 - no shared library built"; echo "not ok 2 - no shared library built"; exit 0
fi
bad=$(for l in $libs; do nm -D --defined-only "$l" | awk '$2 ~ /^[TDBRVW]$/ {print $3}'; done | grep -v '^perfring_' | sort -u)
if [ -n "$bad" ]; then
	echo "not ok 1 - unexpected exported symbols:"; echo "$bad" | sed 's/^/# /'
else
	echo "ok 1 - only perfring_* exported from $(echo $libs | wc -w) libraries ($(for l in $libs; do nm -D --defined-only "$l"; done | grep -c ' T perfring_') functions)"
fi
# objdump -T: "ADDR FLAGS SECTION SIZE VERSION NAME"; a symbol without a
# node shows "Base" (or nothing), one of a foreign node that node's name.
unversioned="" n=0
for l in $libs; do
	map="${srcdir:-.}/abi/$(basename "$l" .so).map"
	if [ ! -f "$map" ]; then unversioned="$unversioned $l:(no $map)"; continue; fi
	nodes=$(sed -n 's/^\([A-Z][A-Z0-9_.]*\) *{.*/\1/p' "$map")
	syms=$(objdump -T "$l" | awk '!/\*UND\*/ && $NF ~ /^perfring_/ {print $(NF-1) "@" $NF}')
	for s in $syms; do
		n=$((n + 1))
		echo "$nodes" | grep -qx "${s%%@*}" || unversioned="$unversioned $(basename "$l"):$s"
	done
done
if [ -n "$unversioned" ]; then
	echo "not ok 2 - symbols without their library's version node (abi/*.map):"
	for s in $unversioned; do echo "# $s"; done
else
	echo "ok 2 - each of $n exported symbols carries its library's version node"
fi
