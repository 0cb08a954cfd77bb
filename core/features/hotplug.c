/* SPDX-License-Identifier: MIT */
/* Following CPU hotplug (a feature): the notifier, and each change made in
 * one place (drain, close; or open, enable), the session, its attachments
 * and the cpu callback told. */
#include "hotplug.h"
#include "feature.h"
#include "read/drain.h"
#include "read/merge.h"
#include "kernel/cpulist.h"
#include "rings/lost.h"
#include "kernel/sysfs.h"
#include "kernel/uevent.h"
#include "base/clock.h"
#include "base/sys.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What an offline CPU's slot reads: a ring that is always empty. */
struct idle {
	struct perf_event_mmap_page meta;
	uint64_t data;
};

struct pr_hotplug {
	void (*fn)(int cpu, bool online, void *ctx);
	void *ctx;
	int nfd;                    /* the notifier, or -1 */
	struct idle *idle;          /* by slot */
	bool due;                   /* a CPU's uevent came while a parse ran */
	uint64_t next_ns;           /* tick's next look */
	unsigned gen;               /* changes told to the attachments */
};

static void hp_free(struct pr_hotplug *h)
{
	if (!h)
		return;
	if (h->nfd >= 0)
		close(h->nfd);
	free(h->idle);
	free(h);
}

/* At perfring_session_new, once the CPU set is resolved: with
 * follow_hotplug the set becomes every possible CPU. */
static int init(struct perfring_session *s)
{
	struct pr_hotplug *h;
	int *cpus = NULL, err;
	size_t n = 0;

	if (!s->o.follow_hotplug)
		return 0;
	if ((err = pr_sysfs_cpus(NULL, "possible", &cpus, &n)))
		return err;
	h = n ? pr_calloc(1, sizeof(*h)) : NULL;
	if (h) {
		h->nfd = -1;
		h->idle = pr_calloc(n, sizeof(*h->idle));
	}
	if (!h || !h->idle) {
		hp_free(h);
		free(cpus);
		return n ? pr_err(NULL, -ENOMEM, "out of memory for %zu possible CPUs", n) :
			   pr_err(NULL, -ENODEV, "no possible CPUs in sysfs");
	}
	free(s->cpus);
	s->cpus = cpus;
	s->ncpu = n;
	s->hp = h;
	return 0;
}

static void fini(struct perfring_session *s)
{
	hp_free(s->hp);
	s->hp = NULL;
}

static void idle_ring(struct pr_hotplug *h, struct pr_cpu *c, size_t i)
{
	c->leader_fd = -1;
	pr_ring_init(&c->ring, &h->idle[i].meta, &h->idle[i].data, sizeof(h->idle[i].data),
		     (uint8_t *)&h->idle[i].data);
}

/* The notifier first: a change between the online list's read and the
 * socket would go unseen. */
static int open_online(struct perfring_session *s, struct pr_cpu *cpu, const struct pr_plan *p)
{
	struct pr_hotplug *h = s->hp;
	int *online = NULL, err;
	size_t n = 0, i;

	if (!h)
		return PR_FEATURE_PASS;
	if (h->nfd >= 0) /* a start that failed before */
		close(h->nfd);
	h->nfd = pr_uevent_open();
	if (h->nfd < 0)
		h->nfd = -1;
	if ((err = pr_sysfs_cpus(&s->err, "online", &online, &n)))
		return err;
	for (i = 0; i < s->ncpu; i++)
		idle_ring(h, &cpu[i], i);
	for (i = 0; i < s->ncpu && !err; i++) {
		if (!pr_cpulist_has(online, n, cpu[i].cpu))
			continue;
		err = pr_open_cpus(p, &cpu[i], 1, &s->err);
		if (err)
			idle_ring(h, &cpu[i], i);
		if (err == -ENODEV) /* it went offline since the list was read */
			err = 0;
	}
	free(online);
	if (err)
		pr_close_cpus(cpu, s->ncpu);
	return err;
}

int pr_hotplug_fd(const struct perfring_session *s)
{
	return s->hp ? s->hp->nfd : -1;
}

/* Each attachment once, from the head again after each: one may detach
 * another from inside its drain's callbacks. */
static void tell(struct perfring_session *s, size_t idx, bool on)
{
	unsigned gen = ++s->hp->gen;
	struct pr_attachment *a;

again:
	for (a = s->attached; a && !pr_session_closing(s); a = a->next) {
		if (!a->cpu_change || a->gen == gen)
			continue;
		a->gen = gen;
		a->cpu_change(a, idx, on);
		goto again;
	}
}

static void report(struct perfring_session *s, int cpu, bool on)
{
	if (s->hp->fn && !pr_session_closing(s))
		s->hp->fn(cpu, on, s->hp->ctx);
}

/* The reactors drain and unwatch; what is left, and the kernel's drop
 * counts (R4, docs/RULES.md), are read here before the fds close. A ring
 * another thread holds is closed by a later sync. Returns the samples
 * read here. */
static int down(struct perfring_session *s, size_t i)
{
	struct pr_cpu *c = &s->cpu[i];
	int n;

	tell(s, i, false);
	pr_lost_due(c, 1);
	n = pr_drain(c, 0, NULL, NULL);
	if (n < 0 || !pr_cpu_claim(c, pr_self()))
		return 0;
	pr_session_cpu_down(s, c);
	pr_close_cpus(c, 1);
	idle_ring(s->hp, c, i);
	pr_cpu_unclaim(c);
	pr_session_fds_update(s);
	report(s, c->cpu, false);
	return n;
}

/* Opens c as start did (filters and BPF output map entries too), enabled
 * unless the session is stopped; its stats carry on, its drop counts start
 * again with the new events. A failure is reported once: the CPU waits
 * until it has left. */
static void up(struct perfring_session *s, size_t i)
{
	struct pr_cpu *c = &s->cpu[i];
	struct pr_plan p;
	int err;

	if (!pr_cpu_claim(c, pr_self()))
		return;
	pr_session_plan(s, &p);
	p.enable_on_exec = false;
	memset(&c->lost, 0, sizeof(c->lost));
	c->ended = false;
	PR_STAT_SET(c, hup, 0); /* an end its old fd reported is over */
	err = pr_open_cpus(&p, c, 1, &s->err);
	if (!err)
		err = pr_session_cpu_up(s, c);
	if (!err && s->state == PR_STARTED)
		err = pr_enable_cpus(c, 1, true, &s->err);
	if (err) {
		pr_session_cpu_down(s, c);
		pr_close_cpus(c, 1);
		idle_ring(s->hp, c, i);
		c->state = PR_CPU_FAILED;
	}
	c->sink = &s->reg.sink;
	pr_cpu_unclaim(c);
	if (err) {
		report(s, c->cpu, false);
		return;
	}
	pr_session_fds_update(s);
	tell(s, i, true);
	report(s, c->cpu, true);
}

int pr_hotplug_sync(struct perfring_session *s)
{
	struct pr_hotplug *h = s->hp;
	struct pr_errbuf e = { .busy = 0 };
	int *online = NULL, got = 0, k;
	size_t n = 0, i;
	bool want;

	if (!h || s->state == PR_NEW || !s->cpu || pr_merge_busy(s->merge))
		return 0;
	h->due = false;
	/* Unreadable now: no change is made on a guess. */
	if (pr_sysfs_cpus(&e, "online", &online, &n))
		return 0;
	pr_session_enter(s);
	for (i = 0; i < s->ncpu && !pr_session_closing(s); i++) {
		struct pr_cpu *c = &s->cpu[i];

		want = pr_cpulist_has(online, n, c->cpu);
		if (!want && c->state == PR_CPU_FAILED)
			c->state = PR_CPU_OFF;
		if (want == pr_cpu_on(c) || (want && c->state == PR_CPU_FAILED))
			continue;
		if (want) {
			up(s, i);
		} else if ((k = down(s, i)) > 0) {
			got += k;
		}
	}
	free(online);
	return pr_session_leave(s) ? -ECANCELED : got;
}

int pr_hotplug_notified(struct perfring_session *s, int fd)
{
	if (!s->hp)
		return 0;
	if (fd >= 0 && pr_uevent_read(fd) > 0)
		s->hp->due = true;
	return s->hp->due ? pr_hotplug_sync(s) : 0;
}

/* The notifier read, so that its readiness ends and its queue never fills,
 * then sysfs, which decides either way (a uevent only says "look again"). */
static int read_and_sync(struct perfring_session *s)
{
	if (s->hp->nfd >= 0)
		pr_uevent_read(s->hp->nfd);
	return pr_hotplug_sync(s);
}

/* The feature's tick (parse_all and the sleep-polling wait): at most every
 * HOTPLUG_MS, the notifier is read and sysfs too. As sync. */
#define HOTPLUG_MS 100

static int tick(struct perfring_session *s)
{
	uint64_t now;

	if (!s->hp)
		return 0;
	now = pr_now_ns();
	if (now < s->hp->next_ns)
		return 0;
	s->hp->next_ns = now + (uint64_t)HOTPLUG_MS * PR_NS_PER_MS;
	return read_and_sync(s);
}

PERFRING_API int perfring_session_set_cpu_callback(struct perfring_session *s,
						   void (*fn)(int cpu, bool online, void *ctx),
						   void *ctx)
{
	if (!s)
		return pr_null(NULL, __func__, "s");
	if (!s->hp)
		return pr_err(&s->err, -EINVAL, "perfring_session_set_cpu_callback: the session "
			      "does not follow hotplug (opts.follow_hotplug)");
	if (s->state != PR_NEW)
		return pr_err(&s->err, -EBUSY, "perfring_session_set_cpu_callback: set it before "
			      "perfring_session_start");
	s->hp->fn = fn;
	s->hp->ctx = ctx;
	return 0;
}

PERFRING_API int perfring_session_hotplug_fd(const struct perfring_session *s)
{
	if (!s)
		return pr_null(NULL, __func__, "s");
	return s->hp && s->hp->nfd >= 0 ? s->hp->nfd : -ENOENT;
}

PERFRING_API int perfring_session_hotplug_sync(struct perfring_session *s)
{
	if (!s)
		return pr_null(NULL, __func__, "s");
	if (!s->hp)
		return pr_err(&s->err, -EINVAL, "perfring_session_hotplug_sync: the session does "
			      "not follow hotplug (opts.follow_hotplug)");
	if (s->state == PR_NEW)
		return pr_err(&s->err, -EINVAL, "perfring_session_hotplug_sync before "
			      "perfring_session_start");
	if (__atomic_load_n(&s->depth, __ATOMIC_ACQUIRE))
		return pr_err(&s->err, -EBUSY, "perfring_session_hotplug_sync inside a parse of "
			      "the session (from a callback, or while another thread parses): "
			      "call it from the loop");
	return read_and_sync(s);
}

const struct pr_feature pr_feature_hotplug = {
	.name = "hotplug",
	.init = init,
	.open = open_online,
	.tick = tick,
	.fini = fini,
};
