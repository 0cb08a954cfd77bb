#!/usr/bin/env bash
# The ABI guard of the four shared libraries (scripts/dev abi-check and
# abi-update run this from the top of the tree):
#   abi/abi.sh check   build build-abi/, abidiff each library against its
#                      baseline abi/<lib>.abi: a removed or changed function,
#                      variable or public type fails, an addition passes;
#                      abi/VERSION must be configure.ac's library versions,
#                      and a commit (or the work tree) that rewrites a
#                      library's baseline or symbols file must change its
#                      version too
#   abi/abi.sh update  rewrite abi/VERSION, and abi/<lib>.abi and
#                      debian/<pkg>.symbols of each library whose version in
#                      configure.ac differs from HEAD's abi/VERSION (refused
#                      when none does)
# The baselines come from one kind of build only, so that they can be
# remade: its own tree, build-abi/, gcc with -g -O2 (abidw reads DWARF), no
# sanitizers, the four libraries and nothing else.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
tree=${ABI_TREE:-build-abi}

# library (as in abi/VERSION), configure.ac's variable, .la
libs=(
	"libperfring PERFRING_LT_VERSION core/libperfring.la"
	"libperfring-uv PERFRING_UV_LT_VERSION adapters/uv/libperfring-uv.la"
	"libperfring-event PERFRING_EVENT_LT_VERSION adapters/event/libperfring-event.la"
	"libperfring-ev PERFRING_EV_LT_VERSION adapters/ev/libperfring-ev.la"
)
# Debian binary package of each library (debian/<pkg>.symbols).
declare -A pkg_of=([libperfring]=libperfring0 [libperfring-uv]=libperfring-uv0
	[libperfring-event]=libperfring-event0 [libperfring-ev]=libperfring-ev0)

die() { echo "abi: $*" >&2; exit 1; }

build() {
	[ -x configure ] || ./autogen.sh >/dev/null 2>&1
	mkdir -p "$tree"
	if [ ! -f "$tree/Makefile" ] || [ "${RECONFIGURE:-}" = 1 ]; then
		(cd "$tree" && "$top/configure" CC=gcc CFLAGS="-g -O2" --with-libuv=yes \
			--with-libevent=yes --with-libev=yes --with-node=no >configure.out) ||
			{ cat "$tree/configure.out"; exit 1; }
	fi
	local las=() l
	for l in "${libs[@]}"; do set -- $l; las+=("$3"); done
	make -C "$tree" -j"$(nproc 2>/dev/null || echo 2)" "${las[@]}" >/dev/null
}

so_of() { # .la -> the built shared object
	local d; d=$(dirname "$1")
	echo "$tree/$d/.libs/$(basename "$1" .la).so"
}

# The versions configure.ac gives the libraries, in abi/VERSION's format.
versions() {
	local l v
	for l in "${libs[@]}"; do
		set -- $l
		v=$(sed -n "s/^AC_SUBST(\[$2\], \[\([0-9]*:[0-9]*:[0-9]*\)\])/\1/p" configure.ac)
		[ -n "$v" ] || die "configure.ac sets no $2"
		echo "$1 $v"
	done
}

recorded() { grep -v '^#' "$1" 2>/dev/null || true; }

# True when PATHS differ between two states (a commit, or "" for the
# work tree, tracked or not).
differs() { # FROM TO PATHS...
	local from=$1 to=$2; shift 2
	if [ -z "$to" ]; then
		! git diff --quiet "$from" -- "$@" ||
			[ -n "$(git ls-files -o --exclude-standard -- "$@")" ]
	else
		! git diff --quiet "$from" "$to" -- "$@"
	fi
}

# The version abi/VERSION gives LIB at a commit ("" for the work tree).
version_at() { # COMMIT LIB
	if [ -z "$1" ]; then recorded abi/VERSION; else git show "$1:abi/VERSION" 2>/dev/null | grep -v '^#'; fi |
		awk -v l="$2" '$1 == l {print $2}'
}

# A step that rewrites a library's baseline or symbols file and keeps its
# line of abi/VERSION fails. Steps: the last commit (HEAD^ -> HEAD) and the
# work tree (HEAD -> files). A step whose start has no abi/VERSION makes the
# first baselines and is free.
history() {
	git rev-parse --git-dir >/dev/null 2>&1 || { echo "abi: not a git tree: history not checked"; return 0; }
	local steps=() s from to l
	git rev-parse -q --verify HEAD^ >/dev/null && steps+=("HEAD^ HEAD")
	steps+=("HEAD -")
	for s in "${steps[@]}"; do
		set -- $s; from=$1; to=${2#-}
		git cat-file -e "$from:abi/VERSION" 2>/dev/null || continue
		for l in "${libs[@]}"; do
			set -- $l
			if differs "$from" "$to" "abi/$1.abi" "debian/${pkg_of[$1]}.symbols" &&
				[ "$(version_at "$from" "$1")" = "$(version_at "$to" "$1")" ]; then
				die "${to:-the work tree} rewrites abi/$1.abi or debian/${pkg_of[$1]}.symbols" \
					"but keeps $1's version in abi/VERSION (from $from): a baseline moves only" \
					"with a library version change (configure.ac's $2, then scripts/dev abi-update)"
			fi
		done
	done
}

abidiff_one() { # NAME .la
	local base="abi/$1.abi" so rc=0
	so=$(so_of "$2")
	[ -f "$base" ] || die "no baseline $base (scripts/dev abi-update makes it)"
	# --no-added-syms: additions pass; abi/suppressions: only what the
	# public headers define is the ABI. Exit bits: 1 error, 2 usage,
	# 4 change, 8 incompatible change.
	abidiff --no-added-syms --suppressions abi/suppressions "$base" "$so" \
		>"$tree/$1.abidiff" || rc=$?
	if ((rc)); then
		cat "$tree/$1.abidiff"
		echo "abi: $1 differs from $base (abidiff exit $rc:$( ((rc & 1)) && echo ' error')$( ((rc & 2)) && echo ' usage')$( ((rc & 4)) && echo ' ABI change')$( ((rc & 8)) && echo ' incompatible change'))" >&2
		return 1
	fi
	echo "abi: $1: no removed or changed symbol or type against $base"
}

check() {
	local want got l fail=0
	want=$(versions); got=$(recorded abi/VERSION)
	[ "$want" = "$got" ] || die "abi/VERSION records"$'\n'"$got"$'\n'"configure.ac says"$'\n'"$want"$'\n'"a library version changed: scripts/dev abi-update rewrites the baselines for it"
	history
	build
	for l in "${libs[@]}"; do
		set -- $l
		abidiff_one "$1" "$3" || fail=1
	done
	return $fail
}

# Rewrites the baselines of the libraries whose version in configure.ac is
# not HEAD's abi/VERSION's (all of them when HEAD has none).
update() {
	local l so pkg ver cur n=0
	build
	ver=$(sed -n 's/^AC_INIT(\[[^]]*\], \[\([^]]*\)\].*/\1/p' configure.ac)
	for l in "${libs[@]}"; do
		set -- $l
		cur=$(versions | awk -v l="$1" '$1 == l {print $2}')
		if git cat-file -e HEAD:abi/VERSION 2>/dev/null &&
			[ "$(version_at HEAD "$1")" = "$cur" ]; then
			echo "abi: $1 is still $cur as in HEAD's abi/VERSION: its baseline stays"
			continue
		fi
		so=$(so_of "$3")
		# Paths relative to the tree, so that any checkout writes the same file.
		abidw --no-comp-dir-path --no-corpus-path "$so" |
			sed "s|filepath='$top/|filepath='|g" >"abi/$1.abi"
		pkg=${pkg_of[$1]}
		# dpkg-gensymbols keeps the version of every symbol already listed and
		# gives a new one this release's; -c0: a removal was abidiff's to refuse.
		touch "debian/$pkg.symbols"
		dpkg-gensymbols -c0 -q -p"$pkg" -v"$ver" -e"$so" -I"debian/$pkg.symbols" \
			-O"debian/$pkg.symbols.new"
		{ sed -n '1p' "debian/$pkg.symbols.new"
		  echo "* Build-Depends-Package: libperfring-dev"
		  sed -n '/^ /p' "debian/$pkg.symbols.new"; } >"debian/$pkg.symbols"
		rm -f "debian/$pkg.symbols.new"
		n=$((n + 1))
		echo "abi: wrote abi/$1.abi ($(grep -c '<elf-symbol ' "abi/$1.abi") symbols) and debian/$pkg.symbols for $1 $cur"
	done
	((n)) || die "no library version changed since HEAD's abi/VERSION: a baseline moves only" \
		"with a version change in the same commit (bump configure.ac's PERFRING_*_LT_VERSION first)"
	{ echo "# The library versions (configure.ac's -version-info) abi/*.abi were recorded"
	  echo "# for; written by scripts/dev abi-update, checked by scripts/dev abi-check."
	  versions; } >abi/VERSION
}

case "${1:-}" in
check) check ;;
update) update ;;
*) echo "usage: $0 check|update" >&2; exit 2 ;;
esac
