/* SPDX-License-Identifier: MIT */
/*
 * The hotplug notifier's message check on hostile bytes.
 * fuzz-sources: core/kernel/uevent.c core/kernel/sysfs.c core/kernel/cpulist.c core/base/err.c core/base/sys.c
 *
 * The input, in an exact-size heap copy, goes to pr_uevent_is_cpu(). It
 * must answer 0 or 1 reading only those bytes, and 1 only for a message
 * whose first string is ACTION@/devices/system/cpu/cpuN with one of the
 * four actions.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/uevent.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x) do { if (!(x)) __builtin_trap(); } while (0)

static int starts(const char *p, size_t n, const char *pre)
{
	return n >= strlen(pre) && !memcmp(p, pre, strlen(pre));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size ? size : 1);
	const char *at;
	size_t n;
	int r;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	r = pr_uevent_is_cpu(buf, size);
	CHECK(r == 0 || r == 1);
	if (r) {
		at = memchr(buf, '@', size);
		CHECK(at);
		n = size - (size_t)(at + 1 - buf);
		CHECK(starts(buf, size, "online@") || starts(buf, size, "offline@") ||
		      starts(buf, size, "add@") || starts(buf, size, "remove@"));
		CHECK(starts(at + 1, n, "/devices/system/cpu/cpu"));
		CHECK(n > 23 && at[24] >= '0' && at[24] <= '9');
	}
	free(buf);
	return 0;
}
