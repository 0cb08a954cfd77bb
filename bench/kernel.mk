# Real-kernel benchmarks (root or CAP_PERFMON, tracefs, CPUs 0 and 1):
# bench/wakeups, bench/kernel, bench/idle. `make bench` runs them through
# bench/run.sh; each appends its table to $PERFRING_RESULTS. They use only the
# public API (libkbench holds what they share).
noinst_LTLIBRARIES += bench/libkbench.la
bench_libkbench_la_SOURCES = bench/kbench.c bench/kbench.h

# -no-install: real binaries, not libtool wrappers, so the command line each
# table records is the one run.sh typed.
noinst_PROGRAMS += bench/wakeups bench/kernel bench/idle bench/pause
bench_wakeups_SOURCES = bench/wakeups.c
bench_wakeups_LDADD = bench/libkbench.la core/libperfring.la
bench_wakeups_LDFLAGS = $(AM_LDFLAGS) -no-install
bench_idle_SOURCES = bench/idle.c
bench_idle_LDADD = bench/libkbench.la core/libperfring.la
bench_idle_LDFLAGS = $(AM_LDFLAGS) -no-install
bench_pause_SOURCES = bench/pause.c
bench_pause_LDADD = bench/libkbench.la core/libperfring.la
bench_pause_LDFLAGS = $(AM_LDFLAGS) -no-install

# bench/kernel compares against whatever is built: libbpf, and each adapter.
bench_kernel_SOURCES = bench/kernel.c tests/kbpf.c tests/kbpf.h
bench_kernel_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
bench_kernel_CFLAGS = $(AM_CFLAGS)
bench_kernel_LDADD = bench/libkbench.la
bench_kernel_LDFLAGS = $(AM_LDFLAGS) -no-install
if HAVE_LIBBPF
bench_kernel_CPPFLAGS += -DKB_WITH_LIBBPF
bench_kernel_CFLAGS += $(LIBBPF_CFLAGS)
bench_kernel_LDADD += $(LIBBPF_LIBS)
endif
if BUILD_UV
bench_kernel_CPPFLAGS += -DKB_WITH_UV -I$(top_srcdir)/adapters/uv/include
bench_kernel_CFLAGS += $(LIBUV_CFLAGS)
bench_kernel_LDADD += adapters/uv/libperfring-uv.la $(LIBUV_LIBS)
endif
if BUILD_EVENT
bench_kernel_CPPFLAGS += -DKB_WITH_EVENT -I$(top_srcdir)/adapters/event/include
bench_kernel_CFLAGS += $(LIBEVENT_CFLAGS)
bench_kernel_LDADD += adapters/event/libperfring-event.la $(LIBEVENT_LIBS)
endif
# libev also exports a libevent emulation (event_add, ...): libevent must come
# first in the link, or libperfring-event's calls would bind to libev's.
if BUILD_EV
bench_kernel_CPPFLAGS += -DKB_WITH_EV -I$(top_srcdir)/adapters/ev/include
bench_kernel_LDADD += adapters/ev/libperfring-ev.la $(LIBEV_LIBS)
endif
bench_kernel_LDADD += core/libperfring.la

EXTRA_DIST += bench/plot.gp
