# Fault injection into the adapters' attach. Each test compiles its adapter's
# source itself and links the core statically, so the linker can wrap the
# loop library's calls that can fail and the allocators (--wrap; see the
# tests' comments for what each attach calls). tests/afault.c is the driver
# they share, and wraps the allocators.
EXTRA_DIST += tests/afault.c tests/afault.h tests/test_adapter_faults_uv.c \
	tests/test_adapter_faults_event.c tests/test_adapter_faults_ev.c
ADAPTER_FAULTS_SOURCES = tests/afault.c tests/afault.h
ADAPTER_FAULTS_WRAP_ALLOC = -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc

if HAVE_CRITERION
if BUILD_UV
check_PROGRAMS += tests/test_adapter_faults_uv
TESTS += tests/test_adapter_faults_uv
tests_test_adapter_faults_uv_SOURCES = tests/test_adapter_faults_uv.c $(ADAPTER_FAULTS_SOURCES) \
	adapters/uv/perfring-uv.c
tests_test_adapter_faults_uv_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/adapters/uv/include \
	-DPERFRING_BUILDING
tests_test_adapter_faults_uv_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS) $(LIBUV_CFLAGS)
tests_test_adapter_faults_uv_LDFLAGS = $(AM_LDFLAGS) $(ADAPTER_FAULTS_WRAP_ALLOC) \
	-Wl,--wrap=uv_poll_init -Wl,--wrap=uv_poll_start -Wl,--wrap=uv_timer_start \
	-Wl,--wrap=uv_idle_start
tests_test_adapter_faults_uv_LDADD = tests/libkutil.la core/libperfring-core.la \
	$(LIBUV_LIBS) $(CRITERION_LIBS)
endif

if BUILD_EVENT
check_PROGRAMS += tests/test_adapter_faults_event
TESTS += tests/test_adapter_faults_event
tests_test_adapter_faults_event_SOURCES = tests/test_adapter_faults_event.c \
	$(ADAPTER_FAULTS_SOURCES) adapters/event/perfring-event.c
tests_test_adapter_faults_event_CPPFLAGS = $(AM_CPPFLAGS) \
	-I$(top_srcdir)/adapters/event/include -DPERFRING_BUILDING
tests_test_adapter_faults_event_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS) $(LIBEVENT_CFLAGS)
tests_test_adapter_faults_event_LDFLAGS = $(AM_LDFLAGS) $(ADAPTER_FAULTS_WRAP_ALLOC) \
	-Wl,--wrap=event_new -Wl,--wrap=event_add
tests_test_adapter_faults_event_LDADD = tests/libkutil.la core/libperfring-core.la \
	$(LIBEVENT_LIBS) $(CRITERION_LIBS)
endif

if BUILD_EV
check_PROGRAMS += tests/test_adapter_faults_ev
TESTS += tests/test_adapter_faults_ev
tests_test_adapter_faults_ev_SOURCES = tests/test_adapter_faults_ev.c $(ADAPTER_FAULTS_SOURCES) \
	adapters/ev/perfring-ev.c
tests_test_adapter_faults_ev_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/adapters/ev/include \
	-DPERFRING_BUILDING
tests_test_adapter_faults_ev_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS)
tests_test_adapter_faults_ev_LDFLAGS = $(AM_LDFLAGS) $(ADAPTER_FAULTS_WRAP_ALLOC)
tests_test_adapter_faults_ev_LDADD = tests/libkutil.la core/libperfring-core.la \
	$(LIBEV_LIBS) $(CRITERION_LIBS)
endif
endif
