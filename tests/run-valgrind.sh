#!/bin/sh
# Runs one Criterion program under valgrind (memcheck, leaks = errors).
# Criterion forks a worker per test: follow children, but not exec'd ones.
prog="$1"; shift
[ -x "$(dirname "$prog")/.libs/$(basename "$prog")" ] && bin="$(dirname "$prog")/.libs/$(basename "$prog")" || bin="$prog"
exec env PERFRING_UNDER_VALGRIND=1 LD_LIBRARY_PATH="$(dirname "$prog")/../core/.libs" valgrind -q --vgdb=no --error-exitcode=1 \
	--leak-check=full --errors-for-leak-kinds=definite --trace-children=yes \
	--trace-children-skip='*/true,*/sh' \
	"$bin" --tap=/dev/stdout --jobs 1 "$@"
