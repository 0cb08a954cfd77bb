/* SPDX-License-Identifier: MIT */
/* A reactor following CPU hotplug: the notifier as a slot of its own kind,
 * after the CPUs', and each CPU's change through the driver's watch():
 * unwatch after a last drain, or watch the new fd and drain it. */
#include "loop/reactor.h"
#include "features/hotplug.h"
#include "base/sys.h"

#include <unistd.h>

static struct slot *slot_of(struct perfring_reactor *r, size_t idx)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (r->slots[i].c == &r->s->cpu[idx])
			return &r->slots[i];
	return NULL;
}

/* Offline: the ring drained to its head (time-ordered with the others in
 * merged mode), then the slot let go before its fd closes. */
static void slot_off(struct perfring_reactor *r, struct slot *sl)
{
	if (pr_reactor_ordered(r))
		pr_reactor_drain_kept(r); /* the window's kept records too: it closes */
	else if (sl->watched)
		pr_reactor_slot(r, (size_t)(sl - r->slots), false);
	if (r->cancelled)
		return;
	pr_reactor_unwatch(r, sl);
	if (sl->orphan)
		r->orphans--;
	sl->orphan = sl->more = false;
	sl->end = 0;
	sl->fd = -1;
}

/* Online: the new fd watched, then drained; a loop that registers late
 * gets the catch-up turns that attaching has. */
static void slot_on(struct perfring_reactor *r, struct slot *sl)
{
	size_t slot = (size_t)(sl - r->slots);
	int err;

	pr_reactor_unwatch(r, sl);
	sl->fd = sl->c->leader_fd;
	sl->end = 0;
	sl->more = false;
	if ((err = r->ops.watch(r->loop, slot, sl->fd, true))) {
		pr_reactor_report(r, sl->c->cpu, err);
		return;
	}
	sl->watched = true;
	if (r->ops.flags & PERFRING_LOOP_WATCH_LATE) {
		r->catchup = CATCHUP_TURNS;
		pr_reactor_want_soon(r, sl->c->cpu);
	}
	if (pr_reactor_ordered(r))
		pr_reactor_drain_all(r, false);
	else
		pr_reactor_drain_slot(r, sl);
}

static void cpu_change(struct pr_attachment *a, size_t idx, bool on)
{
	struct perfring_reactor *r = (struct perfring_reactor *)((char *)a -
								  offsetof(struct perfring_reactor, att));
	struct slot *sl;

	if (r->cancelled || !(sl = slot_of(r, idx)))
		return;
	pr_reactor_enter(r);
	if (on)
		slot_on(r, sl);
	else
		slot_off(r, sl);
	pr_reactor_leave(r);
}

/* Each reactor watches a dup of the notifier: a loop may refuse a fd that
 * another watcher of it already has (libuv's uv_poll_t). Without one, the
 * slot stays unwatched and the timer reads sysfs. */
static bool follow_open(struct perfring_reactor *r, struct slot *sl)
{
	int fd;

	if (!r->s->hp)
		return false;
	r->att.cpu_change = cpu_change;
	if ((fd = pr_hotplug_fd(r->s)) < 0 || (sl->fd = pr_dup(fd)) < 0)
		return true;
	if (r->ops.watch(r->loop, (size_t)(sl - r->slots), sl->fd, true)) {
		close(sl->fd);
		sl->fd = -1;
		return true;
	}
	sl->watched = true;
	return true;
}

static void add_samples(struct perfring_reactor *r, int n)
{
	if (n > 0 && !r->cancelled)
		r->samples += (uint64_t)n;
}

static void follow_ready(struct perfring_reactor *r, struct slot *sl, uint32_t revents)
{
	(void)revents;
	add_samples(r, pr_hotplug_notified(r->s, sl->fd));
}

/* With the notifier too: uevents can be lost, and a network namespace other
 * than the first gets none, so each flush reads sysfs again. */
static void follow_timer(struct perfring_reactor *r, struct slot *sl)
{
	(void)sl;
	add_samples(r, pr_hotplug_sync(r->s));
}

static void follow_stop(struct perfring_reactor *r, struct slot *sl)
{
	(void)r;
	if (sl->fd >= 0)
		close(sl->fd);
	sl->fd = -1;
}

const struct pr_slot_kind pr_follow_slot = {
	.open = follow_open, .ready = follow_ready, .timer = follow_timer, .stop = follow_stop,
};
