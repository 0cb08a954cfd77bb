# libperfring: built once as a convenience library (tests link it to reach
# internals) and wrapped into the installed shared/static library, which
# exports only perfring_* (visibility hidden + PERFRING_API).
noinst_LTLIBRARIES += core/libperfring-core.la
core_libperfring_core_la_CPPFLAGS = $(AM_CPPFLAGS) -DPERFRING_BUILDING
core_libperfring_core_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
core_libperfring_core_la_SOURCES = \
	core/sys.c core/sys.h \
	core/error.c core/error.h \
	core/ring.c core/ring.h \
	core/record.c core/record.h \
	core/merge.c core/merge.h \
	core/cpulist.c core/cpulist.h \
	core/tracefs.c core/tracefs.h core/format.c core/text.h \
	core/field.c \
	core/event.c core/event.h \
	core/session.c core/session.h \
	core/open.c \
	core/deliver.c core/deliver.h \
	core/drain.c core/drain.h core/hot.h \
	core/batch.c core/batch.h core/cursor.h \
	core/merged.c \
	core/parse.c core/parse.h \
	core/wait.c \
	core/reactor.c

lib_LTLIBRARIES += core/libperfring.la
core_libperfring_la_SOURCES =
core_libperfring_la_LIBADD = core/libperfring-core.la
core_libperfring_la_LDFLAGS = $(AM_LDFLAGS) -version-info $(PERFRING_LT_VERSION) -no-undefined

perfringinclude_HEADERS += core/include/perfring/perfring.h
pkgconfig_DATA += core/perfring.pc
