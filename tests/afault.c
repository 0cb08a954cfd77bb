/* SPDX-License-Identifier: MIT */
/* The adapters' fault-injection driver; see afault.h. */
#include "afault.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const struct afault_mode afault_enomem[1] = { { ENOMEM, -ENOMEM } };
const struct perfring_loop_opts afault_lopts = { .sz = sizeof(afault_lopts) };

/* ------------------------------------------------------------- the gate */

static struct {
	const struct afault_ops *ops;
	bool armed, fired;
	int kind;       /* ops->nkinds: count only */
	long nth;       /* 1-based */
	const struct afault_mode *mode;
	long seen[AFAULT_MAX_KINDS];
} G;

bool afault_fail(int kind)
{
	if (!G.armed || ++G.seen[kind] != G.nth || kind != G.kind || G.fired)
		return false;
	G.fired = true;
	errno = G.mode->err;
	return true;
}

void *__real_malloc(size_t n);
void *__wrap_malloc(size_t n);
void *__real_calloc(size_t n, size_t sz);
void *__wrap_calloc(size_t n, size_t sz);
void *__real_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n);

static bool alloc_fails(enum afault_alloc which)
{
	return G.armed && afault_fail(G.ops->alloc + which);
}

void *__wrap_malloc(size_t n)
{
	if (alloc_fails(AFAULT_MALLOC))
		return NULL;
	return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t sz)
{
	if (alloc_fails(AFAULT_CALLOC))
		return NULL;
	return __real_calloc(n, sz);
}

void *__wrap_realloc(void *p, size_t n)
{
	if (alloc_fails(AFAULT_REALLOC))
		return NULL;
	return __real_realloc(p, n);
}

/* ---------------------------------------------------------- the fixture */

struct ctx {
	const struct afault_ops *ops;
	struct perfring_session *s;
	struct kcount k;
	long cases, bad;
};

static const char *leak_check(void)
{
	return kutil_leak_check_on() ? "LeakSanitizer" : "off (no sanitizers)";
}

static void start(struct ctx *c, const struct afault_ops *ops)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 8, .wakeup_watermark = 256,
				   .flush_ms = 10 };

	memset(c, 0, sizeof(*c));
	c->ops = ops;
	cr_assert_leq(ops->nkinds, AFAULT_MAX_KINDS);
	KCHECK(kutil_getpid_session(&o, getpid(), &c->k, &c->s, NULL), c->s);
	KCHECK(perfring_session_start(c->s), c->s);
}

static struct afault_fx *fx_new(struct ctx *c)
{
	struct afault_fx *f = calloc(1, c->ops->fx_size);

	cr_assert_not_null(f);
	f->s = c->s;
	f->k = &c->k;
	c->ops->init(f);
	return f;
}

static bool fx_free(struct ctx *c, struct afault_fx *f, const char *what)
{
	bool ok = c->ops->fini(f, what);

	free(f);
	return ok;
}

/* Empties the rings, so an attach parses nothing and every run of it makes
 * the same calls. */
static void drain(struct afault_fx *f)
{
	cr_assert_geq(perfring_session_parse_all(f->s), 0);
	memset(f->k, 0, sizeof(*f->k));
}

static int attach_armed(struct ctx *c, struct afault_fx *f, int kind, long nth,
			const struct afault_mode *m)
{
	int rc;

	memset(&G, 0, sizeof(G));
	G.ops = c->ops;
	G.kind = kind;
	G.nth = nth;
	G.mode = m;
	G.armed = true;
	rc = c->ops->attach(f);
	G.armed = false;
	return rc;
}

bool afault_tick(struct afault_fx *f)
{
	f->timed_out = ++f->ticks > AFAULT_TIMEOUT_TICKS;
	return f->k->n >= AFAULT_SAMPLES || f->timed_out;
}

/* ------------------------------------------------------------ the cases */

static bool fds_same(const char *what, const struct kfdset *before)
{
	char why[192];
	bool same = kutil_fd_changed(before, why, sizeof(why)) < 0;

	cr_expect(same, "%s: %s", what, why);
	return same;
}

/* Attaches without faults and checks AFAULT_SAMPLES getpid samples arrive. */
static bool delivers(struct ctx *c, struct afault_fx *f, const char *what)
{
	bool ran;
	int rc;

	drain(f);
	rc = c->ops->attach(f);
	cr_expect_eq(rc, 0, "%s: attach failed again: %d (%s)", what, rc,
		     perfring_session_last_error(f->s));
	if (rc)
		return false;
	kutil_getpid_n(AFAULT_SAMPLES);
	ran = c->ops->deliver(f, what);
	cr_expect(!f->timed_out, "%s: timed out", what);
	cr_expect_eq(f->k->n, AFAULT_SAMPLES, "%s: %llu of %d getpid samples", what,
		     (unsigned long long)f->k->n, AFAULT_SAMPLES);
	return ran && !f->timed_out && f->k->n == AFAULT_SAMPLES;
}

static bool check_failure(struct afault_fx *f, int rc, int want, const char *what)
{
	cr_expect_eq(rc, want, "%s: attach returned %d (%s), want %d", what, rc,
		     perfring_strerror(rc), want);
	cr_expect_null(f->a.p, "%s: a failed attach must leave *out NULL", what);
	return rc == want && !f->a.p;
}

static void one_case(struct ctx *c, int kind, long nth, const struct afault_mode *m)
{
	struct kfdset outside, before; /* without and with the loop's own fds */
	struct afault_fx *f;
	char what[96];
	bool ok, leak;
	int rc;

	snprintf(what, sizeof(what), "%s #%ld failing with errno %d", c->ops->kinds[kind].name,
		 nth, m->err);
	cr_assert_eq(kutil_fd_snapshot(&outside), 0);
	f = fx_new(c);
	drain(f);
	cr_assert_eq(kutil_fd_snapshot(&before), 0);
	rc = attach_armed(c, f, kind, nth, m);
	cr_assert(G.fired, "%s: the call was never reached", what);
	ok = check_failure(f, rc, m->want, what);
	ok = c->ops->settle(f, what) && ok;
	ok = fds_same(what, &before) && ok;
	leak = kutil_leak_found();
	cr_expect(!leak, "%s: LeakSanitizer found a leak (its report is above)", what);
	ok = ok && !leak && delivers(c, f, what);
	ok = fx_free(c, f, what) && ok;
	ok = fds_same(what, &outside) && ok;
	c->cases++;
	c->bad += !ok;
}

static void count_calls(struct ctx *c, long seen[AFAULT_MAX_KINDS])
{
	struct afault_fx *f = fx_new(c);
	int rc;

	drain(f);
	rc = attach_armed(c, f, c->ops->nkinds, 0, NULL);
	cr_assert_eq(rc, 0, "fault-free attach: %d (%s)", rc, perfring_session_last_error(c->s));
	memcpy(seen, G.seen, sizeof(G.seen));
	c->ops->detach(f);
	f->a.p = NULL;
	cr_assert(c->ops->settle(f, "fault-free attach"));
	cr_assert(delivers(c, f, "fault-free attach"));
	cr_assert(fx_free(c, f, "fault-free attach"));
}

void afault_calls(const struct afault_ops *ops, long seen[AFAULT_MAX_KINDS])
{
	struct ctx c;
	int i;

	start(&c, ops);
	count_calls(&c, seen);
	perfring_session_free(c.s);
	for (i = 0; i < ops->nkinds; i++)
		fprintf(stderr, "# calls reached by %s attach: %s %ld\n", ops->loop,
			ops->kinds[i].name, seen[i]);
}

void afault_run(const struct afault_ops *ops, int kind)
{
	const struct afault_kind *kd = &ops->kinds[kind];
	long seen[AFAULT_MAX_KINDS], n;
	struct ctx c;
	int i;

	start(&c, ops);
	count_calls(&c, seen);
	cr_assert(kd->optional || seen[kind] > 0, "attach makes no %s call", kd->name);
	for (n = 1; n <= seen[kind]; n++)
		for (i = 0; i < kd->nmodes; i++)
			one_case(&c, kind, n, &kd->modes[i]);
	perfring_session_free(c.s);
	fprintf(stderr, "# fault injection %s attach %s: %ld calls reached, %ld cases, "
		"%ld bad; leak check: %s\n", ops->loop, kd->name, seen[kind], c.cases, c.bad,
		leak_check());
	cr_assert_eq(c.cases, seen[kind] * kd->nmodes);
	cr_assert_eq(c.bad, 0, "%ld of %ld %s cases misbehaved (listed above)", c.bad, c.cases,
		     kd->name);
	cr_assert(!kutil_leak_found(), "LeakSanitizer found a leak after perfring_session_free");
}

/* Every allocator call inside attach, the adapter's and the core's. */
void afault_run_allocators(const struct afault_ops *ops)
{
	int i;

	for (i = 0; i < AFAULT_NALLOC; i++)
		afault_run(ops, ops->alloc + i);
}
