# `make bench`: every benchmark, each appending its table to bench/RESULTS.md
# (or $PERFRING_RESULTS). bench/run.sh lists them.
EXTRA_DIST += bench/run.sh bench/RESULTS.md
bench: all
	abs_top_builddir='$(abs_top_builddir)' abs_top_srcdir='$(abs_top_srcdir)' \
		$(SHELL) $(top_srcdir)/bench/run.sh
.PHONY: bench
