# bench/plot.gp: the wakeup trade-off, from bench/wakeups' watermark rows.
#   gnuplot -e "datafile='bench/wakeup-tradeoff.dat'" \
#           -e "outfile='bench/wakeup-tradeoff.png'" bench/plot.gp
# The data file has: watermark_bytes wakeups_per_1000 p99_us p50_us
# (bench/run.sh passes both names; `make bench` runs it).
if (!exists("datafile")) datafile = 'wakeup-tradeoff.dat'
if (!exists("outfile")) outfile = 'wakeup-tradeoff.png'

set terminal pngcairo size 960,600 enhanced font "sans,11"
set output outfile
set encoding utf8

set title "Kernel wakeup watermark: consumer wakeups against delivery latency\n{/*0.8 getpid stream, 64-page rings, libperfring parse\\_until; medians of interleaved rounds}"
set xlabel "wakeup watermark (bytes, log scale)"
set ylabel "consumer wakeups per 1,000 records (log scale)"
set y2label "delivery latency, µs (log scale)"
set logscale x 2
set logscale y 10
set logscale y2 10
set xrange [32:262144]
set xtics ("64 B" 64, "256 B" 256, "1 KiB" 1024, "4 KiB" 4096, "16 KiB" 16384, \
	"64 KiB" 65536, "128 KiB" 131072)
set ytics nomirror
set y2tics
set format y "%g"
set format y2 "%g"
set grid xtics ytics
set key below box
set bmargin 6

plot datafile using 1:2 axes x1y1 with linespoints lw 2 pt 7 ps 1.3 lc rgb "#1f77b4" \
	title "wakeups / 1,000 records", \
     '' using 1:3 axes x1y2 with linespoints lw 2 pt 5 ps 1.2 lc rgb "#d62728" \
	title "p99 latency (µs)", \
     '' using 1:4 axes x1y2 with linespoints lw 1.5 dt 2 pt 4 ps 1.0 lc rgb "#ff7f0e" \
	title "p50 latency (µs)"
