/* SPDX-License-Identifier: MIT */
/* Decoding record bytes into samples and kernel records; the per-event layouts.
 * The one sample walker: the profiler's larger parts are profile.c's leaves. */
#include "decode/record.h"

#include <errno.h>
#include <string.h>

static const struct { uint64_t bit; const char *name; } sample_bits[] = {
	{ PERF_SAMPLE_IP, "PERF_SAMPLE_IP" },
	{ PERF_SAMPLE_TID, "PERF_SAMPLE_TID" },
	{ PERF_SAMPLE_TIME, "PERF_SAMPLE_TIME" },
	{ PERF_SAMPLE_ADDR, "PERF_SAMPLE_ADDR" },
	{ PERF_SAMPLE_READ, "PERF_SAMPLE_READ" },
	{ PERF_SAMPLE_CALLCHAIN, "PERF_SAMPLE_CALLCHAIN" },
	{ PERF_SAMPLE_ID, "PERF_SAMPLE_ID" },
	{ PERF_SAMPLE_CPU, "PERF_SAMPLE_CPU" },
	{ PERF_SAMPLE_PERIOD, "PERF_SAMPLE_PERIOD" },
	{ PERF_SAMPLE_STREAM_ID, "PERF_SAMPLE_STREAM_ID" },
	{ PERF_SAMPLE_RAW, "PERF_SAMPLE_RAW" },
	{ PERF_SAMPLE_BRANCH_STACK, "PERF_SAMPLE_BRANCH_STACK" },
	{ PERF_SAMPLE_REGS_USER, "PERF_SAMPLE_REGS_USER" },
	{ PERF_SAMPLE_STACK_USER, "PERF_SAMPLE_STACK_USER" },
	{ PERF_SAMPLE_WEIGHT, "PERF_SAMPLE_WEIGHT" },
	{ PERF_SAMPLE_DATA_SRC, "PERF_SAMPLE_DATA_SRC" },
	{ PERF_SAMPLE_IDENTIFIER, "PERF_SAMPLE_IDENTIFIER" },
	{ PERF_SAMPLE_TRANSACTION, "PERF_SAMPLE_TRANSACTION" },
	{ PERF_SAMPLE_REGS_INTR, "PERF_SAMPLE_REGS_INTR" },
	{ PERF_SAMPLE_PHYS_ADDR, "PERF_SAMPLE_PHYS_ADDR" },
	{ PERF_SAMPLE_AUX, "PERF_SAMPLE_AUX" },
	{ PERF_SAMPLE_CGROUP, "PERF_SAMPLE_CGROUP" },
	{ PERF_SAMPLE_DATA_PAGE_SIZE, "PERF_SAMPLE_DATA_PAGE_SIZE" },
	{ PERF_SAMPLE_CODE_PAGE_SIZE, "PERF_SAMPLE_CODE_PAGE_SIZE" },
	{ PERF_SAMPLE_WEIGHT_STRUCT, "PERF_SAMPLE_WEIGHT_STRUCT" },
};

const char *pr_sample_unsupported(uint64_t sample_type)
{
	uint64_t bad = sample_type & ~(uint64_t)(PR_SAMPLE_SUPPORTED | PR_SAMPLE_PROFILE);
	size_t i;

	if (!bad)
		return NULL;
	for (i = 0; i < sizeof(sample_bits) / sizeof(sample_bits[0]); i++)
		if (bad & sample_bits[i].bit)
			return sample_bits[i].name;
	return "an unknown PERF_SAMPLE_* bit";
}

static inline bool take_u32x2(struct pr_cur *c, uint32_t *a, uint32_t *b)
{
	uint32_t v[2];

	if (!pr_cur_take(c, v, sizeof(v)))
		return false;
	*a = v[0];
	*b = v[1];
	return true;
}

bool pr_record_identifier(const struct perf_event_header *h, uint64_t *id)
{
	const uint8_t *b = (const uint8_t *)h;

	if (h->size < sizeof(*h) + sizeof(*id))
		return false;
	if (h->type == PERF_RECORD_SAMPLE)
		memcpy(id, b + sizeof(*h), sizeof(*id));
	else
		memcpy(id, b + h->size - sizeof(*id), sizeof(*id));
	return true;
}

static inline __attribute__((always_inline)) bool take_callchain(struct pr_cur *c,
							    struct perfring_sample *out)
{
	uint64_t nr;

	if (!pr_cur_u64(c, &nr) || nr > (uint64_t)(c->end - c->p) / sizeof(uint64_t))
		return false;
	out->callchain = (const uint64_t *)c->p;
	out->callchain_nr = (uint32_t)nr;
	c->p += nr * sizeof(uint64_t);
	return true;
}

static inline __attribute__((always_inline)) bool take_raw(struct pr_cur *c,
						       struct perfring_sample *out)
{
	uint32_t size;

	if (!pr_cur_take(c, &size, sizeof(size)) || size > (size_t)(c->end - c->p))
		return false;
	out->raw = c->p;
	out->raw_size = size;
	c->p += size;
	return true;
}

/* CALLCHAIN and RAW, which follow the fixed fields (and READ): the position
 * after them, NULL if they overrun. */
static inline __attribute__((always_inline)) const uint8_t *
tail_at(const uint8_t *p, const uint8_t *end, uint64_t st, struct perfring_sample *out)
{
	struct pr_cur c = { p, end };

	if ((st & PERF_SAMPLE_CALLCHAIN) && !take_callchain(&c, out))
		return NULL;
	if ((st & PERF_SAMPLE_RAW) && !take_raw(&c, out))
		return NULL;
	return c.p;
}

/* Everything after the fixed fields of a sample with the profiler's parts,
 * which profile.c reads: READ, CALLCHAIN, RAW, then the rest in order. Out
 * of line, so that the common path in pr_decode_sample_rest stays a leaf. */
static __attribute__((noinline)) int decode_profile(const uint8_t *p, const uint8_t *end,
						    const struct pr_layout *l,
						    struct perfring_sample *out)
{
	pr_profile_zero(out);
	if (l->sample_type & PERF_SAMPLE_READ) {
		p = pr_profile_read((struct pr_cur){ p, end }, l->read_format, out);
		if (!p)
			return -EBADMSG;
	}
	p = tail_at(p, end, l->sample_type, out);
	if (!p)
		return -EBADMSG;
	return pr_profile_after_raw((struct pr_cur){ p, end }, l, out);
}

int pr_decode_sample_rest(const uint8_t *p, const uint8_t *end, const struct pr_layout *l,
			  struct perfring_sample *out)
{
	if (__builtin_expect(l->sample_type & PR_SAMPLE_PROFILE, 0))
		return decode_profile(p, end, l, out);
	return tail_at(p, end, l->sample_type, out) ? 0 : -EBADMSG;
}

/* Field order is the kernel's perf_output_sample() order. */
void pr_layout_init(struct pr_layout *l, uint64_t st)
{
	int16_t off = 0;

	memset(l, 0, sizeof(*l));
	l->sample_type = st;
	l->shape = l->sb_shape = (uint8_t)pr_shape_of(st);
	l->id = l->ip = l->tid = l->time = l->addr = l->stream_id = l->cpu = l->period = -1;
#define PLACE(bit, field)                 \
	do {                              \
		if (st & (bit)) {         \
			l->field = off;   \
			off += 8;         \
		}                         \
	} while (0)
	PLACE(PERF_SAMPLE_IDENTIFIER, id);
	PLACE(PERF_SAMPLE_IP, ip);
	PLACE(PERF_SAMPLE_TID, tid);
	PLACE(PERF_SAMPLE_TIME, time);
	PLACE(PERF_SAMPLE_ADDR, addr);
	PLACE(PERF_SAMPLE_ID, id);
	PLACE(PERF_SAMPLE_STREAM_ID, stream_id);
	PLACE(PERF_SAMPLE_CPU, cpu);
	PLACE(PERF_SAMPLE_PERIOD, period);
#undef PLACE
	l->fixed = (uint16_t)off;
}

int pr_decode_sample(const struct perf_event_header *h, uint64_t st, struct perfring_sample *out)
{
	struct pr_layout l;

	pr_layout_init(&l, st);
	return pr_decode_sample_fast(h, &l, out);
}

int pr_decode_sample_attr(const struct perf_event_header *h, const struct perf_event_attr *attr,
			  struct perfring_sample *out)
{
	struct pr_layout l;

	pr_layout_init(&l, attr->sample_type);
	pr_layout_profile(&l, attr);
	return pr_decode_sample_fast(h, &l, out);
}

static size_t trailer_size(uint64_t st)
{
	return 8u * (!!(st & PERF_SAMPLE_TID) + !!(st & PERF_SAMPLE_TIME) +
		     !!(st & PERF_SAMPLE_ID) + !!(st & PERF_SAMPLE_STREAM_ID) +
		     !!(st & PERF_SAMPLE_CPU) + !!(st & PERF_SAMPLE_IDENTIFIER));
}

/* The sample_id_all trailer, in the kernel's __perf_event_header__init_id order. */
static bool decode_trailer(struct pr_cur *c, uint64_t st, struct perfring_record *out)
{
	uint64_t skip;
	uint32_t cpu, res;
	bool ok = true;

	if (st & PERF_SAMPLE_TID)
		ok = take_u32x2(c, &out->pid, &out->tid);
	if (ok && (st & PERF_SAMPLE_TIME))
		ok = pr_cur_u64(c, &out->time);
	if (ok && (st & PERF_SAMPLE_ID))
		ok = pr_cur_u64(c, &out->id);
	if (ok && (st & PERF_SAMPLE_STREAM_ID))
		ok = pr_cur_u64(c, &skip);
	if (ok && (st & PERF_SAMPLE_CPU))
		ok = take_u32x2(c, &cpu, &res);
	if (ok && (st & PERF_SAMPLE_IDENTIFIER))
		ok = pr_cur_u64(c, &out->id);
	return ok;
}

/* A NUL-terminated string that must end inside the body. */
static bool take_str(struct pr_cur *c, const char **s)
{
	const uint8_t *nul = memchr(c->p, 0, (size_t)(c->end - c->p));

	if (!nul)
		return false;
	*s = (const char *)c->p;
	c->p = c->end;
	return true;
}

static bool body_comm(struct pr_cur *c, struct perfring_record *r)
{
	r->u.comm.exec = r->misc & PERF_RECORD_MISC_COMM_EXEC;
	return take_u32x2(c, &r->u.comm.pid, &r->u.comm.tid) && take_str(c, &r->u.comm.comm);
}

static bool body_task(struct pr_cur *c, struct perfring_record *r)
{
	return take_u32x2(c, &r->u.task.pid, &r->u.task.ppid) &&
	       take_u32x2(c, &r->u.task.tid, &r->u.task.ptid) && pr_cur_u64(c, &r->u.task.time);
}

static bool body_mmap_common(struct pr_cur *c, struct perfring_record *r)
{
	return take_u32x2(c, &r->u.mmap.pid, &r->u.mmap.tid) && pr_cur_u64(c, &r->u.mmap.addr) &&
	       pr_cur_u64(c, &r->u.mmap.len) && pr_cur_u64(c, &r->u.mmap.pgoff);
}

static bool body_mmap2(struct pr_cur *c, struct perfring_record *r)
{
	uint8_t bid[24];

	if (!body_mmap_common(c, r))
		return false;
	if (r->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		if ((size_t)(c->end - c->p) < sizeof(bid))
			return false;
		r->u.mmap.build_id = c->p + 4;
		if (!pr_cur_take(c, bid, sizeof(bid)) || bid[0] > 20)
			return false;
		r->u.mmap.build_id_size = bid[0];
	} else if (!take_u32x2(c, &r->u.mmap.maj, &r->u.mmap.min) ||
		   !pr_cur_u64(c, &r->u.mmap.ino) || !pr_cur_u64(c, &r->u.mmap.ino_generation)) {
		return false;
	}
	return take_u32x2(c, &r->u.mmap.prot, &r->u.mmap.flags) && take_str(c, &r->u.mmap.filename);
}

static bool body_switch(struct pr_cur *c, struct perfring_record *r)
{
	r->u.context_switch.out = r->misc & PERF_RECORD_MISC_SWITCH_OUT;
	r->u.context_switch.preempt = r->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT;
	if (r->type == PERF_RECORD_SWITCH_CPU_WIDE)
		return take_u32x2(c, &r->u.context_switch.next_prev_pid,
				  &r->u.context_switch.next_prev_tid);
	return true;
}

static bool body_ksymbol(struct pr_cur *c, struct perfring_record *r)
{
	uint16_t tf[2];

	if (!pr_cur_u64(c, &r->u.ksymbol.addr) || !pr_cur_take(c, &r->u.ksymbol.len, 4) ||
	    !pr_cur_take(c, tf, sizeof(tf)))
		return false;
	r->u.ksymbol.ksym_type = tf[0];
	r->u.ksymbol.flags = tf[1];
	return take_str(c, &r->u.ksymbol.name);
}

static bool body_bpf_event(struct pr_cur *c, struct perfring_record *r)
{
	uint16_t tf[2];

	if (!pr_cur_take(c, tf, sizeof(tf)) || !pr_cur_take(c, &r->u.bpf_event.id, 4) ||
	    (size_t)(c->end - c->p) < 8)
		return false;
	r->u.bpf_event.type = tf[0];
	r->u.bpf_event.flags = tf[1];
	r->u.bpf_event.tag = c->p;
	c->p += 8;
	return true;
}

static bool body_namespaces(struct pr_cur *c, struct perfring_record *r)
{
	uint64_t nr;

	if (!take_u32x2(c, &r->u.namespaces.pid, &r->u.namespaces.tid) || !pr_cur_u64(c, &nr) ||
	    nr > (size_t)(c->end - c->p) / sizeof(struct perf_ns_link_info))
		return false;
	r->u.namespaces.nr = nr;
	r->u.namespaces.links = (const struct perf_ns_link_info *)c->p;
	c->p += nr * sizeof(struct perf_ns_link_info);
	return true;
}

static bool body_text_poke(struct pr_cur *c, struct perfring_record *r)
{
	uint16_t len[2];

	if (!pr_cur_u64(c, &r->u.text_poke.addr) || !pr_cur_take(c, len, sizeof(len)) ||
	    (size_t)len[0] + len[1] > (size_t)(c->end - c->p))
		return false;
	r->u.text_poke.old_len = len[0];
	r->u.text_poke.new_len = len[1];
	r->u.text_poke.old_bytes = c->p;
	r->u.text_poke.new_bytes = c->p + len[0];
	c->p += len[0] + len[1];
	return true;
}

static bool body_aux(struct pr_cur *c, struct perfring_record *r)
{
	return pr_cur_u64(c, &r->u.aux.aux_offset) && pr_cur_u64(c, &r->u.aux.aux_size) &&
	       pr_cur_u64(c, &r->u.aux.flags);
}

/* The records the profiler asks for, and AUX and ITRACE_START. */
static bool decode_profile_body(struct pr_cur *c, struct perfring_record *r)
{
	switch (r->type) {
	case PERF_RECORD_KSYMBOL:
		return body_ksymbol(c, r);
	case PERF_RECORD_BPF_EVENT:
		return body_bpf_event(c, r);
	case PERF_RECORD_CGROUP:
		return pr_cur_u64(c, &r->u.cgroup.id) && take_str(c, &r->u.cgroup.path);
	case PERF_RECORD_NAMESPACES:
		return body_namespaces(c, r);
	case PERF_RECORD_TEXT_POKE:
		return body_text_poke(c, r);
	case PERF_RECORD_ITRACE_START:
		return take_u32x2(c, &r->u.itrace_start.pid, &r->u.itrace_start.tid);
	default:
		return body_aux(c, r);
	}
}

static bool decode_body(struct pr_cur *c, struct perfring_record *r)
{
	switch (r->type) {
	case PERF_RECORD_COMM:
		return body_comm(c, r);
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		return body_task(c, r);
	case PERF_RECORD_MMAP:
		return body_mmap_common(c, r) && take_str(c, &r->u.mmap.filename);
	case PERF_RECORD_MMAP2:
		return body_mmap2(c, r);
	case PERF_RECORD_LOST:
		return pr_cur_u64(c, &r->u.lost.id) && pr_cur_u64(c, &r->u.lost.lost);
	case PERF_RECORD_LOST_SAMPLES:
		return pr_cur_u64(c, &r->u.lost_samples.lost);
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		return pr_cur_u64(c, &r->u.throttle.time) && pr_cur_u64(c, &r->u.throttle.id) &&
		       pr_cur_u64(c, &r->u.throttle.stream_id);
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		return body_switch(c, r);
	default:
		return decode_profile_body(c, r);
	}
}

static bool decodable(uint32_t type)
{
	switch (type) {
	case PERF_RECORD_COMM: case PERF_RECORD_FORK: case PERF_RECORD_EXIT:
	case PERF_RECORD_MMAP: case PERF_RECORD_MMAP2: case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES: case PERF_RECORD_THROTTLE: case PERF_RECORD_UNTHROTTLE:
	case PERF_RECORD_SWITCH: case PERF_RECORD_SWITCH_CPU_WIDE:
	case PERF_RECORD_KSYMBOL: case PERF_RECORD_BPF_EVENT: case PERF_RECORD_CGROUP:
	case PERF_RECORD_NAMESPACES: case PERF_RECORD_TEXT_POKE: case PERF_RECORD_ITRACE_START:
	case PERF_RECORD_AUX:
		return true;
	default:
		return false;
	}
}

int pr_decode_record(const struct perf_event_header *h, uint64_t st, struct perfring_record *out)
{
	const uint8_t *b = (const uint8_t *)h;
	size_t tsz = trailer_size(st);
	struct pr_cur body, trailer;

	memset(&out->u, 0, sizeof(out->u));
	out->type = h->type;
	out->misc = h->misc;
	out->pid = out->tid = 0;
	out->time = out->id = 0;
	out->record = h;
	out->synthetic = false;
	if (!decodable(h->type))
		return -ENOMSG;
	if (h->size < sizeof(*h) + tsz)
		return -EBADMSG;
	body = (struct pr_cur){ b + sizeof(*h), b + h->size - tsz };
	trailer = (struct pr_cur){ body.end, b + h->size };
	if (!decode_trailer(&trailer, st, out) || !decode_body(&body, out))
		return -EBADMSG;
	return 0;
}

uint64_t pr_record_time(const struct perf_event_header *h, uint64_t st)
{
	const uint8_t *b = (const uint8_t *)h;
	size_t off;
	uint64_t t;

	if (!(st & PERF_SAMPLE_TIME))
		return 0;
	if (h->type == PERF_RECORD_SAMPLE)
		off = sizeof(*h) + 8u * (!!(st & PERF_SAMPLE_IDENTIFIER) + !!(st & PERF_SAMPLE_IP) +
					 !!(st & PERF_SAMPLE_TID));
	else if (h->size >= sizeof(*h) + trailer_size(st))
		off = h->size - trailer_size(st) + 8u * !!(st & PERF_SAMPLE_TID);
	else
		return 0;
	if (off + sizeof(t) > h->size)
		return 0;
	memcpy(&t, b + off, sizeof(t));
	return t;
}
