# Reliability tests: fault injection through core/sys.h, hostile options and
# calls, and overload (ring pressure, many events, many rings).
if HAVE_CRITERION
RELIABILITY_TESTS = tests/test_faults tests/test_hostile tests/test_overload
# Contract rules R4 (losses add up at the end, real kernel), R12 (one
# software event of a kind; foreign ids) and issue 17's item 13 (no stale
# fields across events of one ring).
RELIABILITY_TESTS += tests/test_contract
check_PROGRAMS += $(RELIABILITY_TESTS)
TESTS += $(RELIABILITY_TESTS)

tests_test_faults_SOURCES = tests/test_faults.c
tests_test_faults_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS)
tests_test_faults_LDADD = tests/libkutil.la core/libperfring-core.la $(CRITERION_LIBS)
tests_test_hostile_SOURCES = tests/test_hostile.c
tests_test_hostile_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS)
tests_test_hostile_LDADD = tests/libkutil.la core/libperfring-core.la $(CRITERION_LIBS)
# The 256-ring merge uses the test-support library's synthetic session.
tests_test_overload_SOURCES = tests/test_overload.c
tests_test_overload_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/support
tests_test_overload_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS)
tests_test_overload_LDADD = tests/libkutil.la tests/libprtest.la core/libperfring-core.la \
	$(CRITERION_LIBS)
# One program for the three: losses::, kinds:: and stale:: in its output.
tests_test_contract_SOURCES = tests/test_losses.c tests/test_kinds.c tests/test_stale.c
tests_test_contract_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/support
tests_test_contract_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS)
tests_test_contract_LDADD = tests/libkutil.la tests/libprtest.la core/libperfring-core.la \
	$(CRITERION_LIBS)
endif
EXTRA_DIST += docs/RELIABILITY.md

