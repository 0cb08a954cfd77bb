# perfring-watch: the live per-CPU view of ring delivery (the README's demo),
# its man page, and its TAP test. It links every adapter that is built; each
# loop's glue is its own file (ev.h and event2/event.h cannot share one).
bin_PROGRAMS += examples/perfring-watch
dist_man1_MANS = examples/perfring-watch.1
examples_perfring_watch_SOURCES = examples/perfring-watch.c examples/watch.h \
	examples/watch-args.c examples/watch-session.c examples/watch-child.c \
	examples/watch-run.c examples/watch-stats.c examples/watch-view.c \
	examples/watch-epoll.c examples/epoll-driver.c examples/epoll-driver.h \
	examples/watch-byview.c examples/watch-print.c examples/watch-recorder.c \
	examples/fieldcount.c examples/fieldcount.h examples/textesc.c examples/textesc.h \
	examples/watch-metrics.c examples/watch-bpf.c examples/watch-profile.c examples/watch-hotplug.c
examples_perfring_watch_CPPFLAGS = $(AM_CPPFLAGS)
examples_perfring_watch_CFLAGS = $(AM_CFLAGS)
WATCH_ADAPTERS =
WATCH_LOOP_LIBS =
EXTRA_DIST += examples/watch-uv.c examples/watch-event.c examples/watch-ev.c \
	examples/watch-http.c examples/perfring-exporter.1

if BUILD_UV
examples_perfring_watch_SOURCES += examples/watch-uv.c
examples_perfring_watch_CPPFLAGS += -I$(top_srcdir)/adapters/uv/include
examples_perfring_watch_CFLAGS += $(LIBUV_CFLAGS)
WATCH_ADAPTERS += adapters/uv/libperfring-uv.la
WATCH_LOOP_LIBS += $(LIBUV_LIBS)
endif
if BUILD_EVENT
examples_perfring_watch_SOURCES += examples/watch-event.c examples/watch-http.c
examples_perfring_watch_CPPFLAGS += -I$(top_srcdir)/adapters/event/include
examples_perfring_watch_CFLAGS += $(LIBEVENT_CFLAGS)
WATCH_ADAPTERS += adapters/event/libperfring-event.la
WATCH_LOOP_LIBS += $(LIBEVENT_LIBS)
endif
if BUILD_EV
examples_perfring_watch_SOURCES += examples/watch-ev.c
examples_perfring_watch_CPPFLAGS += -I$(top_srcdir)/adapters/ev/include
WATCH_ADAPTERS += adapters/ev/libperfring-ev.la
WATCH_LOOP_LIBS += $(LIBEV_LIBS)
endif
examples_perfring_watch_LDADD = $(WATCH_ADAPTERS) core/libperfring.la $(WATCH_LOOP_LIBS)

# perfring-exporter: the same program with WATCH_PROG set (the reference
# libevent server: /metrics from one event_base), so nothing is copied.
if BUILD_EVENT
bin_PROGRAMS += examples/perfring-exporter
man1_MANS = examples/perfring-exporter.1
examples_perfring_exporter_SOURCES = $(examples_perfring_watch_SOURCES)
examples_perfring_exporter_CPPFLAGS = $(examples_perfring_watch_CPPFLAGS) \
	-DWATCH_PROG=WATCH_PROG_EXPORTER
examples_perfring_exporter_CFLAGS = $(examples_perfring_watch_CFLAGS)
examples_perfring_exporter_LDADD = $(examples_perfring_watch_LDADD)
TESTS += tests/test_exporter.sh
endif
EXTRA_DIST += tests/test_exporter.sh tests/exporter.py

# tests/getpid_n: an exact workload (N getpid calls, then a chosen status).
# No sanitizer flags: their runtimes call getpid at start-up, and the count
# must be exact.
check_PROGRAMS += tests/getpid_n
tests_getpid_n_SOURCES = tests/getpid_n.c
tests_getpid_n_CFLAGS = -std=c11 $(WARN_CFLAGS)
tests_getpid_n_LDFLAGS =
# tests/pages_n: an exact page-fault workload (N pages touched), built
# without sanitizers for the same reason, and static: the dynamic loader's
# faults depend on the environment (the libtool wrapper's LD_LIBRARY_PATH
# alone adds two), which perf stat and perfring-watch pass differently.
check_PROGRAMS += tests/pages_n
tests_pages_n_SOURCES = tests/pages_n.c
tests_pages_n_CFLAGS = -std=c11 $(WARN_CFLAGS)
tests_pages_n_LDFLAGS = -all-static
TESTS += tests/test_watch.sh tests/test_watch_signals.sh tests/test_watch_profile.sh \
	tests/test_watch_hotplug.sh
EXTRA_DIST += tests/test_watch.sh tests/test_watch_signals.sh tests/test_watch_profile.sh \
	tests/test_watch_hotplug.sh

# tests/taskname: renames itself N times and signals itself (exact counts
# for --by on a string field, --print against perf script, hostile comms).
check_PROGRAMS += tests/taskname
tests_taskname_SOURCES = tests/taskname.c
tests_taskname_CFLAGS = -std=c11 $(WARN_CFLAGS)
tests_taskname_LDFLAGS =
TESTS += tests/test_watch_by.sh
EXTRA_DIST += tests/test_watch_by.sh tests/watch_by.py tests/watchlib.py
EXTRA_DIST += scripts/prometheus-screenshot docs/prometheus-graph.png
