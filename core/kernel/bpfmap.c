/* SPDX-License-Identifier: MIT */
/* The bpf(2) calls on a map: its info and type (PERF_EVENT_ARRAY,
 * RINGBUF), and one entry of a PERF_EVENT_ARRAY. */
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

/* The names of the types a caller is likely to pass by mistake. */
static const char *const type_names[] = {
	[BPF_MAP_TYPE_HASH] = "HASH", [BPF_MAP_TYPE_ARRAY] = "ARRAY",
	[BPF_MAP_TYPE_PROG_ARRAY] = "PROG_ARRAY",
	[BPF_MAP_TYPE_PERF_EVENT_ARRAY] = "PERF_EVENT_ARRAY",
	[BPF_MAP_TYPE_PERCPU_HASH] = "PERCPU_HASH", [BPF_MAP_TYPE_PERCPU_ARRAY] = "PERCPU_ARRAY",
	[BPF_MAP_TYPE_STACK_TRACE] = "STACK_TRACE", [BPF_MAP_TYPE_LRU_HASH] = "LRU_HASH",
	[BPF_MAP_TYPE_QUEUE] = "QUEUE", [BPF_MAP_TYPE_STACK] = "STACK",
	[BPF_MAP_TYPE_RINGBUF] = "RINGBUF", [BPF_MAP_TYPE_USER_RINGBUF] = "USER_RINGBUF",
};

const char *pr_bpfmap_type_name(uint32_t type)
{
	return type < sizeof(type_names) / sizeof(type_names[0]) ? type_names[type] : NULL;
}

/* "BPF_MAP_TYPE_X (n)" or "type n". */
static void type_text(uint32_t type, char *buf, size_t len)
{
	const char *name = pr_bpfmap_type_name(type);

	if (name)
		snprintf(buf, len, "a BPF_MAP_TYPE_%s (%u)", name, type);
	else
		snprintf(buf, len, "of type %u", type);
}

/* What a map given to the wrong call is, and the right call. */
static int wrong_type(const char *call, int fd, const struct pr_bpfmap_info *info,
		      uint32_t want, struct pr_errbuf *e)
{
	char is[64];
	const char *use = info->type == BPF_MAP_TYPE_RINGBUF ?
			  ": use perfring_session_add_bpf_ringbuf" :
			  info->type == BPF_MAP_TYPE_PERF_EVENT_ARRAY ?
			  ": use perfring_session_add_bpf_output" :
			  info->type == BPF_MAP_TYPE_USER_RINGBUF ?
			  " (user space writes it, a program reads it)" : "";

	type_text(info->type, is, sizeof(is));
	return pr_err(e, -EINVAL, "%s: map %u (\"%.16s\", fd %d) is %s, not BPF_MAP_TYPE_%s "
		      "(%u)%s", call, info->id, info->name, fd, is, pr_bpfmap_type_name(want),
		      want, use);
}

/* A PERF_EVENT_ARRAY's entries are written at start, and a RINGBUF's
 * consumer page is mapped writable there: a read-only fd (made or opened
 * with BPF_F_RDONLY) or a frozen map would fail with a bare EPERM. */
static int check_writable(const char *call, int fd, const struct pr_bpfmap_info *info,
			  const struct fdinfo *fi, struct pr_errbuf *e)
{
	bool rb = info->type == BPF_MAP_TYPE_RINGBUF;
	const char *why = rb ? "its consumer page, where the reader tells the kernel how far "
			       "it read, is mapped read-write" :
			       "its entries, one per watched CPU, cannot be written";
	int fl = fcntl(fd, F_GETFL);

	if (fi->frozen)
		return pr_err(e, -EPERM, "%s: map %u (\"%.16s\", fd %d) is frozen "
			      "(BPF_MAP_FREEZE): %s from user space", call, info->id, info->name,
			      fd, rb ? "its consumer page cannot be mapped writable" : why);
	if (fl >= 0 && (fl & O_ACCMODE) == O_RDONLY)
		return pr_err(e, -EPERM, "%s: map %u (\"%.16s\", fd %d) is read-only "
			      "to user space (map_fd made or opened with BPF_F_RDONLY), %s %s; pass "
			      "a read-write fd (BPF_OBJ_GET without BPF_F_RDONLY)", call, info->id,
			      info->name, fd, rb ? "but" : "so", why);
	return 0;
}

static int info_err(const char *call, int fd, int err, struct pr_errbuf *e)
{
	/* bpf(2) says EBADFD for a closed fd. */
	if (err == EBADF || err == EBADFD)
		return pr_err(e, -EBADF, "%s: map_fd %d is not an open file descriptor", call, fd);
	if (err == EINVAL)
		return pr_err(e, -EBADF, "%s: map_fd %d is not a BPF map (not a BPF object at "
			      "all); pass the map's fd, e.g. bpf_map__fd()", call, fd);
	if (err == EPERM || err == EACCES)
		return pr_err(e, -err, "%s: bpf(BPF_OBJ_GET_INFO_BY_FD) on map_fd %d: %s; BPF maps "
			      "need root or CAP_BPF", call, fd, perfring_strerror(-err));
	return pr_err(e, -err, "%s: bpf(BPF_OBJ_GET_INFO_BY_FD) on map_fd %d: %s", call, fd,
		      perfring_strerror(-err));
}

int pr_bpfmap_info(int fd, const char *call, struct pr_bpfmap_info *out, struct pr_errbuf *e)
{
	struct bpf_map_info info;
	struct fdinfo fi;
	union bpf_attr a;

	memset(&info, 0, sizeof(info));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)fd;
	a.info.info_len = sizeof(info);
	a.info.info = (uint64_t)(uintptr_t)&info;
	if (fd < 0)
		return info_err(call, fd, EBADF, e);
	if (pr_bpf(BPF_OBJ_GET_INFO_BY_FD, &a, sizeof(a)) < 0)
		return info_err(call, fd, errno, e);
	fi = read_fdinfo(fd);
	if (fi.known && !fi.map)
		return pr_err(e, -EBADF, "%s: map_fd %d is a BPF object but not a map (a program, "
			      "link or BTF?); pass the map's fd", call, fd);
	*out = (struct pr_bpfmap_info){ info.type, info.id, info.max_entries, { 0 }, fi.frozen };
	memcpy(out->name, info.name, sizeof(out->name));
	return 0;
}

static int check_map(int fd, const char *call, uint32_t want, struct pr_bpfmap_info *out,
		     struct pr_errbuf *e)
{
	struct fdinfo fi = { true, true, false };
	int err = pr_bpfmap_info(fd, call, out, e);

	if (err)
		return err;
	if (out->type != want)
		return wrong_type(call, fd, out, want, e);
	fi.frozen = out->frozen;
	return check_writable(call, fd, out, &fi, e);
}

int pr_bpfmap_check(int fd, struct pr_bpfmap_info *out, struct pr_errbuf *e)
{
	return check_map(fd, "add_bpf_output", BPF_MAP_TYPE_PERF_EVENT_ARRAY, out, e);
}

int pr_bpfmap_check_ringbuf(int fd, struct pr_bpfmap_info *out, struct pr_errbuf *e)
{
	return check_map(fd, "add_bpf_ringbuf", BPF_MAP_TYPE_RINGBUF, out, e);
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
