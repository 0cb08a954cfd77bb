# libperfring-ev: the libev adapter. libev ships no .pc, so configure finds
# ev.h and -lev itself (LIBEV_LIBS).
if BUILD_EV
lib_LTLIBRARIES += adapters/ev/libperfring-ev.la
adapters_ev_libperfring_ev_la_SOURCES = adapters/ev/perfring-ev.c
adapters_ev_libperfring_ev_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/adapters/ev/include \
	-DPERFRING_BUILDING
adapters_ev_libperfring_ev_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
adapters_ev_libperfring_ev_la_LIBADD = core/libperfring.la $(LIBEV_LIBS)
adapters_ev_libperfring_ev_la_LDFLAGS = $(AM_LDFLAGS) -version-info $(PERFRING_EV_LT_VERSION) \
	-no-undefined
perfringinclude_HEADERS += adapters/ev/include/perfring/perfring-ev.h
pkgconfig_DATA += adapters/ev/perfring-ev.pc

noinst_PROGRAMS += examples/ev-watch
examples_ev_watch_SOURCES = examples/ev-watch.c
examples_ev_watch_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/adapters/ev/include
examples_ev_watch_LDADD = adapters/ev/libperfring-ev.la core/libperfring.la $(LIBEV_LIBS)

if HAVE_CRITERION
check_PROGRAMS += tests/test_adapter_ev
TESTS += tests/test_adapter_ev
tests_test_adapter_ev_SOURCES = tests/test_adapter_ev.c
tests_test_adapter_ev_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/adapters/ev/include
tests_test_adapter_ev_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS)
tests_test_adapter_ev_LDADD = adapters/ev/libperfring-ev.la core/libperfring.la \
	tests/libkutil.la $(LIBEV_LIBS) $(CRITERION_LIBS)
endif
endif
