# The flight recorder (issue 21): overwrite rings and snapshots on the real
# kernel, and the backward range finder on synthetic rings.
if HAVE_CRITERION
OVERWRITE_TESTS = tests/test_overwrite tests/test_backward
check_PROGRAMS += $(OVERWRITE_TESTS)
TESTS += $(OVERWRITE_TESTS)
tests_test_overwrite_SOURCES = tests/test_overwrite.c
tests_test_overwrite_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS)
tests_test_overwrite_LDADD = tests/libkutil.la core/libperfring-core.la $(CRITERION_LIBS) -lpthread
tests_test_backward_SOURCES = tests/test_backward.c
tests_test_backward_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS)
tests_test_backward_LDADD = core/libperfring-core.la $(CRITERION_LIBS)
endif
