# libperfring-uv: the libuv adapter (optional, --with-libuv).
EXTRA_DIST += adapters/uv/perfring-uv.pc.in adapters/uv/include/perfring/perfring-uv.h \
	examples/uv-watch.c tests/test_adapter_uv.c
if BUILD_UV
lib_LTLIBRARIES += adapters/uv/libperfring-uv.la
adapters_uv_libperfring_uv_la_SOURCES = adapters/uv/perfring-uv.c
adapters_uv_libperfring_uv_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/adapters/uv/include \
	-DPERFRING_BUILDING
adapters_uv_libperfring_uv_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden $(LIBUV_CFLAGS)
adapters_uv_libperfring_uv_la_LIBADD = core/libperfring.la $(LIBUV_LIBS)
adapters_uv_libperfring_uv_la_LDFLAGS = $(AM_LDFLAGS) -version-info $(PERFRING_UV_LT_VERSION) \
	-no-undefined

perfringinclude_HEADERS += adapters/uv/include/perfring/perfring-uv.h
pkgconfig_DATA += adapters/uv/perfring-uv.pc

noinst_PROGRAMS += examples/uv-watch
examples_uv_watch_SOURCES = examples/uv-watch.c
examples_uv_watch_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/adapters/uv/include
examples_uv_watch_CFLAGS = $(AM_CFLAGS) $(LIBUV_CFLAGS)
examples_uv_watch_LDADD = adapters/uv/libperfring-uv.la core/libperfring.la $(LIBUV_LIBS)

if HAVE_CRITERION
check_PROGRAMS += tests/test_adapter_uv
TESTS += tests/test_adapter_uv
tests_test_adapter_uv_SOURCES = tests/test_adapter_uv.c
tests_test_adapter_uv_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/adapters/uv/include
tests_test_adapter_uv_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS) $(LIBUV_CFLAGS)
tests_test_adapter_uv_LDADD = adapters/uv/libperfring-uv.la core/libperfring.la \
	tests/libkutil.la $(LIBUV_LIBS) $(CRITERION_LIBS)
endif
endif
