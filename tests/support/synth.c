/* SPDX-License-Identifier: MIT */
#include "synth.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int synth_ring_init(struct synth_ring *sr, uint64_t size)
{
	void *data = NULL;

	memset(sr, 0, sizeof(*sr));
	if (size < 8 || (size & (size - 1)))
		return -EINVAL;
	sr->meta = calloc(1, sizeof(*sr->meta));
	sr->scratch = malloc(PR_RING_SCRATCH);
	/* Exactly size bytes, so ASan catches any read past the data area. */
	if (!sr->meta || !sr->scratch || posix_memalign(&data, 64, size)) {
		synth_ring_free(sr);
		return -ENOMEM;
	}
	memset(data, 0, size);
	sr->data = data;
	sr->size = size;
	sr->meta->data_size = size;
	return pr_ring_init(&sr->ring, sr->meta, sr->data, size, sr->scratch);
}

void synth_ring_free(struct synth_ring *sr)
{
	free(sr->meta);
	free(sr->data);
	free(sr->scratch);
	memset(sr, 0, sizeof(*sr));
}

int synth_ring_set_pos(struct synth_ring *sr, uint64_t pos)
{
	sr->meta->data_head = pos;
	sr->meta->data_tail = pos;
	return pr_ring_init(&sr->ring, sr->meta, sr->data, sr->size, sr->scratch);
}

uint64_t synth_head(const struct synth_ring *sr)
{
	return __atomic_load_n(&sr->meta->data_head, __ATOMIC_RELAXED);
}

void synth_set_head(struct synth_ring *sr, uint64_t head)
{
	__atomic_store_n(&sr->meta->data_head, head, __ATOMIC_RELEASE);
}

void synth_write(struct synth_ring *sr, uint64_t pos, const void *buf, size_t len)
{
	uint64_t off = pos & (sr->size - 1);
	size_t first = len;

	if (first > sr->size - off)
		first = sr->size - off;
	memcpy(sr->data + off, buf, first);
	memcpy(sr->data, (const uint8_t *)buf + first, len - first);
}

int synth_put(struct synth_ring *sr, const void *rec, size_t len)
{
	uint64_t head = sr->meta->data_head;
	uint64_t tail = __atomic_load_n(&sr->meta->data_tail, __ATOMIC_ACQUIRE);

	if (head - tail > sr->size || len > sr->size - (head - tail))
		return -ENOSPC;
	synth_write(sr, head, rec, len);
	synth_set_head(sr, head + len);
	return 0;
}

size_t synth_put_n(struct synth_ring *sr, const void *rec, size_t len, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (synth_put(sr, rec, len))
			break;
	return i;
}

/* ------------------------------------------------------------- encoders */

struct cur {
	uint8_t *buf;
	size_t cap, len;
	bool full;
};

static void put(struct cur *c, const void *p, size_t n)
{
	if (c->full || n > c->cap - c->len) {
		c->full = true;
		return;
	}
	if (p)
		memcpy(c->buf + c->len, p, n);
	else
		memset(c->buf + c->len, 0, n);
	c->len += n;
}

static void put64(struct cur *c, uint64_t v)
{
	put(c, &v, sizeof(v));
}

static void put32(struct cur *c, uint32_t v)
{
	put(c, &v, sizeof(v));
}

static void pad8(struct cur *c)
{
	put(c, NULL, -c->len & 7);
}

static void begin(struct cur *c, uint8_t *buf, size_t cap, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { .type = type, .misc = misc };

	c->buf = buf;
	c->cap = cap;
	c->len = 0;
	c->full = false;
	put(c, &h, sizeof(h));
}

/* Patches the header size; 0 if the record overflowed cap or a u16. */
static size_t finish(struct cur *c)
{
	struct perf_event_header h;

	if (c->full || c->len > SYNTH_REC_MAX || (c->len & 7))
		return 0;
	memcpy(&h, c->buf, sizeof(h));
	h.size = (uint16_t)c->len;
	memcpy(c->buf, &h, sizeof(h));
	return c->len;
}

static void put_trailer(struct cur *c, uint64_t st, const struct synth_fields *t)
{
	static const struct synth_fields zero;

	if (!t)
		t = &zero;
	if (st & PERF_SAMPLE_TID) {
		put32(c, t->pid);
		put32(c, t->tid);
	}
	if (st & PERF_SAMPLE_TIME)
		put64(c, t->time);
	if (st & PERF_SAMPLE_ID)
		put64(c, t->id);
	if (st & PERF_SAMPLE_STREAM_ID)
		put64(c, t->stream_id);
	if (st & PERF_SAMPLE_CPU) {
		put32(c, t->cpu);
		put32(c, t->res);
	}
	if (st & PERF_SAMPLE_IDENTIFIER)
		put64(c, t->identifier);
}

size_t synth_trailer_size(uint64_t sample_type)
{
	return 8 * (size_t)__builtin_popcountll(sample_type & SYNTH_TRAILER_BITS);
}

static void put_raw(struct cur *c, const void *raw, uint32_t size)
{
	uint32_t padded = ((4 + size + 7) & ~7u) - 4;

	put32(c, padded);
	put(c, raw, size);
	put(c, NULL, padded - size);
}

static void put_fixed(struct cur *c, uint64_t st, const struct synth_fields *f)
{
	if (st & PERF_SAMPLE_IDENTIFIER)
		put64(c, f->identifier);
	if (st & PERF_SAMPLE_IP)
		put64(c, f->ip);
	if (st & PERF_SAMPLE_TID) {
		put32(c, f->pid);
		put32(c, f->tid);
	}
	if (st & PERF_SAMPLE_TIME)
		put64(c, f->time);
	if (st & PERF_SAMPLE_ADDR)
		put64(c, f->addr);
	if (st & PERF_SAMPLE_ID)
		put64(c, f->id);
	if (st & PERF_SAMPLE_STREAM_ID)
		put64(c, f->stream_id);
	if (st & PERF_SAMPLE_CPU) {
		put32(c, f->cpu);
		put32(c, f->res);
	}
	if (st & PERF_SAMPLE_PERIOD)
		put64(c, f->period);
}

static void put_tail(struct cur *c, uint64_t st, const struct synth_fields *f)
{
	if (st & PERF_SAMPLE_CALLCHAIN) {
		put64(c, f->callchain_nr);
		if (f->callchain_nr > SYNTH_REC_MAX / 8)
			c->full = true;
		else
			put(c, f->callchain, f->callchain_nr * 8);
	}
	if (st & PERF_SAMPLE_RAW)
		put_raw(c, f->raw, f->raw_size);
}

size_t synth_sample(uint8_t *buf, size_t cap, uint64_t st, const struct synth_fields *f)
{
	struct cur c;

	begin(&c, buf, cap, PERF_RECORD_SAMPLE, f->misc);
	put_fixed(&c, st, f);
	put_tail(&c, st, f);
	return finish(&c);
}

static void put_regs(struct cur *c, uint64_t abi, const uint64_t *regs, uint64_t mask)
{
	put64(c, abi);
	if (abi)
		put(c, regs, 8u * (size_t)__builtin_popcountll(mask));
}

static void put_stack(struct cur *c, const struct synth_prof *p)
{
	put64(c, p->stack_size);
	if (!p->stack_size)
		return;
	put(c, p->stack, p->stack_size);
	put64(c, p->stack_dyn);
}

static void put_opt(struct cur *c, uint64_t st, uint64_t bit, uint64_t v)
{
	if (st & bit)
		put64(c, v);
}

static void put_after_raw(struct cur *c, const struct perf_event_attr *a,
			  const struct synth_prof *p)
{
	uint64_t st = a->sample_type;

	if (st & PERF_SAMPLE_BRANCH_STACK) {
		put64(c, p->br_nr);
		if (a->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
			put64(c, p->hw_idx);
		put(c, p->br, p->br_nr * sizeof(*p->br));
	}
	if (st & PERF_SAMPLE_REGS_USER)
		put_regs(c, p->regs_user_abi, p->regs_user, a->sample_regs_user);
	if (st & PERF_SAMPLE_STACK_USER)
		put_stack(c, p);
	put_opt(c, st, PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT, p->weight);
	put_opt(c, st, PERF_SAMPLE_DATA_SRC, p->data_src);
	put_opt(c, st, PERF_SAMPLE_TRANSACTION, p->transaction);
	if (st & PERF_SAMPLE_REGS_INTR)
		put_regs(c, p->regs_intr_abi, p->regs_intr, a->sample_regs_intr);
	put_opt(c, st, PERF_SAMPLE_PHYS_ADDR, p->phys_addr);
	put_opt(c, st, PERF_SAMPLE_CGROUP, p->cgroup);
	put_opt(c, st, PERF_SAMPLE_DATA_PAGE_SIZE, p->data_page_size);
	put_opt(c, st, PERF_SAMPLE_CODE_PAGE_SIZE, p->code_page_size);
}

size_t synth_sample_prof(uint8_t *buf, size_t cap, const struct perf_event_attr *a,
			 const struct synth_fields *f, const struct synth_prof *p)
{
	struct cur c;

	begin(&c, buf, cap, PERF_RECORD_SAMPLE, f->misc);
	put_fixed(&c, a->sample_type, f);
	if (a->sample_type & PERF_SAMPLE_READ)
		put(&c, p->read, p->read_words * 8);
	put_tail(&c, a->sample_type, f);
	put_after_raw(&c, a, p);
	return finish(&c);
}

size_t synth_record(uint8_t *buf, size_t cap, uint32_t type, uint16_t misc, const void *body,
		    size_t body_len, uint64_t sample_type, const struct synth_fields *trailer)
{
	struct cur c;

	begin(&c, buf, cap, type, misc);
	if (body_len)
		put(&c, body, body_len);
	pad8(&c);
	put_trailer(&c, sample_type, trailer);
	return finish(&c);
}

size_t synth_lost(uint8_t *buf, size_t cap, uint64_t id, uint64_t lost, uint64_t sample_type,
		  const struct synth_fields *trailer)
{
	uint64_t body[2] = { id, lost };

	return synth_record(buf, cap, PERF_RECORD_LOST, 0, body, sizeof(body), sample_type,
			    trailer);
}

size_t synth_lost_samples(uint8_t *buf, size_t cap, uint64_t lost, uint64_t sample_type,
			  const struct synth_fields *trailer)
{
	return synth_record(buf, cap, PERF_RECORD_LOST_SAMPLES, 0, &lost, sizeof(lost),
			    sample_type, trailer);
}

/* A string as the kernel stores it: NUL-terminated, zero-padded to 8. */
static void put_str(struct cur *c, const char *s)
{
	put(c, s, strlen(s) + 1);
	pad8(c);
}

size_t synth_comm(uint8_t *buf, size_t cap, uint32_t pid, uint32_t tid, const char *comm,
		  bool exec, uint64_t sample_type, const struct synth_fields *trailer)
{
	struct cur c;

	begin(&c, buf, cap, PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0);
	put32(&c, pid);
	put32(&c, tid);
	put_str(&c, comm);
	put_trailer(&c, sample_type, trailer);
	return finish(&c);
}

static void put_build_id(struct cur *c, const struct synth_mmap2 *m)
{
	uint8_t b[24] = { 0 };
	size_t n = m->build_id_size > 20 ? 20 : m->build_id_size;

	b[0] = m->build_id_size;
	memcpy(b + 4, m->build_id, n);
	put(c, b, sizeof(b));
}

size_t synth_mmap2(uint8_t *buf, size_t cap, const struct synth_mmap2 *m, uint64_t sample_type,
		   const struct synth_fields *trailer)
{
	uint16_t misc = m->misc | (m->build_id ? PERF_RECORD_MISC_MMAP_BUILD_ID : 0);
	struct cur c;

	begin(&c, buf, cap, PERF_RECORD_MMAP2, misc);
	put32(&c, m->pid);
	put32(&c, m->tid);
	put64(&c, m->addr);
	put64(&c, m->len);
	put64(&c, m->pgoff);
	if (m->build_id) {
		put_build_id(&c, m);
	} else {
		put32(&c, m->maj);
		put32(&c, m->min);
		put64(&c, m->ino);
		put64(&c, m->ino_generation);
	}
	put32(&c, m->prot);
	put32(&c, m->flags);
	put_str(&c, m->filename ? m->filename : "");
	put_trailer(&c, sample_type, trailer);
	return finish(&c);
}

size_t synth_task(uint8_t *buf, size_t cap, uint32_t type, uint32_t pid, uint32_t ppid,
		  uint32_t tid, uint32_t ptid, uint64_t time, uint64_t sample_type,
		  const struct synth_fields *trailer)
{
	struct cur c;

	begin(&c, buf, cap, type, 0);
	put32(&c, pid);
	put32(&c, ppid);
	put32(&c, tid);
	put32(&c, ptid);
	put64(&c, time);
	put_trailer(&c, sample_type, trailer);
	return finish(&c);
}

size_t synth_throttle(uint8_t *buf, size_t cap, uint32_t type, uint64_t time, uint64_t id,
		      uint64_t stream_id, uint64_t sample_type, const struct synth_fields *trailer)
{
	uint64_t body[3] = { time, id, stream_id };

	return synth_record(buf, cap, type, 0, body, sizeof(body), sample_type, trailer);
}

size_t synth_switch(uint8_t *buf, size_t cap, uint16_t misc, uint64_t sample_type,
		    const struct synth_fields *trailer)
{
	return synth_record(buf, cap, PERF_RECORD_SWITCH, misc, NULL, 0, sample_type, trailer);
}

size_t synth_switch_cpu_wide(uint8_t *buf, size_t cap, uint16_t misc, uint32_t next_prev_pid,
			     uint32_t next_prev_tid, uint64_t sample_type,
			     const struct synth_fields *trailer)
{
	uint32_t body[2] = { next_prev_pid, next_prev_tid };

	return synth_record(buf, cap, PERF_RECORD_SWITCH_CPU_WIDE, misc, body, sizeof(body),
			    sample_type, trailer);
}
