/* SPDX-License-Identifier: MIT */
/* COMM and MMAP2 record bodies from /proc/PID/task/TID/comm and /proc/PID/maps. */
#include "kernel/tail.h"
#include "base/sys.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define MAPS_MAX (16u << 20)
#define COMM_MAX 64u

struct body {
	uint8_t b[PR_TAIL_BODY_MAX];
	size_t n;
};

static void put(struct body *b, const void *p, size_t n)
{
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put_u32x2(struct body *b, uint32_t x, uint32_t y)
{
	put(b, &x, 4);
	put(b, &y, 4);
}

static void put_u64(struct body *b, uint64_t v)
{
	put(b, &v, 8);
}

/* A string with its NUL, zero-padded to 8 bytes; cut to fit the body. */
static void put_str(struct body *b, const char *s, size_t len)
{
	size_t room = sizeof(b->b) - b->n - 8;

	if (len > room)
		len = room;
	put(b, s, len);
	memset(b->b + b->n, 0, 8 - (b->n & 7));
	b->n += 8 - (b->n & 7);
}

static int comm_of(int pid, int tid, pr_tail_fn fn, void *ctx)
{
	char path[64], *text = NULL;
	size_t len = 0;
	struct body b = { .n = 0 };
	int err;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
	if (pr_read_file(path, COMM_MAX, &text, &len))
		return 0; /* gone meanwhile */
	while (len && (text[len - 1] == '\n' || text[len - 1] == '\0'))
		len--;
	put_u32x2(&b, (uint32_t)pid, (uint32_t)tid);
	put_str(&b, text, len);
	free(text);
	err = fn(PERF_RECORD_COMM, (uint32_t)pid, (uint32_t)tid, b.b, b.n, ctx);
	return err;
}

static int comms_of(int pid, pr_tail_fn fn, void *ctx)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	long tid;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	if (!(dir = opendir(path)))
		return 0;
	while (!err && (d = readdir(dir))) {
		tid = strtol(d->d_name, NULL, 10);
		if (tid > 0)
			err = comm_of(pid, (int)tid, fn, ctx);
	}
	closedir(dir);
	return err;
}

static uint32_t prot_of(const char *perms)
{
	return (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
	       (perms[2] == 'x' ? PROT_EXEC : 0);
}

/* "start-end perms offset maj:min inode   path": an MMAP2 body for an
 * executable mapping (what attr.mmap reports), else nothing (false). */
static bool map_line(int pid, const char *line, struct body *b)
{
	uint64_t start, end, pgoff, ino;
	unsigned int maj, min;
	char perms[5];
	int used = 0;
	const char *name;

	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64 "%n", &start,
		   &end, perms, &pgoff, &maj, &min, &ino, &used) < 7 || !used ||
	    strlen(perms) != 4 || perms[2] != 'x' || end <= start)
		return false;
	for (name = line + used; *name == ' ' || *name == '\t'; name++)
		;
	if (!*name)
		name = "//anon";
	b->n = 0;
	put_u32x2(b, (uint32_t)pid, (uint32_t)pid);
	put_u64(b, start);
	put_u64(b, end - start);
	put_u64(b, pgoff);
	put_u32x2(b, maj, min);
	put_u64(b, ino);
	put_u64(b, 0);
	put_u32x2(b, prot_of(perms), perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE);
	put_str(b, name, strlen(name));
	return true;
}

static int maps_of(int pid, pr_tail_fn fn, void *ctx)
{
	char path[64], *text = NULL, *line, *nl;
	struct body *b;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	if (pr_read_file(path, MAPS_MAX, &text, NULL))
		return 0; /* gone meanwhile, or a kernel thread */
	if (!(b = pr_malloc(sizeof(*b)))) {
		free(text);
		return -ENOMEM;
	}
	for (line = text; !err && line && *line; line = nl ? nl + 1 : NULL) {
		if ((nl = strchr(line, '\n')))
			*nl = '\0';
		if (map_line(pid, line, b))
			err = fn(PERF_RECORD_MMAP2, (uint32_t)pid, (uint32_t)pid, b->b, b->n, ctx);
	}
	free(b);
	free(text);
	return err;
}

static int one_process(int pid, bool comm, bool mmap, pr_tail_fn fn, void *ctx)
{
	int err = comm ? comms_of(pid, fn, ctx) : 0;

	return err ? err : mmap ? maps_of(pid, fn, ctx) : 0;
}

int pr_tail_synth(int pid, bool comm, bool mmap, pr_tail_fn fn, void *ctx)
{
	struct dirent *d;
	DIR *dir;
	long p;
	int err = 0;

	if (pid > 0)
		return one_process(pid, comm, mmap, fn, ctx);
	if (!(dir = opendir("/proc")))
		return 0;
	while (!err && (d = readdir(dir))) {
		p = strtol(d->d_name, NULL, 10);
		if (p > 0)
			err = one_process((int)p, comm, mmap, fn, ctx);
	}
	closedir(dir);
	return err;
}
