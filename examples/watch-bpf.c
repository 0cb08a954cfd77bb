/* SPDX-License-Identifier: MIT */
/* perfring-watch --bpf-map: a pinned PERF_EVENT_ARRAY by its bpffs path
 * (bpf(2) BPF_OBJ_GET, no libbpf), and --dump's line per BPF sample. */
#include "watch.h"

#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int watch_bpf_get(const char *path, char *why, size_t len)
{
	union bpf_attr a;
	int fd, err;

	memset(&a, 0, sizeof(a));
	a.pathname = (uint64_t)(uintptr_t)path;
	fd = (int)syscall(SYS_bpf, BPF_OBJ_GET, &a, sizeof(a));
	if (fd >= 0)
		return fd;
	err = errno;
	snprintf(why, len, "%s: bpf(BPF_OBJ_GET): %s%s", path, strerror(err),
		 err == ENOENT ? "; pin the map there first (bpftool map pin, bpf_obj_pin)" :
		 err == EPERM || err == EACCES ? "; reading BPF maps needs root or CAP_BPF" :
		 err == EINVAL ? "; the path must be on a bpffs (mount -t bpf bpf /sys/fs/bpf)" : "");
	errno = err;
	return -1;
}

void watch_bpf_dump(const struct watch_ev *e, const struct perfring_sample *smp)
{
	const unsigned char *p = smp->raw;
	uint32_t n = smp->raw_size < WATCH_DUMP_BYTES ? smp->raw_size : WATCH_DUMP_BYTES;

	printf("{\"type\":\"sample\",\"event\":");
	watch_json_str(perfring_event_name(e->ev));
	printf(",\"cpu\":%d,\"pid\":%u,\"tid\":%u,\"time_ns\":%llu,\"raw_size\":%u,\"hex\":\"",
	       smp->cpu, smp->pid, smp->tid, (unsigned long long)smp->time, smp->raw_size);
	for (uint32_t i = 0; p && i < n; i++)
		printf("%02x", p[i]);
	printf("\"}\n");
}
