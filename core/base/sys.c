/* SPDX-License-Identifier: MIT */
/* Every syscall and allocation, each failable from tests (the hook in sys.h). */
#include "base/sys.h"

#include <errno.h>
#include <linux/membarrier.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <linux/netlink.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

static pr_fault_fn fault_fn;
static void *fault_ctx;

void pr_fault_set(pr_fault_fn fn, void *ctx)
{
	fault_fn = fn;
	fault_ctx = ctx;
}

/* 0 to proceed, else errno is set and the wrapper must fail. */
static inline int faulted(enum pr_sys_call call)
{
	int err;

	if (__builtin_expect(fault_fn == NULL, 1))
		return 0;
	err = fault_fn(call, fault_ctx);
	if (err)
		errno = err;
	return err;
}

void *pr_malloc(size_t n)
{
	return faulted(PR_SYS_MALLOC) ? NULL : malloc(n);
}

void *pr_calloc(size_t n, size_t sz)
{
	return faulted(PR_SYS_CALLOC) ? NULL : calloc(n, sz);
}

void *pr_realloc(void *p, size_t n)
{
	return faulted(PR_SYS_REALLOC) ? NULL : realloc(p, n);
}

char *pr_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = pr_malloc(n);

	if (d)
		memcpy(d, s, n);
	return d;
}

int pr_open(const char *path, int flags)
{
	return faulted(PR_SYS_OPEN) ? -1 : open(path, flags | O_CLOEXEC);
}

/* Counted as an open: it is one, of a process. */
int pr_pidfd_open(pid_t pid)
{
	return faulted(PR_SYS_OPEN) ? -1 : (int)syscall(SYS_pidfd_open, pid, 0);
}

ssize_t pr_read(int fd, void *buf, size_t n)
{
	ssize_t r;

	if (faulted(PR_SYS_READ))
		return -1;
	do
		r = read(fd, buf, n);
	while (r < 0 && errno == EINTR);
	return r;
}

ssize_t pr_pread(int fd, void *buf, size_t n, off_t off)
{
	ssize_t r;

	if (faulted(PR_SYS_READ))
		return -1;
	do
		r = pread(fd, buf, n, off);
	while (r < 0 && errno == EINTR);
	return r;
}

int pr_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group,
		       unsigned long flags)
{
	if (faulted(PR_SYS_PERF_EVENT_OPEN))
		return -1;
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, group, flags);
}

void *pr_mmap(size_t len, int prot, int flags, int fd)
{
	if (faulted(PR_SYS_MMAP))
		return MAP_FAILED;
	return mmap(NULL, len, prot, flags, fd, 0);
}

int pr_ioctl(int fd, unsigned long req, unsigned long arg)
{
	return faulted(PR_SYS_IOCTL) ? -1 : ioctl(fd, req, arg);
}

int pr_epoll_create1(int flags)
{
	return faulted(PR_SYS_EPOLL_CREATE) ? -1 : epoll_create1(flags);
}

int pr_epoll_ctl(int ep, int op, int fd, void *ev)
{
	return faulted(PR_SYS_EPOLL_CTL) ? -1 : epoll_ctl(ep, op, fd, ev);
}

int pr_timerfd_create(int flags)
{
	return faulted(PR_SYS_TIMERFD) ? -1 : timerfd_create(CLOCK_MONOTONIC, flags);
}

int pr_bpf(int cmd, void *attr, unsigned int size)
{
	return faulted(PR_SYS_BPF) ? -1 : (int)syscall(SYS_bpf, cmd, attr, size);
}

int pr_uevent_socket(void)
{
	struct sockaddr_nl a = { .nl_family = AF_NETLINK, .nl_groups = 1 /* the kernel's */ };
	int fd, e;

	if (faulted(PR_SYS_SOCKET))
		return -1;
	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_KOBJECT_UEVENT);
	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

int pr_dup(int fd)
{
	return faulted(PR_SYS_OPEN) ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 0);
}

int pr_membarrier_global(void)
{
	if (faulted(PR_SYS_MEMBARRIER))
		return -1;
	return (int)syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
}

int pr_get_affinity(size_t sz, void *mask)
{
	return faulted(PR_SYS_AFFINITY) ? -1 : sched_getaffinity(0, sz, mask);
}

int pr_set_affinity(size_t sz, const void *mask)
{
	return faulted(PR_SYS_AFFINITY) ? -1 : sched_setaffinity(0, sz, mask);
}

ssize_t pr_recv(int fd, void *buf, size_t n)
{
	return faulted(PR_SYS_READ) ? -1 : recv(fd, buf, n, MSG_DONTWAIT);
}

static int read_all(int fd, size_t max, char *buf, size_t *len)
{
	size_t got = 0;
	ssize_t r;

	while (got < max) {
		r = pr_read(fd, buf + got, max - got);
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	if (got == max)
		return -EFBIG;
	buf[got] = '\0';
	*len = got;
	return 0;
}

int pr_read_file(const char *path, size_t max, char **out, size_t *len)
{
	char *buf;
	size_t n = 0;
	int fd, err;

	fd = pr_open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	buf = pr_malloc(max + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	err = read_all(fd, max + 1, buf, &n);
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	if (len)
		*len = n;
	return 0;
}
