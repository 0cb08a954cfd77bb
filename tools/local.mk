# perfring-watch: the live per-CPU view of ring delivery (the README's demo),
# its man page, and its TAP tests. It links every adapter that is built; each
# loop's glue is its own file (ev.h and event2/event.h cannot share one). Its
# epoll loop runs on examples/epoll-driver.c, the driver users copy.
bin_PROGRAMS += tools/perfring-watch
dist_man1_MANS = tools/watch/perfring-watch.1
tools_perfring_watch_SOURCES = tools/watch/main.c tools/watch/watch.h \
	tools/watch/args.c tools/watch/session.c tools/watch/child.c \
	tools/watch/run.c tools/watch/stats.c tools/watch/view.c \
	tools/watch/epoll.c examples/epoll-driver.c examples/epoll-driver.h \
	tools/watch/byview.c tools/watch/print.c tools/watch/recorder.c \
	tools/watch/fieldcount.c tools/watch/fieldcount.h tools/watch/textesc.c \
	tools/watch/textesc.h tools/watch/metrics.c tools/watch/bpf.c tools/watch/rbview.c \
	tools/watch/profile.c tools/watch/hotplug.c
tools_perfring_watch_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/examples
tools_perfring_watch_CFLAGS = $(AM_CFLAGS)
WATCH_ADAPTERS =
WATCH_LOOP_LIBS =
EXTRA_DIST += tools/watch/uv.c tools/watch/event.c tools/watch/ev.c \
	tools/watch/http.c tools/watch/perfring-exporter.1

if BUILD_UV
tools_perfring_watch_SOURCES += tools/watch/uv.c
tools_perfring_watch_CPPFLAGS += -I$(top_srcdir)/adapters/uv/include
tools_perfring_watch_CFLAGS += $(LIBUV_CFLAGS)
WATCH_ADAPTERS += adapters/uv/libperfring-uv.la
WATCH_LOOP_LIBS += $(LIBUV_LIBS)
endif
if BUILD_EVENT
tools_perfring_watch_SOURCES += tools/watch/event.c tools/watch/http.c
tools_perfring_watch_CPPFLAGS += -I$(top_srcdir)/adapters/event/include
tools_perfring_watch_CFLAGS += $(LIBEVENT_CFLAGS)
WATCH_ADAPTERS += adapters/event/libperfring-event.la
WATCH_LOOP_LIBS += $(LIBEVENT_LIBS)
endif
if BUILD_EV
tools_perfring_watch_SOURCES += tools/watch/ev.c
tools_perfring_watch_CPPFLAGS += -I$(top_srcdir)/adapters/ev/include
WATCH_ADAPTERS += adapters/ev/libperfring-ev.la
WATCH_LOOP_LIBS += $(LIBEV_LIBS)
endif
tools_perfring_watch_LDADD = $(WATCH_ADAPTERS) core/libperfring.la $(WATCH_LOOP_LIBS)

# perfring-exporter: the same program with WATCH_PROG set (the reference
# libevent server: /metrics from one event_base), so nothing is copied.
if BUILD_EVENT
bin_PROGRAMS += tools/perfring-exporter
man1_MANS = tools/watch/perfring-exporter.1
tools_perfring_exporter_SOURCES = $(tools_perfring_watch_SOURCES)
tools_perfring_exporter_CPPFLAGS = $(tools_perfring_watch_CPPFLAGS) \
	-DWATCH_PROG=WATCH_PROG_EXPORTER
tools_perfring_exporter_CFLAGS = $(tools_perfring_watch_CFLAGS)
tools_perfring_exporter_LDADD = $(tools_perfring_watch_LDADD)
TESTS += tools/tests/test_exporter.sh
endif
EXTRA_DIST += tools/tests/test_exporter.sh tools/tests/exporter.py

# tests/getpid_n: an exact workload (N getpid calls, then a chosen status),
# shared with the library's tests (test_node.sh, profile_perf.py) and bench.
# No sanitizer flags: their runtimes call getpid at start-up, and the count
# must be exact.
check_PROGRAMS += tests/getpid_n
tests_getpid_n_SOURCES = tests/getpid_n.c
tests_getpid_n_CFLAGS = -std=c11 $(WARN_CFLAGS)
tests_getpid_n_LDFLAGS =
# tools/tests/pages_n: an exact page-fault workload (N pages touched), built
# without sanitizers for the same reason, and static: the dynamic loader's
# faults depend on the environment (the libtool wrapper's LD_LIBRARY_PATH
# alone adds two), which perf stat and perfring-watch pass differently.
check_PROGRAMS += tools/tests/pages_n
tools_tests_pages_n_SOURCES = tools/tests/pages_n.c
tools_tests_pages_n_CFLAGS = -std=c11 $(WARN_CFLAGS)
tools_tests_pages_n_LDFLAGS = -all-static
TESTS += tools/tests/test_watch.sh tools/tests/test_watch_signals.sh \
	tools/tests/test_watch_profile.sh tools/tests/test_watch_hotplug.sh
EXTRA_DIST += tools/tests/test_watch.sh tools/tests/test_watch_signals.sh \
	tools/tests/test_watch_profile.sh tools/tests/test_watch_hotplug.sh

# tools/tests/taskname: renames itself N times and signals itself (exact
# counts for --by on a string field, --print against perf script, hostile
# comms). The Python tests import tests/watchlib.py, shared with
# tests/profile_perf.py.
check_PROGRAMS += tools/tests/taskname
tools_tests_taskname_SOURCES = tools/tests/taskname.c
tools_tests_taskname_CFLAGS = -std=c11 $(WARN_CFLAGS)
tools_tests_taskname_LDFLAGS =
TESTS += tools/tests/test_watch_by.sh
EXTRA_DIST += tools/tests/test_watch_by.sh tools/tests/watch_by.py tests/watchlib.py

# perfring-watch --overwrite --snapshot-on SIGUSR2 (--snapshot-dir, --json, text).
TESTS += tools/tests/test_watch_overwrite.sh
EXTRA_DIST += tools/tests/test_watch_overwrite.sh

# --bpf-map on a BPF ring buffer: tests/bpfpin --ringbuf (tests/bpf.mk) is
# the other tool that pins one (the tests' ring-buffer program,
# tests/kbpf.c); the test reads it with perfring-watch and perfring-exporter.
if BUILD_EVENT
TESTS += tools/tests/test_watch_ringbuf.sh
endif
EXTRA_DIST += tools/tests/test_watch_ringbuf.sh

# --print's --order-window: hostile values, and lines in time order across
# two CPUs on every loop.
TESTS += tools/tests/test_watch_order.sh
EXTRA_DIST += tools/tests/test_watch_order.sh
