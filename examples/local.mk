noinst_PROGRAMS += examples/count examples/epoll-reactor examples/thread-per-cpu
examples_count_SOURCES = examples/count.c
examples_count_LDADD = core/libperfring.la
examples_epoll_reactor_SOURCES = examples/epoll-reactor.c examples/epoll-driver.c \
	examples/epoll-driver.h
examples_epoll_reactor_LDADD = core/libperfring.la
examples_thread_per_cpu_SOURCES = examples/thread-per-cpu.c examples/epoll-driver.c \
	examples/epoll-driver.h
examples_thread_per_cpu_LDADD = core/libperfring.la
