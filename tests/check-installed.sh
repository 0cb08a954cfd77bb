#!/bin/sh
# Compiles and runs a program against the installed copy using only
# `pkg-config --cflags --libs perfring` (make installcheck).
set -eu
destdir="$1"; prefix="$2"; cc="$3"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pcdir="$destdir$prefix/lib/pkgconfig"
[ -d "$pcdir" ] || pcdir=$(dirname "$(find "$destdir$prefix" -name perfring.pc | head -1)")
cat > "$tmp/t.c" <<'C'
#include <perfring/perfring.h>
#include <stdio.h>
int main(void)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 3 };
	struct perfring_session *s = NULL;
	int err = perfring_session_new(&o, &s);
	printf("version %d, new(ring_pages=3) = %d: %s\n", perfring_version(), err,
	       perfring_session_last_error(NULL));
	return err == -22 && perfring_version() == PERFRING_VERSION ? 0 : 1;
}
C
flags=$(PKG_CONFIG_PATH="$pcdir" pkg-config --define-prefix --cflags --libs perfring)
# shellcheck disable=SC2086
$cc "$tmp/t.c" -o "$tmp/t" $flags
LD_LIBRARY_PATH="$destdir$prefix/lib" "$tmp/t"
# Every public header of the source tree is installed and compiles alone.
cflags=$(PKG_CONFIG_PATH="$pcdir" pkg-config --define-prefix --cflags perfring)
incdir=$(PKG_CONFIG_PATH="$pcdir" pkg-config --define-prefix --variable=includedir perfring)
n=0
for h in "$(dirname "$0")"/../core/include/perfring/*.h; do
	h=${h##*/}; n=$((n + 1))
	[ -f "$incdir/perfring/$h" ] ||
		{ echo "installcheck: <perfring/$h> is not installed in $incdir"; exit 1; }
	printf '#include <perfring/%s>\nint x;\n' "$h" >"$tmp/h.c"
	# shellcheck disable=SC2086
	$cc -std=c11 -Wall -Wextra -Werror -fsyntax-only $cflags "$tmp/h.c" ||
		{ echo "installcheck: <perfring/$h> does not compile alone"; exit 1; }
done
# Every installed shared library's exports carry a version node (abi/*.map):
# a program linked against them records PERFRING_0.1 and its kin.
libdir=$(PKG_CONFIG_PATH="$pcdir" pkg-config --define-prefix --variable=libdir perfring)
nl=0
for so in "$libdir"/libperfring*.so; do
	nl=$((nl + 1))
	bad=$(objdump -T "$so" | awk '!/\*UND\*/ && $NF ~ /^perfring_/ && $(NF-1) !~ /^PERFRING_[A-Z_]*[0-9.]+$/ {print $NF}')
	[ -z "$bad" ] || { echo "installcheck: $so exports without a version node: $bad"; exit 1; }
done
[ "$nl" -gt 0 ] || { echo "installcheck: no libperfring*.so in $libdir"; exit 1; }
objdump -T "$tmp/t" | grep -Eq '\(PERFRING_0\.1\) +perfring_session_new$' ||
	{ echo "installcheck: the program does not bind perfring_session_new@PERFRING_0.1"; exit 1; }
echo "installcheck: built and ran against $destdir$prefix with pkg-config only; each of $n headers compiles alone; $nl libraries version every export"
