# placeholder: filled by this change's work

# rba: the ring buffer reader (core/kernel/ringbuf, core/read/ringbuf) over
# rings crafted in memory, and on the kernel with tests/kbpf.c's programs.
if HAVE_CRITERION
check_PROGRAMS += tests/test_ringbuf_reader tests/test_rb_kernel
TESTS += tests/test_ringbuf_reader tests/test_rb_kernel
tests_test_ringbuf_reader_SOURCES = tests/test_ringbuf_reader.c
tests_test_ringbuf_reader_CFLAGS = $(TEST_CFLAGS)
tests_test_ringbuf_reader_LDADD = $(TEST_LDADD)
tests_test_rb_kernel_SOURCES = tests/test_rb_kernel.c tests/kbpf.c tests/kbpf.h
tests_test_rb_kernel_CFLAGS = $(TEST_CFLAGS)
tests_test_rb_kernel_LDADD = tests/libkutil.la $(TEST_LDADD)
endif

# rbs: ring buffers in a session (core/features/bpf_ringbuf.c, the reactor's
# slot core/loop/ringbuf.c) and the lost callback, on the real kernel.
if HAVE_CRITERION
check_PROGRAMS += tests/test_ringbuf_session tests/test_ringbuf_errors
TESTS += tests/test_ringbuf_session tests/test_ringbuf_errors
tests_test_ringbuf_session_SOURCES = tests/test_ringbuf_session.c tests/test_ringbuf_fx.c \
	tests/test_ringbuf_fx.h tests/kbpf.c tests/kbpf.h
tests_test_ringbuf_session_CFLAGS = $(TEST_CFLAGS)
tests_test_ringbuf_session_LDADD = tests/libkutil.la $(TEST_LDADD) -lpthread
tests_test_ringbuf_errors_SOURCES = tests/test_ringbuf_errors.c tests/test_ringbuf_fx.c \
	tests/test_ringbuf_fx.h tests/kbpf.c tests/kbpf.h
tests_test_ringbuf_errors_CFLAGS = $(TEST_CFLAGS)
tests_test_ringbuf_errors_LDADD = tests/libkutil.la $(TEST_LDADD)
endif

# rbs: perfring_session_set_lost_callback (1-page rings overflowed, and
# LOST_SAMPLES records in synthetic rings).
if HAVE_CRITERION
check_PROGRAMS += tests/test_lost_cb
TESTS += tests/test_lost_cb
tests_test_lost_cb_SOURCES = tests/test_lost_cb.c
tests_test_lost_cb_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/support
tests_test_lost_cb_CFLAGS = $(TEST_CFLAGS)
tests_test_lost_cb_LDADD = tests/libkutil.la tests/libprtest.la $(TEST_LDADD)
endif

# rbs: fault injection on the ring buffer's calls (bpf, dup, mmap, epoll).
if HAVE_CRITERION
check_PROGRAMS += tests/test_ringbuf_faults
TESTS += tests/test_ringbuf_faults
tests_test_ringbuf_faults_SOURCES = tests/test_ringbuf_faults.c tests/kbpf.c tests/kbpf.h
tests_test_ringbuf_faults_CFLAGS = $(TEST_CFLAGS)
tests_test_ringbuf_faults_LDADD = tests/libkutil.la $(TEST_LDADD)
endif

# rbs: ring buffers through each adapter (flushing off, a budget of 7).
if HAVE_CRITERION
if BUILD_UV
if BUILD_EVENT
if BUILD_EV
check_PROGRAMS += tests/test_ringbuf_loops
TESTS += tests/test_ringbuf_loops
tests_test_ringbuf_loops_SOURCES = tests/test_ringbuf_loops.c tests/test_ringbuf_loops_event.c \
	tests/test_ringbuf_loops_ev.c tests/test_ringbuf_loops.h tests/test_ringbuf_fx.c \
	tests/test_ringbuf_fx.h tests/kbpf.c tests/kbpf.h
tests_test_ringbuf_loops_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/adapters/uv/include \
	-I$(top_srcdir)/adapters/event/include -I$(top_srcdir)/adapters/ev/include
tests_test_ringbuf_loops_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS) $(LIBUV_CFLAGS) \
	$(LIBEVENT_CFLAGS) $(LIBEV_CFLAGS)
tests_test_ringbuf_loops_LDADD = adapters/uv/libperfring-uv.la \
	adapters/event/libperfring-event.la adapters/ev/libperfring-ev.la core/libperfring.la \
	tests/libkutil.la $(LIBUV_LIBS) $(LIBEVENT_LIBS) $(LIBEV_LIBS) $(CRITERION_LIBS)
endif
endif
endif
endif
EXTRA_DIST += tests/test_ringbuf_loops.c tests/test_ringbuf_loops_event.c \
	tests/test_ringbuf_loops_ev.c tests/test_ringbuf_loops.h

# rba: the reader's threads (producer, edge-triggered reader, stats, two
# drainers) in TAP, so that a --enable-tsan tree runs it too.
check_PROGRAMS += tests/test_rb_tsan.tap
TESTS += tests/test_rb_tsan.tap
tests_test_rb_tsan_tap_SOURCES = tests/test_rb_tsan.c
tests_test_rb_tsan_tap_LDADD = core/libperfring-core.la

# rbs: a ring buffer parsed from two threads, its stats read from a third
# (R1, R8); TAP, as criterion's runner crashes under TSan (--enable-tsan).
check_PROGRAMS += tests/test_ringbuf_tsan.tap
TESTS += tests/test_ringbuf_tsan.tap
tests_test_ringbuf_tsan_tap_SOURCES = tests/test_ringbuf_tsan.c tests/kutil.c tests/kutil.h \
	tests/kbpf.c tests/kbpf.h
tests_test_ringbuf_tsan_tap_LDADD = core/libperfring-core.la
