#!/bin/sh
# Runs one Criterion program under valgrind (memcheck, leaks = errors).
# Valgrind follows Criterion's forked workers by itself; exec'd helpers (the
# tests' /bin/true and shells) are not traced. Criterion ignores how a
# worker exits, so valgrind's reports are also looked for in the output.
prog="$1"; shift
bin="$prog"
[ -x "$(dirname "$prog")/.libs/$(basename "$prog")" ] && bin="$(dirname "$prog")/.libs/$(basename "$prog")"
err=$(mktemp) || exit 1
trap 'rm -f "$err"' EXIT
env PERFRING_UNDER_VALGRIND=1 LD_LIBRARY_PATH="$(dirname "$prog")/../core/.libs" \
	valgrind -q --vgdb=no --error-exitcode=1 --leak-check=full \
	--errors-for-leak-kinds=definite --trace-children=yes \
	--trace-children-skip='*/true,*/sh' \
	"$bin" --tap=/dev/stdout --jobs 1 "$@" 2>"$err"
rc=$?
cat "$err" >&2
if grep -qE '^==[0-9]+== (Invalid (read|write|free)|Mismatched free|Conditional jump or move depends on uninitialised|Use of uninitialised|Syscall param .* uninitialised|.* are definitely lost)' "$err"; then
	echo "Bail out! valgrind reported errors in $prog (see its .log)"
	exit 1
fi
exit $rc
