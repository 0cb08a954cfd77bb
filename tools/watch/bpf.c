/* SPDX-License-Identifier: MIT */
/* perfring-watch --bpf-map: a pinned map by its bpffs path and its type
 * (bpf(2) BPF_OBJ_GET and BPF_OBJ_GET_INFO_BY_FD, no libbpf), and --dump's
 * line per BPF sample. */
#include "watch.h"

#include <errno.h>
#include <linux/bpf.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Root's EACCES from BPF_OBJ_GET means the path is not a pin: it is not on
 * a bpffs, or is a directory there. Unprivileged, it may also be the lack
 * of CAP_BPF, and that is what the user is told. */
static const char *obj_get_hint(const char *path, int err)
{
	struct statfs st;

	if (err == ENOENT)
		return "; pin the map there first (bpftool map pin, bpf_obj_pin)";
	if (err == EINVAL)
		return "; the path must be on a bpffs (mount -t bpf bpf /sys/fs/bpf)";
	if (err != EPERM && err != EACCES)
		return "";
	if (geteuid() != 0)
		return "; reading BPF maps needs root or CAP_BPF";
	if (err == EPERM)
		return "";
	if (statfs(path, &st) == 0 && (uint32_t)st.f_type == BPF_FS_MAGIC)
		return "; the path is on a bpffs but is not a pinned BPF object (a directory? "
		       "pin the map there with bpftool map pin or bpf_obj_pin)";
	return "; the path is not on a bpffs, so it cannot be a pinned BPF object: pin the map "
	       "on one (mount -t bpf bpf /sys/fs/bpf, then bpftool map pin)";
}

int watch_bpf_get(const char *path, char *why, size_t len)
{
	union bpf_attr a;
	const char *hint;
	int fd, err, room;

	memset(&a, 0, sizeof(a));
	a.pathname = (uint64_t)(uintptr_t)path;
	fd = (int)syscall(SYS_bpf, BPF_OBJ_GET, &a, sizeof(a));
	if (fd >= 0)
		return fd;
	err = errno;
	hint = obj_get_hint(path, err);
	/* The cause and fix fit whole: a long path is cut instead. */
	room = (int)len - (int)strlen(hint) - (int)strlen(strerror(err)) - 24;
	room = room < 16 ? 16 : room;
	snprintf(why, len, "%.*s%s: bpf(BPF_OBJ_GET): %s%s", room, path,
		 (int)strlen(path) > room ? "..." : "", strerror(err), hint);
	errno = err;
	return -1;
}

/* A program's or link's pin gives an fd too, and BPF_OBJ_GET_INFO_BY_FD
 * would fill that object's info: the fd's inode says it is a map. Without
 * /proc the info is read anyway (a program's type then picks the call, and
 * that call's sentence says what the fd is). */
static bool is_map(int fd)
{
	char path[64], link[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return true;
	link[n] = '\0';
	return !strcmp(link, "anon_inode:bpf-map");
}

int watch_bpf_map_type(int fd)
{
	struct bpf_map_info info;
	union bpf_attr a;

	if (!is_map(fd))
		return -1;
	memset(&info, 0, sizeof(info));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)fd;
	a.info.info_len = sizeof(info);
	a.info.info = (uint64_t)(uintptr_t)&info;
	if (syscall(SYS_bpf, BPF_OBJ_GET_INFO_BY_FD, &a, sizeof(a)) < 0)
		return -1;
	return (int)info.type;
}

void watch_bpf_dump(FILE *out, const struct watch_ev *e, const struct perfring_sample *smp)
{
	const unsigned char *p = smp->raw;
	uint32_t max = e->w->a.dump_bytes, n = smp->raw_size < max ? smp->raw_size : max;

	fputs("{\"type\":\"sample\",\"event\":", out);
	watch_json_fstr(out, perfring_event_name(e->ev));
	fprintf(out, ",\"cpu\":%d,\"pid\":%u,\"tid\":%u,\"time_ns\":%llu,\"raw_size\":%u,"
		"\"hex\":\"", smp->cpu, smp->pid, smp->tid, (unsigned long long)smp->time,
		smp->raw_size);
	for (uint32_t i = 0; p && i < n; i++)
		fprintf(out, "%02x", p[i]);
	fputs("\"}\n", out);
}
