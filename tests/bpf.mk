# BPF output (issue 18) on the real kernel with a real BPF program given as
# raw instructions (tests/kbpf.c): the core's calls, and the three adapters.
if HAVE_CRITERION
check_PROGRAMS += tests/test_bpf
TESTS += tests/test_bpf
tests_test_bpf_SOURCES = tests/test_bpf.c tests/test_bpf_faults.c tests/kbpf.c tests/kbpf.h
tests_test_bpf_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS)
tests_test_bpf_LDADD = tests/libkutil.la core/libperfring-core.la $(CRITERION_LIBS)
endif
