# Criterion programs report TAP on stdout (human output goes to the .log);
# automake's TAP driver lists every test and prints the summary.
LOG_DRIVER = env AM_TAP_AWK='$(AWK)' $(SHELL) $(top_srcdir)/build-aux/tap-driver.sh
LOG_COMPILER = $(SHELL) $(top_srcdir)/tests/run-criterion.sh
TEST_EXTENSIONS = .sh .tap
TAP_LOG_DRIVER = $(LOG_DRIVER)
SH_LOG_DRIVER = $(LOG_DRIVER)
SH_LOG_COMPILER = $(SHELL)
AM_TESTS_ENVIRONMENT = top_builddir='$(top_builddir)'; top_srcdir='$(top_srcdir)'; \
	export top_builddir top_srcdir;
EXTRA_DIST += tests/run-criterion.sh tests/check-exports.sh tests/data

TESTS += tests/check-exports.sh

# Speaks TAP itself (Criterion's runner crashes under TSan); CI also runs it
# in a --enable-tsan build. kutil is public-API only, so no Criterion needed.
check_PROGRAMS += tests/test_tsan.tap
TESTS += tests/test_tsan.tap
tests_test_tsan_tap_SOURCES = tests/test_tsan.c tests/kutil.c tests/kutil.h
tests_test_tsan_tap_LDADD = core/libperfring-core.la

if HAVE_CRITERION
TEST_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS)
TEST_LDADD = core/libperfring-core.la $(CRITERION_LIBS)
# prtest: the test-support library, synthetic rings and sessions (internal
# API), shared by the tests, the fuzz targets and the benchmarks; kutil:
# kernel-test helpers (public API only, so adapter tests can link the
# installed-style shared libraries).
noinst_LTLIBRARIES += tests/libprtest.la tests/libkutil.la
tests_libprtest_la_SOURCES = tests/support/synth.c tests/support/synth.h \
	tests/support/synthsession.c tests/support/synthsession.h
tests_libprtest_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/support
tests_libprtest_la_CFLAGS = $(AM_CFLAGS)
tests_libkutil_la_SOURCES = tests/kutil.c tests/kutil.h tests/fakeloop.c tests/fakeloop.h
tests_libkutil_la_CFLAGS = $(TEST_CFLAGS)

UNIT_TESTS = tests/test_ring tests/test_record tests/test_cpulist tests/test_tracefs \
	tests/test_field tests/test_merge tests/test_merged tests/test_batch tests/test_drain \
	tests/test_pull tests/test_opts tests/test_profile tests/test_krecords tests/test_elf
KERNEL_TESTS = tests/test_kernel_session tests/test_kernel_wakeup tests/test_kernel_level2 \
	tests/test_kernel_profile
check_PROGRAMS += $(UNIT_TESTS) $(KERNEL_TESTS)
TESTS += $(UNIT_TESTS) $(KERNEL_TESTS)

tests_test_ring_SOURCES = tests/test_ring.c
tests_test_ring_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/support
tests_test_ring_CFLAGS = $(TEST_CFLAGS)
tests_test_ring_LDADD = tests/libprtest.la $(TEST_LDADD)
tests_test_record_SOURCES = tests/test_record.c
tests_test_record_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/support
tests_test_record_CFLAGS = $(TEST_CFLAGS)
tests_test_record_LDADD = tests/libprtest.la $(TEST_LDADD)
tests_test_profile_SOURCES = tests/test_profile.c
tests_test_profile_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/support
tests_test_profile_CFLAGS = $(TEST_CFLAGS)
tests_test_profile_LDADD = tests/libprtest.la $(TEST_LDADD)
tests_test_krecords_SOURCES = tests/test_krecords.c
tests_test_krecords_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/support
tests_test_krecords_CFLAGS = $(TEST_CFLAGS)
tests_test_krecords_LDADD = tests/libprtest.la $(TEST_LDADD)
tests_test_elf_SOURCES = tests/test_elf.c
tests_test_elf_CFLAGS = $(TEST_CFLAGS)
tests_test_elf_LDADD = $(TEST_LDADD)
tests_test_cpulist_SOURCES = tests/test_cpulist.c
tests_test_cpulist_CFLAGS = $(TEST_CFLAGS)
tests_test_cpulist_LDADD = $(TEST_LDADD)
tests_test_tracefs_SOURCES = tests/test_tracefs.c
tests_test_tracefs_CFLAGS = $(TEST_CFLAGS)
tests_test_tracefs_LDADD = $(TEST_LDADD)
tests_test_field_SOURCES = tests/test_field.c
tests_test_field_CFLAGS = $(TEST_CFLAGS)
tests_test_field_LDADD = $(TEST_LDADD)
tests_test_merge_SOURCES = tests/test_merge.c
tests_test_merge_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/support
tests_test_merge_CFLAGS = $(TEST_CFLAGS)
tests_test_merge_LDADD = tests/libprtest.la $(TEST_LDADD)
tests_test_merged_SOURCES = tests/test_merged.c
tests_test_merged_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/support
tests_test_merged_CFLAGS = $(TEST_CFLAGS)
tests_test_merged_LDADD = tests/libprtest.la $(TEST_LDADD)
tests_test_batch_SOURCES = tests/test_batch.c
tests_test_batch_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/support
tests_test_batch_CFLAGS = $(TEST_CFLAGS)
tests_test_batch_LDADD = tests/libprtest.la $(TEST_LDADD)
tests_test_drain_SOURCES = tests/test_drain.c
tests_test_drain_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/support
tests_test_drain_CFLAGS = $(TEST_CFLAGS)
tests_test_drain_LDADD = tests/libprtest.la $(TEST_LDADD)
tests_test_pull_SOURCES = tests/test_pull.c
tests_test_pull_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/support
tests_test_pull_CFLAGS = $(TEST_CFLAGS)
tests_test_pull_LDADD = tests/libprtest.la $(TEST_LDADD)
tests_test_opts_SOURCES = tests/test_opts.c
tests_test_opts_CFLAGS = $(TEST_CFLAGS)
tests_test_opts_LDADD = tests/libkutil.la $(TEST_LDADD)
# The profiler's sample types against perf script -D on the same samples.
check_PROGRAMS += tests/profile_dump
tests_profile_dump_SOURCES = tests/profile_dump.c
tests_profile_dump_CFLAGS = $(AM_CFLAGS)
tests_profile_dump_LDADD = core/libperfring-core.la
TESTS += tests/test_profile_perf.sh
EXTRA_DIST += tests/test_profile_perf.sh tests/profile_perf.py tests/tap.sh

# A uprobe target with a function called exactly N times (kernel_profile).
check_PROGRAMS += tests/uprobe_target
tests_uprobe_target_SOURCES = tests/uprobe_target.c
tests_uprobe_target_CFLAGS = $(AM_CFLAGS)
tests_test_kernel_profile_SOURCES = tests/test_kernel_profile.c
tests_test_kernel_profile_CFLAGS = $(TEST_CFLAGS)
tests_test_kernel_profile_LDADD = tests/libkutil.la $(TEST_LDADD)
tests_test_kernel_session_SOURCES = tests/test_kernel_session.c
tests_test_kernel_session_CFLAGS = $(TEST_CFLAGS)
tests_test_kernel_session_LDADD = tests/libkutil.la $(TEST_LDADD)
tests_test_kernel_wakeup_SOURCES = tests/test_kernel_wakeup.c
tests_test_kernel_wakeup_CFLAGS = $(TEST_CFLAGS)
tests_test_kernel_wakeup_LDADD = tests/libkutil.la $(TEST_LDADD)
tests_test_kernel_level2_SOURCES = tests/test_kernel_level2.c
tests_test_kernel_level2_CFLAGS = $(TEST_CFLAGS)
tests_test_kernel_level2_LDADD = tests/libkutil.la $(TEST_LDADD)
endif

# Builds a tiny program against the installed copy with pkg-config alone.
installcheck-local:
	PKG_CONFIG_PATH='$(DESTDIR)$(pkgconfigdir)' $(SHELL) $(top_srcdir)/tests/check-installed.sh \
		'$(DESTDIR)' '$(prefix)' '$(CC)'
EXTRA_DIST += tests/check-installed.sh
