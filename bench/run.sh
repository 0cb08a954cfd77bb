#!/bin/sh
# Runs every built benchmark in order, each appending its markdown table to
# bench/RESULTS.md, then draws bench/wakeup-tradeoff.png from bench/wakeups'
# watermark rows. `make bench` calls this with abs_top_builddir and
# abs_top_srcdir set. Exits non-zero if any program (or the plot) fails.
set -u

: "${abs_top_builddir:?set abs_top_builddir (make bench does)}"
: "${abs_top_srcdir:?set abs_top_srcdir (make bench does)}"

results="$abs_top_srcdir/bench/RESULTS.md"
marker='<!-- make bench: tables of the last run below -->'
PERFRING_RESULTS=$results
PERFRING_PLOT_DATA=$abs_top_builddir/bench/wakeup-tradeoff.dat
export PERFRING_RESULTS PERFRING_PLOT_DATA

start=$(date +%s)
status=0

# Keep the header (down to the marker); the tables below it are this run's.
reset_results() {
	if [ -f "$results" ] && grep -qF "$marker" "$results"; then
		sed "/^$marker\$/q" "$results" > "$results.tmp" && mv "$results.tmp" "$results"
	else
		printf '# libperfring benchmark results\n\n%s\n' "$marker" > "$results"
	fi
	printf '\n' >> "$results"
}

# run NAME [ARGS...]: bench/NAME from the build directory, if it was built.
run() {
	name=$1
	shift
	if [ ! -x "bench/$name" ]; then
		echo "bench: bench/$name is not built; skipped"
		return
	fi
	echo "== bench/$name $*"
	t0=$(date +%s)
	if ! "bench/$name" "$@"; then
		echo "bench: bench/$name FAILED"
		status=1
	fi
	echo "== bench/$name took $(( $(date +%s) - t0 )) s"
}

plot() {
	if ! command -v gnuplot > /dev/null 2>&1; then
		echo "bench: gnuplot not found (apt-get install gnuplot-nox); no picture drawn"
		return
	fi
	if [ ! -s "$PERFRING_PLOT_DATA" ]; then
		echo "bench: no data for the picture (bench/wakeups did not run)"
		return
	fi
	if gnuplot -e "datafile='$PERFRING_PLOT_DATA'" \
		-e "outfile='$abs_top_srcdir/bench/wakeup-tradeoff.png'" \
		"$abs_top_srcdir/bench/plot.gp"; then
		echo "== bench/wakeup-tradeoff.png drawn"
	else
		echo "bench: gnuplot FAILED"
		status=1
	fi
}

cd "$abs_top_builddir" || exit 1
reset_results
run parse
run merge
run wakeups -n 60000 -r 3
run kernel -n 1000000 -N 60000 -r 7
run idle -d 10
run pause -r 5
plot
echo "bench: total $(( $(date +%s) - start )) s; results in $results"
exit $status
