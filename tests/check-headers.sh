#!/bin/sh
# The public headers (TAP): each part of <perfring/perfring.h> compiles alone,
# twice in a row, in C11 and (with a C++ compiler) in C++11, with warnings as
# errors, and the umbrella includes every part.
set -u
inc="${top_srcdir:-.}/core/include"
cc=${CC:-cc}
cxx=
for c in "${CXX:-}" g++ clang++ c++; do
	[ -n "$c" ] && command -v "$c" >/dev/null 2>&1 && { cxx=$c; break; }
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
parts=
for h in "$inc"/perfring/*.h; do
	[ -f "$h" ] && [ "${h##*/}" != perfring.h ] && parts="$parts ${h##*/}"
done
[ -n "$parts" ] || { echo "1..0 # SKIP no headers in $inc/perfring"; exit 0; }
n=0
# shellcheck disable=SC2086 # the names are words
set -- $parts
echo "1..$(($# * 3 + 1))"

compiles() { # DESCRIPTION COMPILER LANG STD FILE
	n=$((n + 1))
	if "$2" -x "$3" -std="$4" -Wall -Wextra -Werror -pedantic -fsyntax-only \
		-I"$inc" "$5" >"$tmp/err" 2>&1; then
		echo "ok $n - $1"
	else
		echo "not ok $n - $1"; sed 's/^/# /' "$tmp/err"
	fi
}

for h in $parts; do
	printf '#include <perfring/%s>\n#include <perfring/%s>\nint x;\n' "$h" "$h" >"$tmp/t.c"
	compiles "perfring/$h compiles alone (C11)" "$cc" c c11 "$tmp/t.c"
	if [ -n "$cxx" ]; then
		compiles "perfring/$h compiles alone (C++11)" "$cxx" c++ c++11 "$tmp/t.c"
	else
		n=$((n + 1)); echo "ok $n - perfring/$h in C++ # SKIP no C++ compiler"
	fi
	# The guard of each part: PERFRING_<NAME>_H, defined once perfring.h is in.
	g=PERFRING_$(echo "${h%.h}" | tr '[:lower:]-' '[:upper:]_')_H
	printf '#include <perfring/perfring.h>\n#ifndef %s\n#error perfring.h does not include perfring/%s\n#endif\nint x;\n' \
		"$g" "$h" >"$tmp/u.c"
	compiles "perfring.h includes perfring/$h" "$cc" c c11 "$tmp/u.c"
done
printf '#include <perfring/perfring.h>\nint x;\n' >"$tmp/p.c"
compiles "perfring/perfring.h compiles alone (C11)" "$cc" c c11 "$tmp/p.c"
