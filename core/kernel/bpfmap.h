/* SPDX-License-Identifier: MIT */
/* A BPF_MAP_TYPE_PERF_EVENT_ARRAY through the library's own bpf(2) calls:
 * what a map fd is, and writing and deleting one entry (no libbpf). */
#ifndef PR_KERNEL_BPFMAP_H
#define PR_KERNEL_BPFMAP_H

#include "base/err.h"

#include <stdint.h>

struct pr_bpfmap_info {
	uint32_t type, id, max_entries;
	char name[16];
};

/* BPF_OBJ_GET_INFO_BY_FD on fd, checked to be a PERF_EVENT_ARRAY map whose
 * entries user space can write: -EBADF (not a BPF map), -EINVAL (another
 * map type), -EPERM (a read-only fd or a frozen map) or the call's error,
 * each with a sentence in e. */
int pr_bpfmap_check(int fd, struct pr_bpfmap_info *info, struct pr_errbuf *e);

/* BPF_MAP_UPDATE_ELEM map[key] = value; 0 or -errno (errno kept). */
int pr_bpfmap_set(int fd, uint32_t key, uint32_t value);

/* BPF_MAP_DELETE_ELEM map[key]; 0 or -errno (-ENOENT: no entry). */
int pr_bpfmap_del(int fd, uint32_t key);

#endif
