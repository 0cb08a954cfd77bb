/* SPDX-License-Identifier: MIT */
/* The bpf(2) calls on a PERF_EVENT_ARRAY map: its info, and one entry. */
#include "kernel/bpfmap.h"
#include "base/sys.h"

#include <errno.h>
#include <perfring/perfring.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* fdinfo tells a map from the other BPF objects, which the info call takes
 * too (a program's info is not a map's). Without /proc it is not checked. */
static int not_a_map(int fd)
{
	char path[64], *text = NULL;
	int bad;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (pr_read_file(path, 4096, &text, NULL))
		return 0;
	bad = !strstr(text, "\nmap_type:");
	free(text);
	return bad;
}

static int info_err(int fd, int err, struct pr_errbuf *e)
{
	/* bpf(2) says EBADFD for a closed fd. */
	if (err == EBADF || err == EBADFD)
		return pr_err(e, -EBADF, "add_bpf_output: map_fd %d is not an open file "
			      "descriptor", fd);
	if (err == EINVAL)
		return pr_err(e, -EBADF, "add_bpf_output: map_fd %d is not a BPF map (not a BPF "
			      "object at all); pass the fd of a BPF_MAP_TYPE_PERF_EVENT_ARRAY, "
			      "e.g. bpf_map__fd()", fd);
	if (err == EPERM || err == EACCES)
		return pr_err(e, -err, "bpf(BPF_OBJ_GET_INFO_BY_FD) on map_fd %d: %s; BPF maps "
			      "need root or CAP_BPF", fd, perfring_strerror(-err));
	return pr_err(e, -err, "bpf(BPF_OBJ_GET_INFO_BY_FD) on map_fd %d: %s", fd,
		      perfring_strerror(-err));
}

int pr_bpfmap_check(int fd, struct pr_bpfmap_info *out, struct pr_errbuf *e)
{
	struct bpf_map_info info;
	union bpf_attr a;

	memset(&info, 0, sizeof(info));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)fd;
	a.info.info_len = sizeof(info);
	a.info.info = (uint64_t)(uintptr_t)&info;
	if (fd < 0)
		return info_err(fd, EBADF, e);
	if (pr_bpf(BPF_OBJ_GET_INFO_BY_FD, &a, sizeof(a)) < 0)
		return info_err(fd, errno, e);
	if (not_a_map(fd))
		return pr_err(e, -EBADF, "add_bpf_output: map_fd %d is a BPF object but not a map "
			      "(a program, link or BTF?); pass the PERF_EVENT_ARRAY map's fd", fd);
	if (info.type != BPF_MAP_TYPE_PERF_EVENT_ARRAY)
		return pr_err(e, -EINVAL, "add_bpf_output: map %d (\"%.16s\", fd %d) is of type %u, "
			      "not BPF_MAP_TYPE_PERF_EVENT_ARRAY (%u)", info.id, info.name, fd,
			      info.type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	*out = (struct pr_bpfmap_info){ info.type, info.id, info.max_entries, { 0 } };
	memcpy(out->name, info.name, sizeof(out->name));
	return 0;
}

static int elem(int cmd, int fd, uint32_t key, const uint32_t *value)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)&key;
	a.value = (uint64_t)(uintptr_t)value;
	a.flags = BPF_ANY;
	return pr_bpf(cmd, &a, sizeof(a)) < 0 ? -errno : 0;
}

int pr_bpfmap_set(int fd, uint32_t key, uint32_t value)
{
	return elem(BPF_MAP_UPDATE_ELEM, fd, key, &value);
}

int pr_bpfmap_del(int fd, uint32_t key)
{
	return elem(BPF_MAP_DELETE_ELEM, fd, key, NULL);
}
