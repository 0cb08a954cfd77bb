/* SPDX-License-Identifier: MIT */
/* Snapshots of overwrite rings: pause, copy what each ring got since the
 * last snapshot, resume, then deliver the copies' whole records oldest
 * first through the merge, as a parse_all over forward rings. */
#include "snapshot.h"
#include "kernel/backward.h"
#include "kernel/visit.h"
#include "kernel/tail.h"
#include "read/deliver.h"
#include "read/merge.h"
#include "base/clock.h"
#include "base/sys.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* One ring's copies: raw holds its bytes since the last snapshot as the
 * kernel left them, fwd their whole records oldest first, which the merge
 * reads as a forward ring through meta. */
struct snap_cpu {
	uint8_t *raw, *fwd;
	struct perf_event_mmap_page *meta;
	struct pr_ring ring;        /* over fwd: swapped into the pr_cpu to deliver */
	struct pr_ring kernel;      /* the pr_cpu's own ring while swapped out */
	uint64_t prev;              /* the kernel's head at the last snapshot */
	uint64_t head, since, room; /* this one's head, bytes since prev, bytes intact */
};

struct pr_snap {
	struct pr_attachment att;   /* first: release gets its address */
	struct perfring_session *s;
	struct snap_cpu *cpu;
	size_t n;
	int busy;                   /* atomic: a snapshot is running */
	bool pending;               /* a callback stopped the last delivery */
};

int pr_overwrite_refuse(struct perfring_session *s, const char *call)
{
	if (!s || !s->o.overwrite)
		return 0;
	return pr_err(&s->err, -EOPNOTSUPP, "%s: this session's rings are overwrite rings "
		      "(opts.overwrite), read only by perfring_session_snapshot()", call);
}

static void snap_free(struct pr_snap *p)
{
	size_t i;

	for (i = 0; p->cpu && i < p->n; i++) {
		free(p->cpu[i].raw);
		free(p->cpu[i].fwd);
		free(p->cpu[i].meta);
	}
	free(p->cpu);
	free(p);
}

/* The session goes: its copies with it. */
static void snap_release(struct pr_attachment *a)
{
	struct pr_snap *p = (struct pr_snap *)a;

	p->s->snap = NULL;
	snap_free(p);
}

static int cpu_make(struct pr_cpu *c, struct snap_cpu *sc)
{
	uint64_t size = c->ring.size;

	sc->raw = pr_malloc(size);
	sc->fwd = pr_malloc(size);
	sc->meta = pr_calloc(1, sizeof(*sc->meta));
	if (!sc->raw || !sc->fwd || !sc->meta || !c->scratch)
		return -ENOMEM;
	return pr_ring_init(&sc->ring, sc->meta, sc->fwd, size, c->scratch);
}

static int snap_make(struct perfring_session *s)
{
	struct pr_snap *p = pr_calloc(1, sizeof(*p));
	size_t i;
	int err = p ? 0 : -ENOMEM;

	if (p) {
		p->s = s;
		p->n = s->ncpu;
		p->cpu = pr_calloc(s->ncpu ? s->ncpu : 1, sizeof(*p->cpu));
		err = p->cpu ? 0 : -ENOMEM;
	}
	for (i = 0; !err && i < s->ncpu; i++)
		err = cpu_make(&s->cpu[i], &p->cpu[i]);
	if (err) {
		if (p)
			snap_free(p);
		return pr_err(&s->err, err, "out of memory for the snapshot copies (two buffers "
			      "of a ring's size per CPU, %zu CPUs)", s->ncpu);
	}
	p->att.release = snap_release;
	pr_attach(s, &p->att);
	s->snap = p;
	return 0;
}

/* PERF_EVENT_IOC_PAUSE_OUTPUT on (1) or off (0) for every ring: the ring's
 * leader owns it, and every event redirected into it shares the pause. */
static int pause_rings(struct perfring_session *s, unsigned long on)
{
	size_t i, j;
	int err = 0, fd;

	for (i = 0; i < s->ncpu; i++) {
		fd = s->cpu[i].leader_fd;
		if (!pr_cpu_on(&s->cpu[i]) || pr_ioctl(fd, PERF_EVENT_IOC_PAUSE_OUTPUT, on) == 0)
			continue;
		err = pr_err(&s->err, -errno, "ioctl(PERF_EVENT_IOC_PAUSE_OUTPUT, %lu) on CPU %d: %s",
			     on, s->cpu[i].cpu, perfring_strerror(-errno));
		if (!on)
			continue; /* resume the others all the same */
		for (j = 0; j < i; j++)
			if (pr_cpu_on(&s->cpu[j]))
				pr_ioctl(s->cpu[j].leader_fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 0);
		return err;
	}
	return err;
}

static uint64_t head_of(const struct pr_ring *k)
{
	/* Pairs with the kernel's smp_wmb() before it publishes data_head. */
	return __atomic_load_n(&k->meta->data_head, __ATOMIC_ACQUIRE);
}

/* While paused: the bytes written since the last snapshot, at most a ring.
 * writers_done: the writers were waited out since the pause, so no record
 * is half written; else what the kernel wrote during the copy is left out. */
static void copy_ring(const struct pr_ring *k, struct snap_cpu *sc, bool writers_done)
{
	uint64_t d;

	sc->head = head_of(k);
	sc->since = sc->prev - sc->head; /* backward: the head counts down */
	pr_bwd_copy_out(k->data, k->size, sc->head, sc->since < k->size ? sc->since : k->size,
			sc->raw);
	sc->room = k->size;
	if (!writers_done) {
		d = sc->head - head_of(k);
		sc->room = d >= k->size ? 0 : k->size - d;
	}
}

/* Whether a ring has published anything since the last snapshot. When
 * none has, there is nothing to copy and no reason to pause: a record in
 * flight now is published later and goes to the next snapshot. */
static bool any_new(struct perfring_session *s, struct pr_snap *p)
{
	size_t i;

	for (i = 0; i < s->ncpu; i++)
		if (head_of(&s->cpu[i].ring) != p->cpu[i].prev)
			return true;
	for (i = 0; i < s->ncpu; i++) {
		p->cpu[i].head = p->cpu[i].prev;
		p->cpu[i].since = 0;
		p->cpu[i].room = s->cpu[i].ring.size;
	}
	return false;
}

/* Paused for the copy only: records the kernel makes meanwhile are dropped
 * and counted by it as lost (a LOST record after the resume). */
static int pause_and_copy(struct perfring_session *s, struct pr_snap *p, uint32_t wait)
{
	bool writers_done;
	size_t i;
	int err;

	if (!any_new(s, p))
		return 0;
	if ((err = pause_rings(s, 1)))
		return err;
	/* Every writer that passed the kernel's paused check is inside an RCU
	 * read section, on its ring's CPU with preemption off (kernel/visit.c):
	 * after a grace period, or once this thread has run on each CPU, each
	 * has published its record. */
	writers_done = (wait == PERFRING_SNAPSHOT_WAIT_VISIT &&
			pr_visit_cpus(s->cpus, s->ncpu) == 0) || pr_membarrier_global() == 0;
	for (i = 0; i < s->ncpu; i++)
		copy_ring(&s->cpu[i].ring, &p->cpu[i], writers_done);
	return pause_rings(s, 0);
}

/* The copy's whole records, oldest first, into the forward ring. */
static void find_records(struct pr_cpu *c, struct snap_cpu *sc)
{
	struct pr_bwd_range r;

	pr_bwd_find(sc->raw, c->ring.size, 0, sc->since, sc->room, &r);
	pr_bwd_reverse(sc->raw, c->ring.size, 0, &r, sc->fwd);
	if (r.end == PR_BWD_TORN)
		PR_STAT_ADD(c, overwritten, sc->since - r.len);
	else if (r.end == PR_BWD_BAD)
		PR_STAT_ADD(c, corrupt, 1);
	sc->prev = sc->head;
	sc->ring.tail = sc->ring.head = 0;
	sc->meta->data_tail = 0;
	sc->meta->data_head = r.len;
}

/* The forward copies through the merge, in the pr_cpu's place. */
static int deliver(struct perfring_session *s, struct pr_snap *p, bool *stopped)
{
	size_t i;
	int n;

	for (i = 0; i < s->ncpu; i++) {
		p->cpu[i].kernel = s->cpu[i].ring;
		s->cpu[i].ring = p->cpu[i].ring;
	}
	n = pr_merge_parse(s->merge, stopped);
	p->pending = false;
	for (i = 0; i < s->ncpu; i++) {
		p->cpu[i].ring = s->cpu[i].ring;
		s->cpu[i].ring = p->cpu[i].kernel;
		p->pending |= *stopped && p->cpu[i].ring.tail != p->cpu[i].meta->data_head;
	}
	return n;
}

/* The time synthetic records carry: the oldest of the snapshot's records. */
static uint64_t oldest_time(struct perfring_session *s, struct pr_snap *p)
{
	uint64_t t = 0, k;
	size_t i;

	for (i = 0; i < s->ncpu; i++) {
		if (p->cpu[i].meta->data_head < sizeof(struct perf_event_header))
			continue;
		k = pr_key_of(&s->cpu[i], (const struct perf_event_header *)p->cpu[i].fwd);
		if (k && (!t || k < t))
			t = k;
	}
	return t ? t : pr_now_ns();
}

struct synth {
	struct perfring_session *s;
	uint64_t time;
	uint64_t buf[(sizeof(struct perf_event_header) + PR_TAIL_BODY_MAX + 32) / 8 + 1];
};

/* A body from /proc made a record as the kernel would write it (the
 * forced sample_id trailer: TID, TIME, CPU, IDENTIFIER) and delivered. */
static int emit(uint32_t type, uint32_t pid, uint32_t tid, const uint8_t *body, size_t len,
		void *ctx)
{
	struct synth *y = ctx;
	struct perf_event_header *h = (struct perf_event_header *)y->buf;
	uint8_t *b = (uint8_t *)y->buf;
	struct { uint32_t pid, tid; uint64_t time; uint32_t cpu, res; uint64_t id; } trailer = {
		pid, tid, y->time, UINT32_MAX, 0, 0 };
	struct perfring_record rec;
	perfring_record_fn fn = __atomic_load_n(&y->s->reg.sink.fn, __ATOMIC_RELAXED);

	*h = (struct perf_event_header){ .type = type, .size = (uint16_t)(sizeof(*h) + len + 32),
					 .misc = type == PERF_RECORD_MMAP2 ? PERF_RECORD_MISC_USER : 0 };
	memcpy(b + sizeof(*h), body, len);
	memcpy(b + sizeof(*h) + len, &trailer, sizeof(trailer));
	if (!fn || pr_decode_record(h, PR_SAMPLE_FORCED, &rec))
		return 0;
	rec.cpu = -1;
	rec.event = NULL;
	rec.synthetic = true;
	return fn(&rec, y->s->reg.sink.ctx) ? 1 : 0;
}

/* Synthetic COMM and MMAP2 records; true: a callback asked to stop. */
static bool synthesize(struct perfring_session *s, struct pr_snap *p, uint32_t what)
{
	struct synth *y = pr_malloc(sizeof(*y));
	int r;

	if (!y)
		return false;
	y->s = s;
	y->time = oldest_time(s, p);
	r = pr_tail_synth(s->o.pid, what & PERFRING_REC_COMM, what & PERFRING_REC_MMAP, emit, y);
	free(y);
	return r > 0;
}

static int check(struct perfring_session *s, const struct perfring_snapshot_opts *in,
		 struct perfring_snapshot_opts *o)
{
	const uint32_t ok = PERFRING_REC_COMM | PERFRING_REC_MMAP;
	int err;

	if (!s)
		return pr_null(NULL, "perfring_session_snapshot", "s");
	if (!s->o.overwrite)
		return pr_err(&s->err, -EOPNOTSUPP, "perfring_session_snapshot: the session's "
			      "rings are not overwrite rings (set opts.overwrite); use a parse");
	if (s->state == PR_NEW)
		return pr_err(&s->err, -EINVAL, "snapshot before perfring_session_start");
	if ((err = pr_opts_copy(&s->err, "perfring_snapshot_opts", o, sizeof(*o), sizeof(*o), in)))
		return err;
	if (o->synthesize & ~ok)
		return pr_err(&s->err, -EINVAL, "perfring_snapshot_opts.synthesize = %#x: only "
			      "PERFRING_REC_COMM and PERFRING_REC_MMAP can be synthesized",
			      o->synthesize);
	if (o->wait > PERFRING_SNAPSHOT_WAIT_VISIT)
		return pr_err(&s->err, -EINVAL, "perfring_snapshot_opts.wait = %u: "
			      "PERFRING_SNAPSHOT_WAIT_GRACE or _VISIT", o->wait);
	if (o->synthesize && !s->reg.sink.fn)
		return pr_err(&s->err, -EINVAL, "perfring_snapshot_opts.synthesize needs a record "
			      "callback (perfring_session_set_record_callback) to deliver to");
	return 0;
}

/* The rest of an interrupted snapshot, then a new one. */
static int snapshot(struct perfring_session *s, struct pr_snap *p,
		    const struct perfring_snapshot_opts *o)
{
	bool stopped = false;
	int n = 0, m, err;
	size_t i;

	if (p->pending && ((n = deliver(s, p, &stopped)) < 0 || stopped))
		return n;
	if ((err = pause_and_copy(s, p, o->wait)))
		return err;
	for (i = 0; i < s->ncpu; i++)
		find_records(&s->cpu[i], &p->cpu[i]);
	if (o->synthesize && synthesize(s, p, o->synthesize)) {
		p->pending = true;
		return n;
	}
	m = deliver(s, p, &stopped);
	return m < 0 ? m : n + m;
}

PERFRING_API int perfring_session_snapshot_opts(struct perfring_session *s,
						const struct perfring_snapshot_opts *opts)
{
	struct perfring_snapshot_opts o;
	int err = check(s, opts, &o), n;
	struct pr_snap *p;

	if (err)
		return err;
	if (!s->snap && (err = snap_make(s)))
		return err;
	p = s->snap;
	if (__atomic_exchange_n(&p->busy, 1, __ATOMIC_ACQUIRE))
		return pr_err(&s->err, -EBUSY, "perfring_session_snapshot: a snapshot is running "
			      "(called from its callback, or from another thread)");
	pr_session_enter(s);
	n = snapshot(s, p, &o);
	if (n == -EBUSY)
		pr_session_busy(s);
	__atomic_store_n(&p->busy, 0, __ATOMIC_RELEASE);
	return pr_session_leave(s) ? -ECANCELED : n;
}

PERFRING_API int perfring_session_snapshot(struct perfring_session *s)
{
	return perfring_session_snapshot_opts(s, NULL);
}
