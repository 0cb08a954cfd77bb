#!/bin/sh
# SPDX-License-Identifier: MIT
# The Node.js addon's tests (bindings/node/test, node --test), as TAP. The
# package is laid out as `make install` lays it out, in a temporary
# node_modules, so the tests load exactly what would be installed.
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
addon="$top_builddir/bindings/node/.libs/perfring.node"
NODE=${NODE:-node}

if ! command -v "$NODE" >/dev/null || [ ! -f "$addon" ]; then
	echo "1..0 # SKIP node or bindings/node/.libs/perfring.node is missing"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "1..0 # SKIP the addon's tests open perf events and need root"
	exit 0
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/test_node.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 1' INT TERM HUP
pkg="$T/node_modules/perfring"
mkdir -p "$pkg"
cp "$top_srcdir/bindings/node/index.js" "$top_srcdir/bindings/node/package.json" "$pkg/" &&
	cp "$addon" "$pkg/" || exit 1
getpid_n="$top_builddir/tests/getpid_n"
case $getpid_n in /*) ;; *) getpid_n="$PWD/$getpid_n" ;; esac
# A sanitizer build's addon needs its runtime loaded first.
preload=""
for lib in $(readelf -d "$addon" 2>/dev/null | sed -n 's/.*NEEDED.*\[\(lib[a-z]*san\.so[.0-9]*\)\].*/\1/p'); do
	preload="$preload $(${CC:-cc} -print-file-name="$lib")"
done
TO=""
command -v timeout >/dev/null && TO="timeout -k 5 120"
NODE_PATH="$T/node_modules" PERFRING_GETPID_N="$getpid_n" \
	LD_PRELOAD="${preload# }" ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}" \
	$TO "$NODE" --test --test-reporter=tap "$top_srcdir"/bindings/node/test/*.test.js
