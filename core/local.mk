# libperfring: built once as a convenience library (tests link it to reach
# internals) and wrapped into the installed shared/static library, which
# exports only perfring_* (visibility hidden + PERFRING_API). The folders
# are the layers of docs/INTERNALS.md; `scripts/layout` checks them.
noinst_LTLIBRARIES += core/libperfring-core.la
core_libperfring_core_la_CPPFLAGS = $(AM_CPPFLAGS) -DPERFRING_BUILDING
core_libperfring_core_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
core_libperfring_core_la_SOURCES = \
	core/base/sys.c core/base/sys.h core/base/err.c core/base/err.h \
	core/base/text.h core/base/clock.h \
	core/decode/record.c core/decode/record.h core/decode/field.c core/decode/profile.c \
	core/decode/layout.h core/decode/profile.h \
	core/decode/elf.c core/decode/elf.h \
	core/kernel/ring.c core/kernel/ring.h core/kernel/cpulist.c core/kernel/cpulist.h \
	core/kernel/sysfs.c core/kernel/sysfs.h core/kernel/uevent.c core/kernel/uevent.h \
	core/kernel/tracefs.c core/kernel/tracefs.h core/kernel/format.c \
	core/kernel/bpfmap.c core/kernel/bpfmap.h \
	core/kernel/ringbuf.c core/kernel/ringbuf.h core/read/ringbuf.c core/read/ringbuf.h \
	core/event.c core/event.h \
	core/read/cpu.c core/read/cpu.h \
	core/rings/open.c core/rings/open.h core/rings/lost.c core/rings/lost.h \
	core/read/tree.c core/read/tree.h core/read/order.h core/read/fast.h \
	core/read/deliver.c core/read/deliver.h core/read/drain.c core/read/drain.h \
	core/read/stretch.h core/read/pull.c core/read/pull.h \
	core/read/cursor.h core/read/batch.c core/read/batch.h \
	core/read/merge.c core/read/merge.h core/read/rbkeep.c core/read/rbkeep.h \
	core/read/window.c core/read/window.h \
	core/opts.c core/opts.h core/session.c core/session.h \
	core/feature.c core/feature.h core/features/bpf_output.c core/features/cgroup.c \
	core/features/hotplug.c core/features/hotplug.h core/features/uprobe.c \
	core/features/bpf_ringbuf.c core/features/bpf_ringbuf.h core/loop/ringbuf.c \
	core/lifecycle.c core/parse.c \
	core/kernel/backward.c core/kernel/backward.h core/kernel/tail.c core/kernel/tail.h \
	core/kernel/visit.c core/kernel/visit.h \
	core/snapshot.c core/snapshot.h \
	core/loop/reactor.c core/loop/reactor.h core/loop/attach.c core/loop/follow.c \
	core/loop/epoll.c \
	core/loop/epoll.h \
	core/loop/wait.c

lib_LTLIBRARIES += core/libperfring.la
core_libperfring_la_SOURCES =
core_libperfring_la_LIBADD = core/libperfring-core.la
core_libperfring_la_LDFLAGS = $(AM_LDFLAGS) -version-info $(PERFRING_LT_VERSION) -no-undefined

# <perfring/perfring.h> is an umbrella over its parts, each installed and
# each compiling alone (tests/check-headers.sh; installcheck compiles the
# installed copies).
perfringinclude_HEADERS += core/include/perfring/perfring.h \
	core/include/perfring/common.h core/include/perfring/record.h \
	core/include/perfring/session.h core/include/perfring/parse.h \
	core/include/perfring/recorder.h core/include/perfring/reactor.h \
	core/include/perfring/bpf.h
TESTS += tests/check-headers.sh
EXTRA_DIST += tests/check-headers.sh docs/RULES.md docs/API-NOTES.md
pkgconfig_DATA += core/perfring.pc
