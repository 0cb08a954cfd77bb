/* SPDX-License-Identifier: MIT */
/* BPF maps through the library's own bpf(2) calls (no libbpf): what a map
 * fd is, and of a BPF_MAP_TYPE_PERF_EVENT_ARRAY writing and deleting one
 * entry. */
#ifndef PR_KERNEL_BPFMAP_H
#define PR_KERNEL_BPFMAP_H

#include "base/err.h"

#include <stdbool.h>
#include <stdint.h>

struct pr_bpfmap_info {
	uint32_t type, id, max_entries;
	char name[16];
	bool frozen;               /* BPF_MAP_FREEZE (from fdinfo; false unknown) */
};

/* BPF_OBJ_GET_INFO_BY_FD on fd, which must be a BPF map: -EBADF (not a
 * BPF map) or the call's error, with a sentence in e that begins with call
 * (the public call's name). */
int pr_bpfmap_info(int fd, const char *call, struct pr_bpfmap_info *info, struct pr_errbuf *e);

/* "RINGBUF" for BPF_MAP_TYPE_RINGBUF, and so on for the common types; NULL
 * for the others. */
const char *pr_bpfmap_type_name(uint32_t type);

/* pr_bpfmap_info, checked to be a PERF_EVENT_ARRAY map whose entries user
 * space can write: -EINVAL another map type (the sentence names it, and
 * for a RINGBUF the call to use), -EPERM (a read-only fd or a frozen map),
 * each with a sentence in e. */
int pr_bpfmap_check(int fd, struct pr_bpfmap_info *info, struct pr_errbuf *e);

/* The same for a RINGBUF, whose consumer page is mapped read-write: the
 * sentence of a PERF_EVENT_ARRAY names perfring_session_add_bpf_output. */
int pr_bpfmap_check_ringbuf(int fd, struct pr_bpfmap_info *info, struct pr_errbuf *e);

/* BPF_MAP_UPDATE_ELEM map[key] = value; 0 or -errno (errno kept). */
int pr_bpfmap_set(int fd, uint32_t key, uint32_t value);

/* BPF_MAP_DELETE_ELEM map[key]; 0 or -errno (-ENOENT: no entry). */
int pr_bpfmap_del(int fd, uint32_t key);

#endif
