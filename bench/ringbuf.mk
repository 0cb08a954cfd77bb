# bench/ringbuf: a BPF ring buffer read by libbpf's ring_buffer__poll and by
# libperfring (the session's wait, a loop of one's own, the uv adapter) on the
# same program (tests/kbpf.c) and map size. Built by make, run by hand (root;
# see bench/RESULTS.md for the command); libbpf is linked here only.
if HAVE_LIBBPF
if BUILD_UV
noinst_PROGRAMS += bench/ringbuf
bench_ringbuf_SOURCES = bench/ringbuf.c tests/kbpf.c tests/kbpf.h
bench_ringbuf_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests -I$(top_srcdir)/adapters/uv/include
bench_ringbuf_CFLAGS = $(AM_CFLAGS) $(LIBBPF_CFLAGS) $(LIBUV_CFLAGS)
bench_ringbuf_LDADD = bench/libkbench.la adapters/uv/libperfring-uv.la core/libperfring.la \
	$(LIBBPF_LIBS) $(LIBUV_LIBS)
bench_ringbuf_LDFLAGS = $(AM_LDFLAGS) -no-install
endif
endif
EXTRA_DIST += bench/ringbuf.c
