# BPF output (issue 18) on the real kernel with a real BPF program given as
# raw instructions (tests/kbpf.c): the core's calls, and the three adapters.
if HAVE_CRITERION
check_PROGRAMS += tests/test_bpf
TESTS += tests/test_bpf
tests_test_bpf_SOURCES = tests/test_bpf.c tests/test_bpf_faults.c tests/kbpf.c tests/kbpf.h
tests_test_bpf_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS)
tests_test_bpf_LDADD = tests/libkutil.la core/libperfring-core.la $(CRITERION_LIBS)
endif

if HAVE_CRITERION
if BUILD_UV
if BUILD_EVENT
if BUILD_EV
check_PROGRAMS += tests/test_bpf_loops
TESTS += tests/test_bpf_loops
tests_test_bpf_loops_SOURCES = tests/test_bpf_loops.c tests/test_bpf_loops_event.c \
	tests/test_bpf_loops_ev.c tests/bpfloops.h tests/kbpf.c tests/kbpf.h
tests_test_bpf_loops_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/adapters/uv/include \
	-I$(top_srcdir)/adapters/event/include -I$(top_srcdir)/adapters/ev/include
tests_test_bpf_loops_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS) $(LIBUV_CFLAGS) \
	$(LIBEVENT_CFLAGS) $(LIBEV_CFLAGS)
tests_test_bpf_loops_LDADD = adapters/uv/libperfring-uv.la \
	adapters/event/libperfring-event.la adapters/ev/libperfring-ev.la core/libperfring.la \
	tests/libkutil.la $(LIBUV_LIBS) $(LIBEVENT_LIBS) $(LIBEV_LIBS) $(CRITERION_LIBS)
endif
endif
endif
endif
EXTRA_DIST += tests/test_bpf_loops.c tests/test_bpf_loops_event.c tests/test_bpf_loops_ev.c \
	tests/bpfloops.h

# perfring-watch --bpf-map against a pin another process (tests/bpfpin) made:
# a PERF_EVENT_ARRAY, or with --ringbuf a RINGBUF (tools/tests/test_watch_ringbuf.sh).
check_PROGRAMS += tests/bpfpin
tests_bpfpin_SOURCES = tests/bpfpin.c tests/kbpf.c tests/kbpf.h
tests_bpfpin_CFLAGS = $(AM_CFLAGS)
tests_bpfpin_LDFLAGS = -pthread
TESTS += tests/test_watch_bpf.sh
EXTRA_DIST += tests/test_watch_bpf.sh
