/* SPDX-License-Identifier: MIT */
/* The bpf(2) calls on a PERF_EVENT_ARRAY map: its info, and one entry. */
#include "kernel/bpfmap.h"
#include "base/sys.h"

#include <errno.h>
#include <fcntl.h>
#include <perfring/perfring.h>
#include <linux/bpf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fdinfo {
	bool known, map, frozen;
};

/* fdinfo tells a map from the other BPF objects, which the info call takes
 * too (a program's info is not a map's), and whether it is frozen
 * (BPF_MAP_FREEZE). Without /proc neither is known. */
static struct fdinfo read_fdinfo(int fd)
{
	struct fdinfo fi = { false, false, false };
	char path[64], *text = NULL;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (pr_read_file(path, 4096, &text, NULL))
		return fi;
	fi.known = true;
	fi.map = strstr(text, "\nmap_type:") != NULL;
	fi.frozen = strstr(text, "\nfrozen:\t1") != NULL;
	free(text);
	return fi;
}

/* The entries are written at start: a read-only fd (made or opened with
 * BPF_F_RDONLY) or a frozen map would fail there with a bare EPERM. */
static int check_writable(int fd, const struct bpf_map_info *info, const struct fdinfo *fi,
			  struct pr_errbuf *e)
{
	int fl = fcntl(fd, F_GETFL);

	if (fi->frozen)
		return pr_err(e, -EPERM, "add_bpf_output: map %u (\"%.16s\", fd %d) is frozen "
			      "(BPF_MAP_FREEZE): its entries, one per watched CPU, cannot be "
			      "written from user space", info->id, info->name, fd);
	if (fl >= 0 && (fl & O_ACCMODE) == O_RDONLY)
		return pr_err(e, -EPERM, "add_bpf_output: map %u (\"%.16s\", fd %d) is read-only "
			      "to user space (map_fd made or opened with BPF_F_RDONLY), so its "
			      "entries, one per watched CPU, cannot be written; pass a read-write "
			      "fd (BPF_OBJ_GET without BPF_F_RDONLY)", info->id, info->name, fd);
	return 0;
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
	struct fdinfo fi;
	union bpf_attr a;
	int err;

	memset(&info, 0, sizeof(info));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)fd;
	a.info.info_len = sizeof(info);
	a.info.info = (uint64_t)(uintptr_t)&info;
	if (fd < 0)
		return info_err(fd, EBADF, e);
	if (pr_bpf(BPF_OBJ_GET_INFO_BY_FD, &a, sizeof(a)) < 0)
		return info_err(fd, errno, e);
	fi = read_fdinfo(fd);
	if (fi.known && !fi.map)
		return pr_err(e, -EBADF, "add_bpf_output: map_fd %d is a BPF object but not a map "
			      "(a program, link or BTF?); pass the PERF_EVENT_ARRAY map's fd", fd);
	if (info.type != BPF_MAP_TYPE_PERF_EVENT_ARRAY)
		return pr_err(e, -EINVAL, "add_bpf_output: map %d (\"%.16s\", fd %d) is of type %u, "
			      "not BPF_MAP_TYPE_PERF_EVENT_ARRAY (%u)", info.id, info.name, fd,
			      info.type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	if ((err = check_writable(fd, &info, &fi, e)))
		return err;
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
