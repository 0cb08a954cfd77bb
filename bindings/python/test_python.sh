#!/bin/sh
# SPDX-License-Identifier: MIT
# The Python module's tests (bindings/python/tests, pytest with
# pytest-asyncio), as TAP. The package is laid out as `make install` lays it
# out, in a temporary directory, so the tests import exactly what would be
# installed, with Debian's /usr/bin/python3 (PYTHON3 overrides it).
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
PY=${PYTHON3:-/usr/bin/python3}
so=$(ls "$top_builddir"/bindings/python/.libs/_perfring*.so 2>/dev/null | head -n 1)

if [ ! -x "$PY" ] || [ -z "$so" ]; then
	echo "1..0 # SKIP $PY or bindings/python/.libs/_perfring*.so is missing"
	exit 0
fi
if ! "$PY" -c 'import pytest, pytest_asyncio' 2>/dev/null; then
	echo "1..0 # SKIP $PY has no pytest and pytest-asyncio (python3-pytest, python3-pytest-asyncio)"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "1..0 # SKIP the module's tests open perf events and need root"
	exit 0
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/test_python.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 1' INT TERM HUP
mkdir -p "$T/perfring" &&
	cp "$top_srcdir"/bindings/python/perfring/*.py "$so" "$T/perfring/" || exit 1
abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
getpid_n=$(abs "$top_builddir/tests/getpid_n")
tests=$(abs "$top_srcdir/bindings/python/tests")
# A sanitizer build's module needs its runtime loaded first (python3 itself
# is not built with it); leaks are the interpreter's, not checked.
# gcc's module names libasan and libubsan (NEEDED); clang's links no runtime
# into a shared object, so its ASan runtime (with UBSan's handlers) is
# preloaded when the module needs __asan_init.
preload=""
for lib in $(readelf -d "$so" 2>/dev/null | sed -n 's/.*NEEDED.*\[\(lib[a-z]*san\.so[.0-9]*\)\].*/\1/p'); do
	preload="$preload $(${CC:-cc} -print-file-name="$lib")"
done
if [ -z "$preload" ] && readelf --dyn-syms "$so" 2>/dev/null | grep -q ' UND __asan_init'; then
	cc=${CC:-cc}
	readelf -p .comment "$so" 2>/dev/null | grep -q clang && cc=${CC:-clang}
	preload=$($cc -print-file-name="libclang_rt.asan-$(uname -m).so")
fi
TO=""
command -v timeout >/dev/null && TO="timeout -k 5 300"
# TAP goes to fd 3 (tests/conftest.py), pytest's own report to the log.
cd "$T" && PYTHONPATH="$T" PERFRING_GETPID_N="$getpid_n" PERFRING_TAP_FD=3 \
	PYTHONDONTWRITEBYTECODE=1 \
	LD_PRELOAD="${preload# }" ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}" \
	$TO "$PY" -m pytest -p no:cacheprovider -o asyncio_mode=auto -rA \
	--rootdir "$tests" "$tests" 3>&1 1>&2
rc=$?
# 0: all passed, 1: some failed (their "not ok" lines say which); any
# other status (interrupted, internal error, no tests) is a bail-out.
[ $rc -le 1 ] || echo "Bail out! pytest exited with status $rc"
exit 0
