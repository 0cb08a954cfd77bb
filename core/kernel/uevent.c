/* SPDX-License-Identifier: MIT */
/* The CPU hotplug notifier: opening it, and telling a CPU's uevent from the rest. */
#include "kernel/uevent.h"
#include "kernel/sysfs.h"
#include "base/sys.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MSG_MAX 8192
/* A flood is cut short: sysfs is read again anyway. */
#define MSGS_PER_READ 256
#define CPU_PATH "/devices/system/cpu/cpu"

static int test_fd(void)
{
	const char *v = secure_getenv(PR_ENV_TEST_UEVENT_FD);
	char *end;
	long fd;
	int d;

	if (!v || !*v)
		return -ENOENT;
	fd = strtol(v, &end, 10);
	if (*end || fd < 0 || fd > 1 << 20)
		return -EINVAL;
	d = pr_dup((int)fd);
	return d < 0 ? -errno : d;
}

int pr_uevent_open(void)
{
	int fd;

	if (pr_sysfs_test_root())
		return test_fd();
	fd = pr_uevent_socket();
	return fd < 0 ? -errno : fd;
}

static bool has_prefix(const char *p, size_t n, const char *pre)
{
	size_t k = strlen(pre);

	return n >= k && memcmp(p, pre, k) == 0;
}

int pr_uevent_is_cpu(const char *buf, size_t n)
{
	static const char *const actions[] = { "online@", "offline@", "add@", "remove@" };
	const char *end = memchr(buf, '\0', n), *at;
	size_t len = end ? (size_t)(end - buf) : n, i, k;

	for (i = 0; i < sizeof(actions) / sizeof(actions[0]); i++) {
		if (!has_prefix(buf, len, actions[i]))
			continue;
		at = buf + strlen(actions[i]);
		k = len - strlen(actions[i]);
		return has_prefix(at, k, CPU_PATH) && k > strlen(CPU_PATH) &&
		       at[strlen(CPU_PATH)] >= '0' && at[strlen(CPU_PATH)] <= '9';
	}
	return 0;
}

int pr_uevent_read(int fd)
{
	char buf[MSG_MAX];
	int i, hit = 0;
	ssize_t r;

	for (i = 0; i < MSGS_PER_READ; i++) {
		r = pr_recv(fd, buf, MSG_MAX);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			/* ENOBUFS: the kernel dropped messages. */
			hit |= errno != EAGAIN && errno != EWOULDBLOCK;
			break;
		}
		if (r == 0)
			break;
		hit |= pr_uevent_is_cpu(buf, (size_t)r);
	}
	return hit || i == MSGS_PER_READ;
}
