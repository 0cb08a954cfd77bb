/* SPDX-License-Identifier: MIT */
/* Every syscall and allocation the library makes goes through here, so tests
 * can fail the Nth call of each (fault injection). In production the hook is
 * NULL and each wrapper costs one predictable branch. */
#ifndef PR_SYS_H
#define PR_SYS_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum pr_sys_call {
	PR_SYS_PERF_EVENT_OPEN, PR_SYS_MMAP, PR_SYS_IOCTL, PR_SYS_EPOLL_CREATE,
	PR_SYS_EPOLL_CTL, PR_SYS_OPEN, PR_SYS_READ, PR_SYS_MALLOC, PR_SYS_CALLOC,
	PR_SYS_REALLOC, PR_SYS_TIMERFD, PR_SYS_BPF, PR_SYS_MEMBARRIER, PR_SYS_SOCKET,
	PR_SYS_AFFINITY,
	PR_SYS__COUNT
};

/* Returns 0 to let the call through, or the errno to fail it with. */
typedef int (*pr_fault_fn)(enum pr_sys_call call, void *ctx);
void pr_fault_set(pr_fault_fn fn, void *ctx); /* tests only; NULL = off */

void *pr_malloc(size_t n);
void *pr_calloc(size_t n, size_t sz);
void *pr_realloc(void *p, size_t n);
char *pr_strdup(const char *s);
int pr_open(const char *path, int flags);
int pr_pidfd_open(pid_t pid); /* -1 with errno */
ssize_t pr_read(int fd, void *buf, size_t n);
ssize_t pr_pread(int fd, void *buf, size_t n, off_t off); /* counted as a read */
int pr_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group, unsigned long flags);
void *pr_mmap(size_t len, int prot, int flags, int fd);
int pr_ioctl(int fd, unsigned long req, unsigned long arg);
int pr_epoll_create1(int flags);
int pr_epoll_ctl(int ep, int op, int fd, void *ev); /* ev: struct epoll_event * */
int pr_timerfd_create(int flags); /* CLOCK_MONOTONIC */
/* bpf(2): attr is a union bpf_attr * of size bytes; -1 with errno. */
int pr_bpf(int cmd, void *attr, unsigned int size);
int pr_dup(int fd); /* close-on-exec; counted as an open; -1 with errno */
/* membarrier(MEMBARRIER_CMD_GLOBAL): one RCU grace period. 0 or -1 with errno. */
int pr_membarrier_global(void);
/* sched_getaffinity/sched_setaffinity of the calling thread, mask of sz
 * bytes (PR_SYS_AFFINITY). 0 or -1 with errno. */
int pr_get_affinity(size_t sz, void *mask);
int pr_set_affinity(size_t sz, const void *mask);
/* The hotplug notifier (PR_SYS_SOCKET): a bound NETLINK_KOBJECT_UEVENT
 * socket, non-blocking and close-on-exec. -1 with errno. */
int pr_uevent_socket(void);
/* recv(MSG_DONTWAIT), counted as a read. */
ssize_t pr_recv(int fd, void *buf, size_t n);

/* Reads a whole small file (tracefs, sysfs, procfs) into a NUL-terminated
 * heap buffer, at most max bytes. 0 or -errno. */
int pr_read_file(const char *path, size_t max, char **out, size_t *len);

#endif
