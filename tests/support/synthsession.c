/* SPDX-License-Identifier: MIT */
/* A started session whose rings are synthetic rings in ordinary memory. */
#include "synthsession.h"
#include "read/merge.h"
#include "read/batch.h"
#include "base/sys.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int alloc_rings(struct synth_session *b, size_t n, uint64_t ring_size)
{
	int err;

	b->rings = calloc(n, sizeof(*b->rings));
	if (!b->rings)
		return -ENOMEM;
	for (b->nrings = 0; b->nrings < n; b->nrings++)
		if ((err = synth_ring_init(&b->rings[b->nrings], ring_size)))
			return err;
	return 0;
}

/* Leader first, as a kernel CPU's table has it after pr_cpu_ids_ready(). */
static int attach_ring(struct synth_session *b, struct pr_cpu *c, size_t i)
{
	struct synth_ring *sr = &b->rings[i];
	size_t k;

	c->cpu = (int)i;
	c->ids = pr_calloc(1 + b->nevents, sizeof(*c->ids));
	if (!c->ids)
		return -ENOMEM;
	c->ids[0] = (struct pr_idmap){ synth_leader_id(i), NULL };
	for (k = 0; k < b->nevents; k++)
		c->ids[1 + k] = (struct pr_idmap){ synth_event_k_id(i, k), b->evs[k] };
	c->nids = 1 + b->nevents;
	pr_cpu_ids_ready(c);
	/* The ring's scratch is the synth ring's: c->scratch stays NULL so the
	 * session's close path does not free it. */
	return pr_ring_init(&c->ring, sr->meta, sr->data, sr->size, sr->scratch);
}

/* What pr_open_cpus() would build, handed to the session. Every pr_cpu
 * must look unopened to its close path: leader_fd -1 (calloc's 0 would
 * close stdin), no map, no fds. */
static int attach_rings(struct synth_session *b)
{
	struct pr_cpu *cpu = pr_calloc(b->nrings, sizeof(*cpu));
	size_t i;
	int err = cpu ? 0 : -ENOMEM;

	for (i = 0; cpu && i < b->nrings; i++)
		cpu[i].leader_fd = -1;
	for (i = 0; !err && i < b->nrings; i++)
		err = attach_ring(b, &cpu[i], i);
	if (!err && !(err = pr_session_adopt(b->s, cpu, b->nrings)))
		return 0;
	for (i = 0; cpu && i < b->nrings; i++)
		free(cpu[i].ids);
	free(cpu);
	return err;
}

static int add_events(struct synth_session *b, const struct synth_event_spec *evs, size_t n)
{
	int err;

	for (b->nevents = 0; b->nevents < n; b->nevents++) {
		struct perfring_event **ev = &b->evs[b->nevents];

		if (!evs[b->nevents].attr)
			return -EINVAL;
		if ((err = perfring_session_add_attr(b->s, evs[b->nevents].attr, ev)) ||
		    (err = perfring_event_set_callback(*ev, evs[b->nevents].fn,
						       evs[b->nevents].ctx)))
			return err;
	}
	b->ev = b->evs[0];
	return 0;
}

int synth_session_new_events(struct synth_session *b, size_t nrings, uint64_t ring_size,
			     const struct synth_event_spec *evs, size_t n)
{
	struct perfring_opts o = { .sz = sizeof(o) };
	int err;

	memset(b, 0, sizeof(*b));
	if (!nrings || nrings > UINT32_MAX || !evs || !n || n > SYNTH_EVENTS_MAX)
		return -EINVAL;
	if ((err = perfring_session_new(&o, &b->s)))
		return err;
	if ((err = add_events(b, evs, n)) || (err = alloc_rings(b, nrings, ring_size)) ||
	    (err = attach_rings(b))) {
		synth_session_free(b);
		return err;
	}
	return 0;
}

int synth_session_new(struct synth_session *b, size_t nrings, uint64_t ring_size,
			    const struct perf_event_attr *attr, perfring_sample_fn fn, void *ctx)
{
	struct synth_event_spec one = { attr, fn, ctx };

	return synth_session_new_events(b, nrings, ring_size, &one, 1);
}

void synth_session_free(struct synth_session *b)
{
	size_t i;

	/* The session goes first: its close path may still read the rings'
	 * pr_cpu entries, never the ring memory itself. */
	perfring_session_free(b->s);
	for (i = 0; i < b->nrings; i++)
		synth_ring_free(&b->rings[i]);
	free(b->rings);
	memset(b, 0, sizeof(*b));
}

void synth_session_rewind(struct synth_session *b)
{
	size_t i;

	for (i = 0; i < b->nrings; i++) {
		__atomic_store_n(&b->rings[i].meta->data_tail, 0, __ATOMIC_RELEASE);
		pr_cpu_rewind(&b->s->cpu[i]);
	}
	pr_merge_reset(b->s->merge);
}

void synth_session_clear(struct synth_session *b)
{
	size_t i;

	for (i = 0; i < b->nrings; i++)
		synth_ring_set_pos(&b->rings[i], 0);
	synth_session_rewind(b);
}

const char *const synth_form_name[] = {
	[SYNTH_TREE] = "parse_all, tree alone",
	[SYNTH_BATCHES] = "parse_all, batches after every step",
	[SYNTH_PER_CPU] = "parse_for_cpu",
	[SYNTH_PULL] = "pull (cpu_next/commit)",
};

static int pull_one(struct perfring_session *s, int cpu, struct perfring_sample *smp)
{
	const struct pr_sink *sink = &s->reg.sink;
	struct perfring_record rec;
	int n, samples = 0;

	while ((n = perfring_cpu_next(s, cpu, smp, &rec)) > 0) {
		if (n == PERFRING_NEXT_SAMPLE && smp->event->fn)
			smp->event->fn(smp, smp->event->ctx);
		else if (n == PERFRING_NEXT_RECORD && sink->fn)
			sink->fn(&rec, sink->ctx);
		samples += n == PERFRING_NEXT_SAMPLE;
	}
	return n < 0 ? n : perfring_cpu_commit(s, cpu) ? -EIO : samples;
}

static int parse_each(struct synth_session *b, bool pull)
{
	struct perfring_sample smp;
	int n, total = 0;

	memset(&smp, 0, sizeof(smp));
	for (size_t i = 0; i < b->nrings; i++) {
		n = pull ? pull_one(b->s, (int)i, &smp) : perfring_session_parse_for_cpu(b->s, (int)i);
		if (n < 0)
			return n;
		total += n;
	}
	return total;
}

int synth_session_parse(struct synth_session *b, enum synth_form f)
{
	struct pr_batch *bt = b->s->merge->batch;
	bool on = f == SYNTH_BATCHES;
	int n;

	if (f == SYNTH_PER_CPU || f == SYNTH_PULL)
		return parse_each(b, f == SYNTH_PULL);
	if (!bt)
		return -ENOTSUP;
	bt->after = bt->wait = bt->wait_max = on ? 1 : UINT32_MAX;
	bt->min_total = on ? 1 : bt->min_total;
	n = perfring_session_parse_all(b->s);
	return n >= 0 && on && !bt->batches ? -ENOTSUP : n;
}

uint64_t synth_session_sample_type_k(const struct synth_session *b, size_t k)
{
	return perfring_event_attr(b->evs[k])->sample_type;
}

uint64_t synth_session_sample_type(const struct synth_session *b)
{
	return synth_session_sample_type_k(b, 0);
}

size_t synth_session_template_k(const struct synth_session *b, size_t ring, size_t k,
				struct synth_fields *f, uint8_t *buf, size_t cap)
{
	f->identifier = synth_event_k_id(ring, k);
	f->id = synth_event_k_id(ring, k);
	f->cpu = (uint32_t)ring;
	return synth_sample(buf, cap, synth_session_sample_type_k(b, k), f);
}

size_t synth_session_template(const struct synth_session *b, size_t ring, struct synth_fields *f,
		      uint8_t *buf, size_t cap)
{
	return synth_session_template_k(b, ring, 0, f, buf, cap);
}

/* perf_output_sample() order: IDENTIFIER, IP, TID, then TIME. */
size_t synth_time_offset(uint64_t st)
{
	uint64_t before = st & (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID);

	return sizeof(struct perf_event_header) + 8 * (size_t)__builtin_popcountll(before);
}

int synth_session_put(struct synth_session *b, size_t ring, uint8_t *rec, size_t len, size_t time_off,
	      uint64_t t)
{
	memcpy(rec + time_off, &t, sizeof(t));
	return synth_put(&b->rings[ring], rec, len);
}

uint64_t synth_pow2(uint64_t n)
{
	uint64_t p = 8;

	while (p < n)
		p <<= 1;
	return p;
}

/* ------------------------------------------------------------ timing */
