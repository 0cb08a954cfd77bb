/* SPDX-License-Identifier: MIT */
/* The ring buffer session tests' fixture (test_ringbuf_fx.h). */
#include "test_ringbuf_fx.h"
#include "kutil.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void bad(struct rbcheck *c, const char *fmt, unsigned long long a, unsigned long long b)
{
	if (!c->bad++)
		snprintf(c->first_bad, sizeof(c->first_bad), fmt, a, b);
}

static bool padding_zero(const uint8_t *p, uint32_t from, uint32_t to)
{
	for (; from < to; from++)
		if (p[from])
			return false;
	return true;
}

int rbcheck_cb(const struct perfring_sample *s, void *ctx)
{
	struct rbcheck *c = ctx;
	struct kbpf_rec r;

	c->n++;
	if (s->raw_size != c->size || !s->raw)
		return bad(c, "raw_size %llu, want %llu", s->raw_size, c->size), 0;
	memcpy(&r, s->raw, sizeof(r));
	if (r.magic != KBPF_MAGIC || r.tgid != c->tgid || (c->tid && r.tid != c->tid))
		bad(c, "record of tgid %llu tid %llu: not the program's for this thread",
		    r.tgid, r.tid);
	else if (!padding_zero(s->raw, sizeof(r), s->raw_size))
		bad(c, "padding not zero in a record of %llu bytes (#%llu)", s->raw_size, c->n);
	else if (s->cpu != -1 || s->pid || s->tid)
		bad(c, "cpu %llu, pid %llu: a ring buffer's sample has cpu -1, pid/tid 0",
		    (unsigned long long)(long long)s->cpu, s->pid);
	else if (s->time != (c->timed ? r.ns : 0))
		bad(c, "time %llu, record's ns %llu", s->time, r.ns);
	else if (r.ns < c->t0 || (c->t1 && r.ns > c->t1))
		bad(c, "ns %llu outside the calls (from %llu)", r.ns, c->t0);
	else if (r.ns < c->last_ns)
		bad(c, "ns %llu before the previous record's %llu", r.ns, c->last_ns);
	else if (c->ev && s->event != c->ev)
		bad(c, "sample of another event (#%llu)%llu", c->n, 0);
	c->last_ns = r.ns;
	return 0;
}

void rbfx_open(struct rbfx *f, enum kbpf_rb_mode mode, uint32_t ring, uint32_t rec,
	       const struct perfring_opts *o, const struct perfring_ringbuf_opts *ro, bool start)
{
	char why[1024] = "";
	int err;

	*f = (struct rbfx){ .c = { .size = rec, .tgid = (uint32_t)getpid(),
				   .tid = (uint32_t)syscall(SYS_gettid),
				   .timed = ro && (ro->flags & PERFRING_RINGBUF_TIME) } };
	err = kbpf_rb_open(&f->b, getpid(), ring, mode, rec, why, sizeof(why));
	if (err == -EPERM || err == -EACCES || err == -ENOSYS)
		cr_skip_test("BPF unavailable: %s", why);
	cr_assert_eq(err, 0, "%s", why);
	f->ids[0] = kbpf_id(f->b.map);
	f->ids[1] = kbpf_id(f->b.prog);
	f->ids[2] = kbpf_id(f->b.res_map);
	KCHECK(perfring_session_new(o, &f->s), NULL);
	KCHECK(perfring_session_add_bpf_ringbuf(f->s, f->b.map, ro, &f->ev), f->s);
	f->c.ev = f->ev;
	KCHECK(perfring_event_set_callback(f->ev, rbcheck_cb, &f->c), f->s);
	if (start)
		KCHECK(perfring_session_start(f->s), f->s);
}

void rbfx_calls(struct rbfx *f, long n)
{
	f->c.t0 = kutil_now_ns();
	kutil_getpid_n(n);
	f->c.t1 = kutil_now_ns();
}

void rbfx_expect(const struct rbfx *f, uint64_t want)
{
	struct perfring_ringbuf_stats st;

	cr_expect_eq(f->c.n, want, "%llu records, want %llu", (unsigned long long)f->c.n,
		     (unsigned long long)want);
	cr_expect_eq(f->c.bad, 0, "%llu bad records; first: %s", (unsigned long long)f->c.bad,
		     f->c.first_bad);
	cr_assert_eq(perfring_ringbuf_stats(f->ev, &st), 0);
	cr_expect_eq(st.records, want, "stats.records %llu", (unsigned long long)st.records);
	cr_expect_eq(st.bytes, want * f->c.size, "stats.bytes %llu", (unsigned long long)st.bytes);
	cr_expect_eq(kbpf_rb_failed(&f->b), 0, "the program failed %lld reserves/outputs: the "
		     "ring was too small for the test", (long long)kbpf_rb_failed(&f->b));
}

void rbfx_close(struct rbfx *f)
{
	uint32_t ids[3];

	memcpy(ids, f->ids, sizeof(ids));
	perfring_session_free(f->s);
	f->s = NULL;
	kbpf_rb_close(&f->b);
	cr_expect_eq(kbpf_wait_gone(ids, 3), 0, "the program's BPF objects outlived the test "
		     "(the session kept a reference?)");
}

int rbfx_fd_count(void)
{
	return kutil_fd_count();
}
