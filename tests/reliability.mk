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

# The contract's start rules on the real kernel: thread churn (R3, against
# tests/churn) and a start after a stop (R11).
check_PROGRAMS += tests/churn tests/test_start
TESTS += tests/test_start
tests_churn_SOURCES = tests/churn.c
tests_churn_CFLAGS = $(AM_CFLAGS)
tests_churn_LDFLAGS = -pthread
tests_test_start_SOURCES = tests/test_start.c
tests_test_start_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS)
tests_test_start_LDADD = tests/libkutil.la core/libperfring-core.la $(CRITERION_LIBS)
# One program for the three: losses::, kinds:: and stale:: in its output.
tests_test_contract_SOURCES = tests/test_losses.c tests/test_kinds.c tests/test_stale.c
tests_test_contract_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/support
tests_test_contract_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS)
tests_test_contract_LDADD = tests/libkutil.la tests/libprtest.la core/libperfring-core.la \
	$(CRITERION_LIBS)
endif
# R10: tests/errcases tries each cause of an error; the script runs it as
# root and as nobody and checks each sentence names the cause.
check_PROGRAMS += tests/errcases
TESTS += tests/test_errors.sh
tests_errcases_SOURCES = tests/errcases.c
tests_errcases_CFLAGS = $(AM_CFLAGS)
tests_errcases_LDADD = core/libperfring-core.la
EXTRA_DIST += tests/test_errors.sh
EXTRA_DIST += docs/RELIABILITY.md

# The reliability contract's rules on the real kernel (R1, R5, R7).
if HAVE_CRITERION
check_PROGRAMS += tests/test_promises
TESTS += tests/test_promises
tests_test_promises_SOURCES = tests/test_promises.c
tests_test_promises_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS)
tests_test_promises_LDADD = tests/libkutil.la core/libperfring-core.la $(CRITERION_LIBS)
endif
