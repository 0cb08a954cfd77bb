# Time order with a bound (issue 34, helper ow): the merge's window over
# synthetic rings and a reactor on tests/fakeloop (test_order).
if HAVE_CRITERION
check_PROGRAMS += tests/test_order
TESTS += tests/test_order
tests_test_order_SOURCES = tests/test_order.c
tests_test_order_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/support
tests_test_order_CFLAGS = $(TEST_CFLAGS)
tests_test_order_LDADD = tests/libprtest.la tests/libkutil.la $(TEST_LDADD)
endif

# On the kernel: two-CPU storms and an idle CPU through parse_until and each
# adapter (tests/test_order_kernel.c, built once per loop).
if HAVE_CRITERION
check_PROGRAMS += tests/test_order_kernel
TESTS += tests/test_order_kernel
tests_test_order_kernel_SOURCES = tests/test_order_kernel.c
tests_test_order_kernel_CPPFLAGS = $(AM_CPPFLAGS) -DORDER_LOOP=0
tests_test_order_kernel_CFLAGS = $(TEST_CFLAGS)
tests_test_order_kernel_LDADD = tests/libkutil.la core/libperfring.la $(CRITERION_LIBS)
if BUILD_UV
check_PROGRAMS += tests/test_order_uv
TESTS += tests/test_order_uv
tests_test_order_uv_SOURCES = tests/test_order_kernel.c
tests_test_order_uv_CPPFLAGS = $(AM_CPPFLAGS) -DORDER_LOOP=1 -I$(top_srcdir)/adapters/uv/include
tests_test_order_uv_CFLAGS = $(TEST_CFLAGS) $(LIBUV_CFLAGS)
tests_test_order_uv_LDADD = adapters/uv/libperfring-uv.la core/libperfring.la \
	tests/libkutil.la $(LIBUV_LIBS) $(CRITERION_LIBS)
endif
if BUILD_EVENT
check_PROGRAMS += tests/test_order_event
TESTS += tests/test_order_event
tests_test_order_event_SOURCES = tests/test_order_kernel.c
tests_test_order_event_CPPFLAGS = $(AM_CPPFLAGS) -DORDER_LOOP=2 -I$(top_srcdir)/adapters/event/include
tests_test_order_event_CFLAGS = $(TEST_CFLAGS) $(LIBEVENT_CFLAGS)
tests_test_order_event_LDADD = adapters/event/libperfring-event.la core/libperfring.la \
	tests/libkutil.la $(LIBEVENT_LIBS) $(CRITERION_LIBS)
endif
if BUILD_EV
check_PROGRAMS += tests/test_order_ev
TESTS += tests/test_order_ev
tests_test_order_ev_SOURCES = tests/test_order_kernel.c
tests_test_order_ev_CPPFLAGS = $(AM_CPPFLAGS) -DORDER_LOOP=3 -I$(top_srcdir)/adapters/ev/include
tests_test_order_ev_CFLAGS = $(TEST_CFLAGS)
tests_test_order_ev_LDADD = adapters/ev/libperfring-ev.la core/libperfring.la \
	tests/libkutil.la $(LIBEV_LIBS) $(CRITERION_LIBS)
endif
endif

# Timed BPF ring buffers as leaves of the merge, over a ring buffer crafted
# in memory (test_order_rb).
if HAVE_CRITERION
check_PROGRAMS += tests/test_order_rb
TESTS += tests/test_order_rb
tests_test_order_rb_SOURCES = tests/test_order_rb.c
tests_test_order_rb_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/support
tests_test_order_rb_CFLAGS = $(TEST_CFLAGS)
tests_test_order_rb_LDADD = tests/libprtest.la $(TEST_LDADD)
endif
