# libperfring-event: the libevent adapter (optional, --with-libevent), its test
# and example.
EXTRA_DIST += adapters/event/perfring-event.pc.in \
	adapters/event/include/perfring/perfring-event.h examples/event-watch.c \
	tests/test_adapter_event.c
if BUILD_EVENT
lib_LTLIBRARIES += adapters/event/libperfring-event.la
adapters_event_libperfring_event_la_SOURCES = adapters/event/perfring-event.c
adapters_event_libperfring_event_la_CPPFLAGS = $(AM_CPPFLAGS) \
	-I$(top_srcdir)/adapters/event/include -DPERFRING_BUILDING
adapters_event_libperfring_event_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden $(LIBEVENT_CFLAGS)
adapters_event_libperfring_event_la_LIBADD = core/libperfring.la $(LIBEVENT_LIBS)
adapters_event_libperfring_event_la_LDFLAGS = $(AM_LDFLAGS) \
	-version-info $(PERFRING_EVENT_LT_VERSION) -no-undefined

perfringinclude_HEADERS += adapters/event/include/perfring/perfring-event.h
pkgconfig_DATA += adapters/event/perfring-event.pc

noinst_PROGRAMS += examples/event-watch
examples_event_watch_SOURCES = examples/event-watch.c
examples_event_watch_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/adapters/event/include
examples_event_watch_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS)
examples_event_watch_LDADD = adapters/event/libperfring-event.la core/libperfring.la \
	$(LIBEVENT_LIBS)

if HAVE_CRITERION
check_PROGRAMS += tests/test_adapter_event
TESTS += tests/test_adapter_event
tests_test_adapter_event_SOURCES = tests/test_adapter_event.c
tests_test_adapter_event_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/adapters/event/include
tests_test_adapter_event_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS) $(LIBEVENT_CFLAGS)
tests_test_adapter_event_LDADD = adapters/event/libperfring-event.la core/libperfring.la \
	tests/libkutil.la $(LIBEVENT_LIBS) $(CRITERION_LIBS)
endif
endif
