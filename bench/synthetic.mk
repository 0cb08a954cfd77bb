# Synthetic (in-memory) benchmarks: they reach the library's internals, so
# they link the convenience library and the test-support library, which
# exists only when Criterion does (tests/local.mk).
if HAVE_CRITERION
BENCH_SYNTH_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/support
BENCH_SYNTH_CFLAGS = $(AM_CFLAGS) -O2
BENCH_SYNTH_LDADD = tests/libprtest.la core/libperfring-core.la

noinst_PROGRAMS += bench/parse bench/merge
bench_parse_SOURCES = bench/parse.c bench/benchutil.c bench/benchutil.h
bench_parse_CPPFLAGS = $(BENCH_SYNTH_CPPFLAGS)
bench_parse_CFLAGS = $(BENCH_SYNTH_CFLAGS)
bench_parse_LDADD = $(BENCH_SYNTH_LDADD)
bench_merge_SOURCES = bench/merge.c bench/benchutil.c bench/benchutil.h
bench_merge_CPPFLAGS = $(BENCH_SYNTH_CPPFLAGS)
bench_merge_CFLAGS = $(BENCH_SYNTH_CFLAGS)
bench_merge_LDADD = $(BENCH_SYNTH_LDADD)
endif
