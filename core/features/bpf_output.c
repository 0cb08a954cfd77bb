/* SPDX-License-Identifier: MIT */
/* BPF output: a PERF_COUNT_SW_BPF_OUTPUT event per watched CPU, redirected
 * into that CPU's ring and stored in a PERF_EVENT_ARRAY map at key = CPU;
 * the entries written at start and deleted at free. */
#include "feature.h"
#include "session.h"
#include "kernel/bpfmap.h"
#include "base/sys.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A second event on one map would overwrite the first one's entries. */
static int check_map_free(struct perfring_session *s, const struct pr_bpfmap_info *info)
{
	size_t e;

	for (e = 0; e < s->reg.nevents; e++)
		if (s->reg.events[e]->kind == PR_EV_BPF && s->reg.events[e]->bpf.id == info->id)
			return pr_err(&s->err, -EEXIST, "add_bpf_output: the session already reads "
				      "map %u (%s): a map has one entry per CPU, so one reader",
				      info->id, s->reg.events[e]->name);
	return 0;
}

PERFRING_API int perfring_session_add_bpf_output(struct perfring_session *s, int map_fd,
						 struct perfring_event **out)
{
	struct perf_event_attr a = { 0 };
	struct pr_bpfmap_info info;
	struct perfring_event *ev;
	char name[64];
	int fd, err;

	if (!s)
		return pr_null(NULL, __func__, "s");
	if (s->reg.frozen)
		return pr_err(&s->err, -EBUSY, "add_bpf_output: events can only be added before "
			      "perfring_session_start");
	if ((err = pr_bpfmap_check(map_fd, &info, &s->err)) || (err = check_map_free(s, &info)))
		return err;
	/* Our own fd: free deletes the entries even if the caller closed theirs. */
	if ((fd = pr_dup(map_fd)) < 0) {
		err = errno;
		return pr_err(&s->err, -err, "add_bpf_output: fcntl(F_DUPFD_CLOEXEC) of map_fd "
			      "%d: %s", map_fd, perfring_strerror(-err));
	}
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_BPF_OUTPUT;
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_RAW;
	snprintf(name, sizeof(name), "bpf:%.16s(map %u)", info.name, info.id);
	if ((err = pr_add_event(&s->reg, PR_EV_BPF, &a, name, &ev))) {
		close(fd);
		return err;
	}
	ev->bpf.fd = fd;
	ev->bpf.id = info.id;
	ev->bpf.max_entries = info.max_entries;
	if (out)
		*out = ev;
	return 0;
}

static int check_size(struct perfring_session *s, const struct perfring_event *ev)
{
	int top = s->ncpu ? s->cpus[s->ncpu - 1] : -1;

	if ((int64_t)ev->bpf.max_entries > top)
		return 0;
	return pr_err(&s->err, -E2BIG, "perfring_session_start: %s has max_entries %u, but the "
		      "highest watched CPU is %d: the map needs at least %d entries (libbpf sizes "
		      "it to the possible CPUs when max_entries is 0)", ev->name,
		      ev->bpf.max_entries, top, top + 1);
}

static int check(struct perfring_session *s)
{
	size_t e;
	int err;

	for (e = 0; e < s->reg.nevents; e++)
		if (s->reg.events[e]->kind == PR_EV_BPF && (err = check_size(s, s->reg.events[e])))
			return err;
	return 0;
}

static int map_cpu(struct perfring_session *s, struct perfring_event *ev, struct pr_cpu *c,
		   const struct pr_plan *p)
{
	struct pr_bpf_map *m = &ev->bpf;
	struct pr_bpf_entry *set;
	int fd, err;

	if ((err = pr_open_cpuwide(p, c, ev, &s->err, &fd)))
		return err;
	set = pr_realloc(m->set, (m->nset + 1) * sizeof(*set));
	if (!set)
		return pr_err(&s->err, -ENOMEM, "out of memory recording %s's map entries",
			      ev->name);
	m->set = set;
	if ((err = pr_bpfmap_set(m->fd, (uint32_t)c->cpu, (uint32_t)fd)) == -EPERM)
		return pr_err(&s->err, err, "bpf(BPF_MAP_UPDATE_ELEM) on %s, key %d (CPU %d's "
			      "event): %s: the map is read-only to user space (a BPF_F_RDONLY "
			      "fd, or frozen since it was added), so its entries cannot be "
			      "written", ev->name, c->cpu, c->cpu, perfring_strerror(err));
	if (err)
		return pr_err(&s->err, err, "bpf(BPF_MAP_UPDATE_ELEM) on %s, key %d (CPU %d's "
			      "event): %s", ev->name, c->cpu, c->cpu, perfring_strerror(err));
	m->set[m->nset++] = (struct pr_bpf_entry){ c->cpu, fd };
	return 0;
}

/* An entry left behind holds a reference to its event's file: the event
 * and its ring stay allocated for as long as the map lives. Deleting an
 * entry fails only when it is gone (ENOENT) or on a transient error, which
 * gets one more try. */
static void unset(const struct pr_bpf_map *m, const struct pr_bpf_entry *en)
{
	int err = pr_bpfmap_del(m->fd, (uint32_t)en->cpu);

	if (err && err != -ENOENT)
		pr_bpfmap_del(m->fd, (uint32_t)en->cpu);
}

static void unmap(struct perfring_session *s)
{
	struct pr_bpf_map *m;
	size_t e, k;

	for (e = 0; e < s->reg.nevents; e++) {
		m = &s->reg.events[e]->bpf;
		for (k = 0; s->reg.events[e]->kind == PR_EV_BPF && k < m->nset; k++)
			unset(m, &m->set[k]);
		if (s->reg.events[e]->kind == PR_EV_BPF)
			m->nset = 0;
	}
}

/* Every BPF output event on each CPU on, and its map entry; on failure the
 * entries written are deleted (the fds opened are in s->cpu, closed with it). */
static int started(struct perfring_session *s)
{
	struct pr_cpu *cpu = s->cpu;
	struct pr_plan p;
	size_t e, i;
	int err;

	pr_session_plan(s, &p);
	for (e = 0; e < s->reg.nevents; e++) {
		for (i = 0; s->reg.events[e]->kind == PR_EV_BPF && i < s->ncpu; i++) {
			if (!pr_cpu_on(&cpu[i]))
				continue;
			if ((err = map_cpu(s, s->reg.events[e], &cpu[i], &p))) {
				unmap(s);
				return err;
			}
		}
	}
	return 0;
}

/* With enable_on_exec the kernel enables the other events at the execve,
 * but never a CPU-wide one. */
static int exec_enable(struct perfring_session *s)
{
	const struct pr_bpf_map *m;
	size_t e, k;
	int err;

	for (e = 0; e < s->reg.nevents; e++) {
		m = &s->reg.events[e]->bpf;
		for (k = 0; s->reg.events[e]->kind == PR_EV_BPF && k < m->nset; k++) {
			if (pr_ioctl(m->set[k].fd, PERF_EVENT_IOC_ENABLE, 0) == 0)
				continue;
			err = errno;
			return pr_err(&s->err, -err, "ioctl(PERF_EVENT_IOC_ENABLE) %s on CPU %d: %s",
				      s->reg.events[e]->name, m->set[k].cpu, perfring_strerror(-err));
		}
	}
	return 0;
}

/* Deleted before the CPU's fds close, so no entry holds its events. */
static void cpu_down(struct perfring_session *s, struct pr_cpu *c)
{
	int cpu = c->cpu;
	struct pr_bpf_map *m;
	size_t e, k;

	for (e = 0; e < s->reg.nevents; e++) {
		m = &s->reg.events[e]->bpf;
		for (k = 0; s->reg.events[e]->kind == PR_EV_BPF && k < m->nset;) {
			if (m->set[k].cpu != cpu) {
				k++;
				continue;
			}
			unset(m, &m->set[k]);
			m->set[k] = m->set[--m->nset];
		}
	}
}

/* c, open again, gets every BPF output event and its map entry. */
static int cpu_up(struct perfring_session *s, struct pr_cpu *c)
{
	struct pr_plan p;
	size_t e;
	int err;

	pr_session_plan(s, &p);
	for (e = 0; e < s->reg.nevents; e++) {
		if (s->reg.events[e]->kind == PR_EV_BPF && (err = map_cpu(s, s->reg.events[e], c, &p))) {
			cpu_down(s, c);
			return err;
		}
	}
	return 0;
}

const struct pr_feature pr_feature_bpf_output = {
	.name = "bpf_output",
	.check = check,
	.started = started,
	.exec_enable = exec_enable,
	.cpu_up = cpu_up,
	.cpu_down = cpu_down,
	.unmap = unmap,
};
