# CPU hotplug, simulated (issue 22): a test's sysfs root and uevents feed a
# following session on each of the four drivers. It compiles the three
# adapters' sources itself and links the core statically, so it can fail
# the library's calls (base/sys.h's hook) on a returning CPU's open path.
EXTRA_DIST += tests/test_hotplug.c tests/hotplug_real.c
if HAVE_CRITERION
if BUILD_UV
if BUILD_EVENT
if BUILD_EV
check_PROGRAMS += tests/test_hotplug
TESTS += tests/test_hotplug
tests_test_hotplug_SOURCES = tests/test_hotplug.c adapters/uv/perfring-uv.c \
	adapters/event/perfring-event.c adapters/ev/perfring-ev.c tests/kbpf.c tests/kbpf.h
tests_test_hotplug_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/adapters/uv/include \
	-I$(top_srcdir)/adapters/event/include -I$(top_srcdir)/adapters/ev/include \
	-DPERFRING_BUILDING
tests_test_hotplug_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS) $(LIBUV_CFLAGS) \
	$(LIBEVENT_CFLAGS) $(LIBEV_CFLAGS)
tests_test_hotplug_LDADD = tests/libkutil.la core/libperfring-core.la $(LIBUV_LIBS) \
	$(LIBEVENT_LIBS) $(LIBEV_LIBS) $(CRITERION_LIBS)
endif
endif
endif
endif

# The real check's program: built only by `scripts/dev hotplug-test` (make
# tests/hotplug_real), never run by make check.
if HAVE_CRITERION
if BUILD_UV
EXTRA_PROGRAMS = tests/hotplug_real
tests_hotplug_real_SOURCES = tests/hotplug_real.c examples/epoll-driver.c \
	examples/epoll-driver.h
tests_hotplug_real_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/adapters/uv/include \
	-I$(top_srcdir)/examples
tests_hotplug_real_CFLAGS = $(AM_CFLAGS) $(LIBUV_CFLAGS)
tests_hotplug_real_LDADD = tests/libkutil.la core/libperfring.la adapters/uv/libperfring-uv.la \
	$(LIBUV_LIBS)
endif
endif
