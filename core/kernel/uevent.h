/* SPDX-License-Identifier: MIT */
/* The CPU hotplug notifier: the kernel's uevent socket (NETLINK_KOBJECT_UEVENT),
 * or under a test's sysfs root the fd the test names. A message only says
 * "look again": the caller confirms every change against sysfs. */
#ifndef PR_KERNEL_UEVENT_H
#define PR_KERNEL_UEVENT_H

#include <stddef.h>

/* Test-only (never for users): with PERFRING_TEST_SYSFS set, the number of a
 * datagram socket the test writes fake uevent messages into. Unset: no
 * notifier, so sysfs is read again at each flush. */
#define PR_ENV_TEST_UEVENT_FD "PERFRING_TEST_UEVENT_FD"

/* A non-blocking notifier fd, close-on-exec and the caller's to close, or
 * -errno (-ENOENT: a test root without PERFRING_TEST_UEVENT_FD). */
int pr_uevent_open(void);

/* Reads every message waiting on fd (non-blocking). 1: one of them is an
 * add, remove, online or offline of /devices/system/cpu/cpuN, or messages
 * were lost (ENOBUFS): sysfs must be read again. 0: none of those. */
int pr_uevent_read(int fd);

/* Whether the message buf[0..n) (ACTION@DEVPATH, NUL, KEY=VALUE, ...) is
 * such a CPU event. Bounded by n; for the fuzzer too. */
int pr_uevent_is_cpu(const char *buf, size_t n);

#endif
