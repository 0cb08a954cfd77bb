#!/bin/sh
# SPDX-License-Identifier: MIT
# Two builds of bench/kernel side by side: ROUNDS rounds, each running the
# old build's rows then the new one's (one round each), and per row the
# median of the per-round ratio new/old of CPU per 1,000 records, with the
# smallest and largest round's ratio (this machine's noise).
#   bench/pair.sh OLD_BUILDDIR NEW_BUILDDIR [ROUNDS (default 5)] [ROWS]
set -eu
old=$1 new=$2 rounds=${3:-5} rows=${4:-wm4k,l2,uv,event,ev}
out=${TMPDIR:-/tmp}/prpair.$$
mkdir -p "$out"
trap 'rm -rf "$out"' EXIT

# "row label<TAB>CPU us / 1k" of one bench/kernel report
cpu_rows() {
	awk -F'|' '/^\| [a-z0-9]+ \| libperfring/ { gsub(/^ +| +$/, "", $2); gsub(/^ +| +$/, "", $3);
		gsub(/^ +| +$/, "", $4); print $2 " " $3 "\t" $4 }' "$1"
}

for r in $(seq 1 "$rounds"); do
	"$old/bench/kernel" -c "$rows" -r 1 >"$out/old.$r" 2>/dev/null
	"$new/bench/kernel" -c "$rows" -r 1 >"$out/new.$r" 2>/dev/null
	cpu_rows "$out/old.$r" >"$out/o"
	cpu_rows "$out/new.$r" >"$out/n"
	paste "$out/o" "$out/n" | awk -F'\t' -v r="$r" '{ print r "\t" $1 "\t" $2 "\t" $4 "\t" $4 / $2 }' \
		>>"$out/all"
done
echo "| row | old CPU µs/1k (median) | new CPU µs/1k (median) | new/old, median of $rounds rounds | rounds (min-max) |"
echo "|---|---|---|---|---|"
cut -f2 "$out/all" | awk '!seen[$0]++' | while IFS= read -r row; do
	awk -F'\t' -v row="$row" '$2 == row' "$out/all" >"$out/row"
	med() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
	o=$(cut -f3 "$out/row" | med) n=$(cut -f4 "$out/row" | med) x=$(cut -f5 "$out/row" | med)
	lo=$(cut -f5 "$out/row" | sort -g | head -1) hi=$(cut -f5 "$out/row" | sort -g | tail -1)
	printf '| %s | %.1f | %.1f | %.3f | %.3f-%.3f |\n' "$row" "$o" "$n" "$x" "$lo" "$hi"
done
