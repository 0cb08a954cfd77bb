/* SPDX-License-Identifier: MIT */
/*
 * Hostile options and calls: NULL pointers, bad opts sizes, bad CPU lists,
 * ring sizes and wakeup settings, bad tracepoints, filters and tracefs, and
 * lifecycle misuse. Every failing call must return the documented negative
 * errno and leave a fresh sentence saying what was wrong: in the session's
 * buffer when there is a session, else in this thread's (last_error(NULL)).
 * Each test lists every bad case (cr_expect) and logs how many it tried.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fakeloop.h"
#include "kutil.h"
#include "base/sys.h"

#define SENTINEL_S "0x80000000"  /* from arm() */
#define SENTINEL_T "3600001"     /* from arm() */
#define RING_PAGES 8u

static long tried;

/* --------------------------------------------------------------- helpers */

/* Leaves a known sentence in s (or the thread's buffer), so a check can tell
 * that the call under test wrote a new one. */
static void arm(struct perfring_session *s)
{
	struct perfring_opts bad = { .sz = sizeof(bad), .poll_interval_ms = 3600001 };
	struct perfring_session *none = NULL;

	perfring_session_new(&bad, &none);
	if (s)
		perfring_session_set_record_callback(s, 1u << 31, NULL, NULL);
}

static const char *sentinel_of(const struct perfring_session *s)
{
	return s ? SENTINEL_S : SENTINEL_T;
}

/* Checks rc == want and that the sentence of s (NULL: the thread's) is new,
 * non-empty, and contains needle (when not NULL). */
static void expect_err(const char *what, int rc, int want, const struct perfring_session *s,
		       const char *needle)
{
	const char *why = perfring_session_last_error(s);

	tried++;
	cr_expect_eq(rc, want, "%s: returned %d (%s), want %d (%s); sentence \"%s\"", what, rc,
		     perfring_strerror(rc), want, perfring_strerror(want), why);
	cr_expect(why[0], "%s: empty sentence", what);
	cr_expect(!strstr(why, sentinel_of(s)), "%s: no new sentence (still \"%s\")", what, why);
	if (needle)
		cr_expect(strstr(why, needle), "%s: sentence \"%s\" does not mention \"%s\"", what,
			  why, needle);
}

static void log_tried(const char *test, long before)
{
	fprintf(stderr, "# hostile %s: %ld bad inputs tried\n", test, tried - before);
}

static struct perfring_session *new_session(const int *cpus, size_t n)
{
	struct perfring_opts o = { .sz = sizeof(o), .cpus = cpus, .cpu_cnt = n,
				   .ring_pages = RING_PAGES };
	struct perfring_session *s = NULL;

	KCHECK(perfring_session_new(&o, &s), NULL);
	return s;
}

static struct perfring_event *add_getpid(struct perfring_session *s)
{
	struct perfring_event *ev = NULL;

	KCHECK(perfring_session_add_tracepoint(s, "syscalls", "sys_enter_getpid", &ev), s);
	return ev;
}

static const int cpu0[] = { 0 };

/* ---------------------------------------------------------- NULL pointers */

/* A fixture every NULL case can use: a new session with a getpid event, a
 * started one, a field and a sample. */
struct fx {
	struct perfring_session *s, *run;
	struct perfring_event *ev;
	struct perfring_field f;
	struct perfring_sample smp;
	uint8_t raw[64];
	struct perfring_reactor *r;
	struct fakeloop l;
};

static bool never(void *ctx)
{
	(void)ctx;
	return true;
}

enum where { W_THREAD, W_SESSION, W_RUN };

struct null_case {
	const char *what;
	int (*call)(struct fx *x);
	enum where where;   /* whose sentence tells */
};

#define NC(name, where, expr)                                                          \
	static int nc_##name(struct fx *x)                                              \
	{                                                                              \
		(void)x;                                                               \
		return (expr);                                                         \
	}
NC(new_out, W_THREAD, perfring_session_new(NULL, NULL))
NC(tp_s, W_THREAD, perfring_session_add_tracepoint(NULL, "syscalls", "sys_enter_getpid", NULL))
NC(tp_sys, W_SESSION, perfring_session_add_tracepoint(x->s, NULL, "sys_enter_getpid", NULL))
NC(tp_name, W_SESSION, perfring_session_add_tracepoint(x->s, "syscalls", NULL, NULL))
NC(sw_s, W_THREAD, perfring_session_add_software(NULL, PERFRING_SW_CPU_CLOCK, 1, NULL))
NC(swo_s, W_THREAD, perfring_session_add_software_opts(NULL, PERFRING_SW_CPU_CLOCK, NULL, NULL))
NC(attr_s, W_THREAD, perfring_session_add_attr(NULL, perfring_event_attr(x->ev), NULL))
NC(attr_attr, W_SESSION, perfring_session_add_attr(x->s, NULL, NULL))
NC(cb_ev, W_THREAD, perfring_event_set_callback(NULL, kutil_count_cb, NULL))
NC(filter_ev, W_THREAD, perfring_event_set_filter(NULL, "common_pid == 1"))
NC(field_ev, W_THREAD, perfring_event_field(NULL, "common_pid", &x->f))
NC(field_name, W_SESSION, perfring_event_field(x->ev, NULL, &x->f))
NC(field_out, W_SESSION, perfring_event_field(x->ev, "common_pid", NULL))
NC(u8_f, W_THREAD, perfring_field_u8(NULL, &x->smp, &(uint8_t){ 0 }))
NC(u8_s, W_THREAD, perfring_field_u8(&x->f, NULL, &(uint8_t){ 0 }))
NC(u8_out, W_THREAD, perfring_field_u8(&x->f, &x->smp, NULL))
NC(u16_f, W_THREAD, perfring_field_u16(NULL, &x->smp, &(uint16_t){ 0 }))
NC(u16_s, W_THREAD, perfring_field_u16(&x->f, NULL, &(uint16_t){ 0 }))
NC(u16_out, W_THREAD, perfring_field_u16(&x->f, &x->smp, NULL))
NC(u32_f, W_THREAD, perfring_field_u32(NULL, &x->smp, &(uint32_t){ 0 }))
NC(u32_s, W_THREAD, perfring_field_u32(&x->f, NULL, &(uint32_t){ 0 }))
NC(u32_out, W_THREAD, perfring_field_u32(&x->f, &x->smp, NULL))
NC(u64_f, W_THREAD, perfring_field_u64(NULL, &x->smp, &(uint64_t){ 0 }))
NC(u64_s, W_THREAD, perfring_field_u64(&x->f, NULL, &(uint64_t){ 0 }))
NC(u64_out, W_THREAD, perfring_field_u64(&x->f, &x->smp, NULL))
NC(s8_f, W_THREAD, perfring_field_s8(NULL, &x->smp, &(int8_t){ 0 }))
NC(s8_s, W_THREAD, perfring_field_s8(&x->f, NULL, &(int8_t){ 0 }))
NC(s8_out, W_THREAD, perfring_field_s8(&x->f, &x->smp, NULL))
NC(s16_f, W_THREAD, perfring_field_s16(NULL, &x->smp, &(int16_t){ 0 }))
NC(s16_s, W_THREAD, perfring_field_s16(&x->f, NULL, &(int16_t){ 0 }))
NC(s16_out, W_THREAD, perfring_field_s16(&x->f, &x->smp, NULL))
NC(s32_f, W_THREAD, perfring_field_s32(NULL, &x->smp, &(int32_t){ 0 }))
NC(s32_s, W_THREAD, perfring_field_s32(&x->f, NULL, &(int32_t){ 0 }))
NC(s32_out, W_THREAD, perfring_field_s32(&x->f, &x->smp, NULL))
NC(s64_f, W_THREAD, perfring_field_s64(NULL, &x->smp, &(int64_t){ 0 }))
NC(s64_s, W_THREAD, perfring_field_s64(&x->f, NULL, &(int64_t){ 0 }))
NC(s64_out, W_THREAD, perfring_field_s64(&x->f, &x->smp, NULL))
NC(uint_f, W_THREAD, perfring_field_uint(NULL, &x->smp, &(uint64_t){ 0 }))
NC(uint_s, W_THREAD, perfring_field_uint(&x->f, NULL, &(uint64_t){ 0 }))
NC(uint_out, W_THREAD, perfring_field_uint(&x->f, &x->smp, NULL))
NC(int_f, W_THREAD, perfring_field_int(NULL, &x->smp, &(int64_t){ 0 }))
NC(int_s, W_THREAD, perfring_field_int(&x->f, NULL, &(int64_t){ 0 }))
NC(int_out, W_THREAD, perfring_field_int(&x->f, &x->smp, NULL))
NC(str_f, W_THREAD, perfring_field_str(NULL, &x->smp, &(const char *){ 0 }, &(size_t){ 0 }))
NC(str_s, W_THREAD, perfring_field_str(&x->f, NULL, &(const char *){ 0 }, &(size_t){ 0 }))
NC(str_str, W_THREAD, perfring_field_str(&x->f, &x->smp, NULL, &(size_t){ 0 }))
NC(str_len, W_THREAD, perfring_field_str(&x->f, &x->smp, &(const char *){ 0 }, NULL))
NC(arr_f, W_THREAD, perfring_field_array(NULL, &x->smp, &(const void *){ 0 }, &(size_t){ 0 }))
NC(arr_s, W_THREAD, perfring_field_array(&x->f, NULL, &(const void *){ 0 }, &(size_t){ 0 }))
NC(arr_data, W_THREAD, perfring_field_array(&x->f, &x->smp, NULL, &(size_t){ 0 }))
NC(arr_bytes, W_THREAD, perfring_field_array(&x->f, &x->smp, &(const void *){ 0 }, NULL))
NC(rec_s, W_THREAD, perfring_session_set_record_callback(NULL, 0, NULL, NULL))
NC(start_s, W_THREAD, perfring_session_start(NULL))
NC(stop_s, W_THREAD, perfring_session_stop(NULL))
NC(fd_s, W_THREAD, perfring_session_fd_for_cpu(NULL, 0))
NC(pcpu_s, W_THREAD, perfring_session_parse_for_cpu(NULL, 0))
NC(pcpun_s, W_THREAD, perfring_session_parse_for_cpu_n(NULL, 0, 1, NULL))
NC(next_s, W_THREAD, perfring_cpu_next(NULL, 0, &x->smp, &(struct perfring_record){ 0 }))
NC(next_smp, W_RUN, perfring_cpu_next(x->run, 0, NULL, &(struct perfring_record){ 0 }))
NC(next_rec, W_RUN, perfring_cpu_next(x->run, 0, &x->smp, NULL))
NC(commit_s, W_THREAD, perfring_cpu_commit(NULL, 0))
NC(stats_s, W_THREAD, perfring_session_cpu_stats(NULL, 0, &(struct perfring_cpu_stats){ 0 }))
NC(stats_out, W_RUN, perfring_session_cpu_stats(x->run, 0, NULL))
NC(all_s, W_THREAD, perfring_session_parse_all(NULL))
NC(dur_s, W_THREAD, perfring_session_parse_for_duration(NULL, 1000))
NC(until_s, W_THREAD, perfring_session_parse_until(NULL, never, NULL))
NC(until_fn, W_RUN, perfring_session_parse_until(x->run, NULL, NULL))
NC(rnew_s, W_THREAD, perfring_reactor_new(NULL, NULL, &fakeloop_ops, &x->l, &x->r))
NC(rnew_out, W_RUN, perfring_reactor_new(x->run, NULL, &fakeloop_ops, &x->l, NULL))
NC(rnew_ops, W_RUN, perfring_reactor_new(x->run, NULL, NULL, &x->l, &x->r))
#undef NC

#define E(name, where, what) { what, nc_##name, where }
static const struct null_case null_cases[] = {
	E(new_out, W_THREAD, "perfring_session_new(opts, NULL)"),
	E(tp_s, W_THREAD, "perfring_session_add_tracepoint(NULL, ...)"),
	E(tp_sys, W_SESSION, "perfring_session_add_tracepoint(s, NULL, name)"),
	E(tp_name, W_SESSION, "perfring_session_add_tracepoint(s, system, NULL)"),
	E(sw_s, W_THREAD, "perfring_session_add_software(NULL, ...)"),
	E(swo_s, W_THREAD, "perfring_session_add_software_opts(NULL, ...)"),
	E(attr_s, W_THREAD, "perfring_session_add_attr(NULL, attr)"),
	E(attr_attr, W_SESSION, "perfring_session_add_attr(s, NULL)"),
	E(cb_ev, W_THREAD, "perfring_event_set_callback(NULL, ...)"),
	E(filter_ev, W_THREAD, "perfring_event_set_filter(NULL, filter)"),
	E(field_ev, W_THREAD, "perfring_event_field(NULL, name, out)"),
	E(field_name, W_SESSION, "perfring_event_field(ev, NULL, out)"),
	E(field_out, W_SESSION, "perfring_event_field(ev, name, NULL)"),
	E(u8_f, W_THREAD, "perfring_field_u8(NULL, s, out)"),
	E(u8_s, W_THREAD, "perfring_field_u8(f, NULL, out)"),
	E(u8_out, W_THREAD, "perfring_field_u8(f, s, NULL)"),
	E(u16_f, W_THREAD, "perfring_field_u16(NULL, s, out)"),
	E(u16_s, W_THREAD, "perfring_field_u16(f, NULL, out)"),
	E(u16_out, W_THREAD, "perfring_field_u16(f, s, NULL)"),
	E(u32_f, W_THREAD, "perfring_field_u32(NULL, s, out)"),
	E(u32_s, W_THREAD, "perfring_field_u32(f, NULL, out)"),
	E(u32_out, W_THREAD, "perfring_field_u32(f, s, NULL)"),
	E(u64_f, W_THREAD, "perfring_field_u64(NULL, s, out)"),
	E(u64_s, W_THREAD, "perfring_field_u64(f, NULL, out)"),
	E(u64_out, W_THREAD, "perfring_field_u64(f, s, NULL)"),
	E(s8_f, W_THREAD, "perfring_field_s8(NULL, s, out)"),
	E(s8_s, W_THREAD, "perfring_field_s8(f, NULL, out)"),
	E(s8_out, W_THREAD, "perfring_field_s8(f, s, NULL)"),
	E(s16_f, W_THREAD, "perfring_field_s16(NULL, s, out)"),
	E(s16_s, W_THREAD, "perfring_field_s16(f, NULL, out)"),
	E(s16_out, W_THREAD, "perfring_field_s16(f, s, NULL)"),
	E(s32_f, W_THREAD, "perfring_field_s32(NULL, s, out)"),
	E(s32_s, W_THREAD, "perfring_field_s32(f, NULL, out)"),
	E(s32_out, W_THREAD, "perfring_field_s32(f, s, NULL)"),
	E(s64_f, W_THREAD, "perfring_field_s64(NULL, s, out)"),
	E(s64_s, W_THREAD, "perfring_field_s64(f, NULL, out)"),
	E(s64_out, W_THREAD, "perfring_field_s64(f, s, NULL)"),
	E(uint_f, W_THREAD, "perfring_field_uint(NULL, s, out)"),
	E(uint_s, W_THREAD, "perfring_field_uint(f, NULL, out)"),
	E(uint_out, W_THREAD, "perfring_field_uint(f, s, NULL)"),
	E(int_f, W_THREAD, "perfring_field_int(NULL, s, out)"),
	E(int_s, W_THREAD, "perfring_field_int(f, NULL, out)"),
	E(int_out, W_THREAD, "perfring_field_int(f, s, NULL)"),
	E(str_f, W_THREAD, "perfring_field_str(NULL, s, str, len)"),
	E(str_s, W_THREAD, "perfring_field_str(f, NULL, str, len)"),
	E(str_str, W_THREAD, "perfring_field_str(f, s, NULL, len)"),
	E(str_len, W_THREAD, "perfring_field_str(f, s, str, NULL)"),
	E(arr_f, W_THREAD, "perfring_field_array(NULL, s, data, bytes)"),
	E(arr_s, W_THREAD, "perfring_field_array(f, NULL, data, bytes)"),
	E(arr_data, W_THREAD, "perfring_field_array(f, s, NULL, bytes)"),
	E(arr_bytes, W_THREAD, "perfring_field_array(f, s, data, NULL)"),
	E(rec_s, W_THREAD, "perfring_session_set_record_callback(NULL, ...)"),
	E(start_s, W_THREAD, "perfring_session_start(NULL)"),
	E(stop_s, W_THREAD, "perfring_session_stop(NULL)"),
	E(fd_s, W_THREAD, "perfring_session_fd_for_cpu(NULL, 0)"),
	E(pcpu_s, W_THREAD, "perfring_session_parse_for_cpu(NULL, 0)"),
	E(pcpun_s, W_THREAD, "perfring_session_parse_for_cpu_n(NULL, 0, 1, NULL)"),
	E(next_s, W_THREAD, "perfring_cpu_next(NULL, 0, smp, rec)"),
	E(next_smp, W_RUN, "perfring_cpu_next(s, 0, NULL, rec)"),
	E(next_rec, W_RUN, "perfring_cpu_next(s, 0, smp, NULL)"),
	E(commit_s, W_THREAD, "perfring_cpu_commit(NULL, 0)"),
	E(stats_s, W_THREAD, "perfring_session_cpu_stats(NULL, 0, out)"),
	E(stats_out, W_RUN, "perfring_session_cpu_stats(s, 0, NULL)"),
	E(all_s, W_THREAD, "perfring_session_parse_all(NULL)"),
	E(dur_s, W_THREAD, "perfring_session_parse_for_duration(NULL, ns)"),
	E(until_s, W_THREAD, "perfring_session_parse_until(NULL, fn, ctx)"),
	E(until_fn, W_RUN, "perfring_session_parse_until(s, NULL, ctx)"),
	E(rnew_s, W_THREAD, "perfring_reactor_new(NULL, opts, ops, loop, out)"),
	E(rnew_out, W_RUN, "perfring_reactor_new(s, opts, ops, loop, NULL)"),
	E(rnew_ops, W_RUN, "perfring_reactor_new(s, opts, NULL, loop, out)"),
};
#undef E

static void fx_init(struct fx *x)
{
	memset(x, 0, sizeof(*x));
	x->s = new_session(cpu0, 1);
	x->ev = add_getpid(x->s);
	cr_assert_eq(perfring_event_field(x->ev, "common_pid", &x->f), 0);
	x->smp.raw = x->raw;
	x->smp.raw_size = sizeof(x->raw);
	x->run = new_session(cpu0, 1);
	add_getpid(x->run);
	KCHECK(perfring_session_start(x->run), x->run);
}

static void fx_fini(struct fx *x)
{
	perfring_reactor_free(x->r);
	perfring_session_free(x->s);
	perfring_session_free(x->run);
}

/* Functions that return no errno: the documented value, and no crash. */
static void null_no_errno(struct fx *x)
{
	const struct perfring_cpu_fd *fds = (const void *)x;

	perfring_session_free(NULL);
	perfring_reactor_free(NULL);
	perfring_reactor_destroyed(NULL);
	perfring_reactor_on_ready(NULL, 0, POLLIN);
	perfring_reactor_on_soon(NULL);
	perfring_reactor_on_timer(NULL);
	cr_expect_str_eq(perfring_event_name(NULL), "");
	cr_expect_null(perfring_event_attr(NULL));
	cr_expect_eq(perfring_session_fds(NULL, &fds), 0);
	cr_expect_null(fds, "session_fds(NULL, &out) must set *out to NULL");
	cr_expect_eq(perfring_session_fds(x->run, NULL), 1);
	cr_expect_eq(x->l.destroys, 0, "no driver op for unusable arguments");
	cr_expect_not_null(perfring_session_last_error(NULL));
	tried += 12;
}

Test(hostile, null_pointers)
{
	struct perfring_session *who;
	struct fx x;
	size_t i;
	int rc;

	fx_init(&x);
	for (i = 0; i < sizeof(null_cases) / sizeof(null_cases[0]); i++) {
		who = null_cases[i].where == W_SESSION ? x.s :
		      null_cases[i].where == W_RUN ? x.run : NULL;
		rc = null_cases[i].call(&x);
		tried++;
		cr_expect_eq(rc, -EINVAL, "%s: returned %d (%s)", null_cases[i].what, rc,
			     perfring_strerror(rc));
		if (who)
			cr_expect(perfring_session_last_error(who)[0], "%s: empty sentence",
				  null_cases[i].what);
	}
	null_no_errno(&x);
	fx_fini(&x);
	log_tried("null_pointers", 0);
}

/* Each NULL call must also say what was NULL: in the session's sentence when
 * there is one, else in this thread's (perfring_session_last_error(NULL)). */
Test(hostile, null_pointers_sentence)
{
	struct perfring_session *who;
	struct fx x;
	size_t i;

	fx_init(&x);
	for (i = 0; i < sizeof(null_cases) / sizeof(null_cases[0]); i++) {
		who = null_cases[i].where == W_SESSION ? x.s :
		      null_cases[i].where == W_RUN ? x.run : NULL;
		arm(who);
		expect_err(null_cases[i].what, null_cases[i].call(&x), -EINVAL, who, "NULL");
	}
	fx_fini(&x);
	log_tried("null_pointers_sentence", 0);
}

/* ------------------------------------------------------------- opts sizes */

struct big_opts { struct perfring_opts o; uint64_t tail[4]; };

static int new_with_size(struct big_opts *b, size_t sz)
{
	struct perfring_session *s = NULL;
	int rc;

	b->o.sz = sz;
	arm(NULL);
	rc = perfring_session_new(&b->o, &s);
	perfring_session_free(s);
	return rc;
}

Test(hostile, opts_sizes)
{
	static const size_t small[] = { 0, 1, sizeof(size_t), sizeof(struct perfring_opts) - 1 };
	struct big_opts b = { 0 };
	char what[96];
	size_t i;

	for (i = 0; i < sizeof(small) / sizeof(small[0]); i++) {
		snprintf(what, sizeof(what), "opts.sz = %zu", small[i]);
		expect_err(what, new_with_size(&b, small[i]), -EINVAL, NULL, "opts.sz");
	}
	b.tail[3] = 1;
	expect_err("opts.sz = sizeof + 32, last byte set", new_with_size(&b, sizeof(b)), -E2BIG,
		   NULL, "opts.sz");
	b.tail[3] = 0;
	b.tail[0] = 1ull << 56;
	expect_err("opts.sz = sizeof + 8, tail set", new_with_size(&b, sizeof(b.o) + 8), -E2BIG,
		   NULL, "opts.sz");
	b.tail[0] = 0;
	cr_expect_eq(new_with_size(&b, sizeof(b)), 0, "a larger opts with a zero tail is accepted: "
		     "%s", perfring_session_last_error(NULL));
	cr_expect_eq(new_with_size(&b, sizeof(b.o)), 0);
	log_tried("opts_sizes", 0);
}

/* The other versioned structs follow the same rule as perfring_opts (the
 * header's conventions): too small is -EINVAL, a larger one is accepted when
 * its tail is zero, else -E2BIG. */
struct big_sw { struct perfring_software_opts o; uint64_t tail[4]; };
struct big_loop { struct perfring_loop_opts o; uint64_t tail[4]; };

Test(hostile, software_opts_sizes)
{
	struct perfring_session *s = new_session(cpu0, 1);
	struct big_sw b = { .o.sz = 1 };
	int rc;

	arm(s);
	rc = perfring_session_add_software_opts(s, PERFRING_SW_CPU_CLOCK, &b.o, NULL);
	expect_err("software_opts.sz = 1", rc, -EINVAL, s, "sz");
	b.o.sz = sizeof(b);
	b.tail[2] = 7;
	arm(s);
	rc = perfring_session_add_software_opts(s, PERFRING_SW_CPU_CLOCK, &b.o, NULL);
	expect_err("software_opts larger, tail set", rc, -E2BIG, s, "sz");
	b.tail[2] = 0;
	rc = perfring_session_add_software_opts(s, PERFRING_SW_CPU_CLOCK, &b.o, NULL);
	cr_expect_eq(rc, 0, "software_opts larger with a zero tail: %d (%s)", rc,
		     perfring_session_last_error(s));
	perfring_session_free(s);
	log_tried("software_opts_sizes", 0);
}

Test(hostile, loop_opts_sizes)
{
	struct perfring_session *s = new_session(cpu0, 1);
	struct perfring_reactor *r = NULL;
	struct big_loop b = { .o.sz = 1 };
	struct fakeloop l = { 0 };
	int rc;

	add_getpid(s);
	KCHECK(perfring_session_start(s), s);
	arm(s);
	rc = perfring_reactor_new(s, &b.o, &fakeloop_ops, &l, &r);
	expect_err("loop_opts.sz = 1", rc, -EINVAL, s, "sz");
	cr_expect_null(r);
	b.o.sz = sizeof(b);
	b.tail[3] = 1;
	arm(s);
	rc = perfring_reactor_new(s, &b.o, &fakeloop_ops, &l, &r);
	expect_err("loop_opts larger, tail set", rc, -E2BIG, s, "perfring_loop_opts");
	cr_expect_null(r);
	b.tail[3] = 0;
	l = (struct fakeloop){ 0 };
	rc = perfring_reactor_new(s, &b.o, &fakeloop_ops, &l, &l.r);
	cr_expect_eq(rc, 0, "loop_opts larger with a zero tail: %d (%s)", rc,
		     perfring_session_last_error(s));
	perfring_reactor_free(l.r);
	perfring_session_free(s);
	log_tried("loop_opts_sizes", 0);
}

/* -------------------------------------------------------------- CPU lists */

static void expect_cpus(const char *what, const int *cpus, size_t n, int want,
			const char *needle)
{
	struct perfring_opts o = { .sz = sizeof(o), .cpus = cpus, .cpu_cnt = n };
	struct perfring_session *s = NULL;
	int rc;

	arm(NULL);
	rc = perfring_session_new(&o, &s);
	expect_err(what, rc, want, NULL, needle);
	cr_expect_null(s, "%s: *out must stay NULL", what);
	perfring_session_free(s);
}

static int possible_max(void)
{
	char *text = NULL, *p;
	size_t len;
	int max;

	cr_assert_eq(pr_read_file("/sys/devices/system/cpu/possible", 4096, &text, &len), 0);
	p = strrchr(text, '-');
	max = atoi(p ? p + 1 : text);
	free(text);
	return max;
}

Test(hostile, cpu_lists)
{
	const int neg[] = { 0, -1 }, dup[] = { 0, 1, 0 }, huge[] = { INT_MAX }, limit[] = { 65536 };
	int above[] = { possible_max() + 1 }, offline[] = { kutil_ncpu_online() + 5 };
	char want[32];

	expect_cpus("cpus {0, -1}", neg, 2, -EINVAL, "-1");
	expect_cpus("cpus {0, 1, 0}", dup, 3, -EINVAL, "CPU 0 twice");
	expect_cpus("cpus {INT_MAX}", huge, 1, -EINVAL, "2147483647");
	expect_cpus("cpus {65536}", limit, 1, -EINVAL, "65536");
	snprintf(want, sizeof(want), "CPU %d", above[0]);
	expect_cpus("cpus {possible max + 1}", above, 1, -ENODEV, want);
	snprintf(want, sizeof(want), "CPU %d", offline[0]);
	expect_cpus("cpus {online count + 5}", offline, 1, -ENODEV, want);
	expect_cpus("cpus set, cpu_cnt 0", neg, 0, -EINVAL, "cpu_cnt");
	expect_cpus("cpus NULL, cpu_cnt 2", NULL, 2, -EINVAL, "cpu_cnt");
	log_tried("cpu_lists", 0);
}

/* ------------------------------------------------------------- ring sizes */

/* Bytes of each perf ring mapping in this process, from /proc/self/maps. */
static size_t perf_maps(size_t *len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned long lo, hi;
	size_t n = 0;

	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, "[perf_event]") || sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		*len = hi - lo;
		n++;
	}
	fclose(f);
	return n;
}

static int start_with(struct perfring_opts *o, struct perfring_session **out)
{
	int rc;

	*out = NULL;
	arm(NULL);
	if ((rc = perfring_session_new(o, out)))
		return rc;
	add_getpid(*out);
	arm(*out);
	return perfring_session_start(*out);
}

Test(hostile, ring_pages)
{
	struct perfring_opts o = { .sz = sizeof(o), .cpus = cpu0, .cpu_cnt = 1 };
	struct perfring_session *s;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len = 0;
	int rc;

	KCHECK(start_with(&o, &s), s);
	cr_expect_eq(perf_maps(&len), 1, "one ring mapped");
	cr_expect_eq(len, 65 * page, "ring_pages 0 maps 1 + 64 pages, not %zu bytes", len);
	perfring_session_free(s);
	o.ring_pages = 3;
	expect_err("ring_pages = 3", start_with(&o, &s), -EINVAL, NULL, "power of two");
	cr_expect_null(s);
	o.ring_pages = 1u << 23;
	expect_err("ring_pages = 2^23", start_with(&o, &s), -EINVAL, NULL, "ring_pages");
	/* Above the kernel's largest ring (R10; tests/test_errors.sh names it). */
	o.ring_pages = 1u << 22;
	rc = start_with(&o, &s);
	expect_err("ring_pages = 2^22 (16 GiB)", rc, -EINVAL, NULL, "largest ring");
	cr_expect_null(s);
	cr_expect_eq(perf_maps(&len), 0, "nothing mapped");
	log_tried("ring_pages", 0);
}

/* mmap's EPERM (over the locked-memory limit, unprivileged) cannot be made as
 * root, so it is injected; the sentence must carry the mlock hint. */
static int fail_mmap(enum pr_sys_call call, void *ctx)
{
	(void)ctx;
	return call == PR_SYS_MMAP ? EPERM : 0;
}

Test(hostile, mmap_eperm_hint)
{
	struct perfring_opts o = { .sz = sizeof(o), .cpus = cpu0, .cpu_cnt = 1, .ring_pages = 1024 };
	struct perfring_session *s;
	int rc;

	pr_fault_set(fail_mmap, NULL);
	rc = start_with(&o, &s);
	pr_fault_set(NULL, NULL);
	expect_err("mmap EPERM", rc, -EPERM, s, "RLIMIT_MEMLOCK");
	cr_expect(strstr(perfring_session_last_error(s), "ring_pages"),
		  "the hint offers fewer ring_pages: %s", perfring_session_last_error(s));
	perfring_session_free(s);
	log_tried("mmap_eperm_hint", 0);
}

/* -------------------------------------------------------- wakeup settings */

Test(hostile, wakeup_settings)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct perfring_opts o = { .sz = sizeof(o), .cpus = cpu0, .cpu_cnt = 1,
				   .ring_pages = RING_PAGES };
	struct perfring_session *s;

	o.wakeup_watermark = (uint32_t)(RING_PAGES * page);
	expect_err("watermark = ring size", start_with(&o, &s), -EINVAL, NULL, "wakeup_watermark");
	o.wakeup_watermark = UINT32_MAX;
	expect_err("watermark = UINT32_MAX", start_with(&o, &s), -EINVAL, NULL,
		   "wakeup_watermark");
	o.wakeup_watermark = 4096;
	o.wakeup_events = 1;
	expect_err("watermark and wakeup_events", start_with(&o, &s), -EINVAL, NULL,
		   "exclude each other");
	o.wakeup_events = 0;
	o.wakeup_watermark = (uint32_t)(RING_PAGES * page - 1);
	KCHECK(start_with(&o, &s), s);
	perfring_session_free(s);
	o.wakeup_watermark = 0;
	o.poll_interval_ms = UINT32_MAX;
	expect_err("poll_interval_ms = UINT32_MAX", start_with(&o, &s), -EINVAL, NULL,
		   "poll_interval_ms");
	o.poll_interval_ms = 0;
	o.pid = -1;
	expect_err("pid = -1", start_with(&o, &s), -EINVAL, NULL, "opts.pid");
	o.pid = INT_MAX;
	expect_err("pid = INT_MAX (no such process)", start_with(&o, &s), -ESRCH, NULL, "opts.pid");
	log_tried("wakeup_settings", 0);
}

/* ------------------------------------------------------------ tracepoints */

/* Each part is one directory of tracefs's events/: the sentence names the
 * part, never a path of empty or walking components (events///format). */
static void bad_tracepoint_parts(struct perfring_session *s)
{
	static const struct {
		const char *sys, *name, *needle;
	} c[] = {
		{ "", "", "tracepoint system is empty: give SYSTEM:NAME" },
		{ "", "sys_enter_getpid", "tracepoint system is empty" },
		{ "sys/calls", "sys_enter_getpid", "system \"sys/calls\" holds a '/'" },
		{ "/", "x", "system \"/\" holds a '/'" },
		{ ".", "sys_enter_getpid", "system \".\" starts with '.'" },
		{ "..", "..", "system \"..\" starts with '.'" },
		{ ".syscalls", "sys_enter_getpid", "system \".syscalls\" starts with '.'" },
		{ "syscalls", ".sys_enter_getpid", "name \".sys_enter_getpid\" starts with '.'" },
		{ "syscalls", "..", "name \"..\" starts with '.'" },
		{ "syscalls", "sys_enter_getpid/", "name \"sys_enter_getpid/\" holds a '/'" },
	};
	const char *why;
	char what[96];
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		snprintf(what, sizeof(what), "tracepoint \"%s\":\"%s\"", c[i].sys, c[i].name);
		arm(s);
		expect_err(what, perfring_session_add_tracepoint(s, c[i].sys, c[i].name, NULL),
			   -EINVAL, s, c[i].needle);
		why = perfring_session_last_error(s);
		cr_expect(!strstr(why, "//") && !strstr(why, "/format"),
			  "%s: the sentence names a tracefs path: \"%s\"", what, why);
	}
}

Test(hostile, bad_events)
{
	struct perfring_session *s = new_session(cpu0, 1);
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(a),
				     .sample_type = PERF_SAMPLE_AUX };

	arm(s);
	expect_err("unknown tracepoint", perfring_session_add_tracepoint(s, "syscalls",
		   "sys_enter_no_such_call", NULL), -ENOENT, s, "sys_enter_no_such_call");
	arm(s);
	expect_err("unknown system", perfring_session_add_tracepoint(s, "no_such_system",
		   "x", NULL), -ENOENT, s, "no_such_system");
	arm(s);
	expect_err("system \"..\"", perfring_session_add_tracepoint(s, "..", "sys_enter_getpid",
		   NULL), -EINVAL, s, NULL);
	arm(s);
	expect_err("name with a slash", perfring_session_add_tracepoint(s, "syscalls",
		   "../sched/sched_switch", NULL), -EINVAL, s, NULL);
	arm(s);
	expect_err("empty name", perfring_session_add_tracepoint(s, "syscalls", "", NULL),
		   -EINVAL, s, "tracepoint name is empty: give SYSTEM:NAME");
	bad_tracepoint_parts(s);
	arm(s);
	expect_err("software kind 99", perfring_session_add_software(s, 99, 1, NULL), -EINVAL,
		   s, "99");
	arm(s);
	expect_err("attr with AUX", perfring_session_add_attr(s, &a, NULL), -EOPNOTSUPP, s,
		   "AUX");
	arm(s);
	expect_err("record mask 0x200", perfring_session_set_record_callback(s, 0x200, NULL,
		   NULL), -EINVAL, s, "0x200");
	perfring_session_free(s);
	log_tried("bad_events", 0);
}

/* The kernel refuses a syntax error with EINVAL and an unknown field with
 * ENOENT; the contract is -EINVAL for both (and -ENOENT would read as "no
 * such tracepoint" to callers and to KCHECK). */
static void expect_bad_filter(const char *filter)
{
	struct perfring_session *s = new_session(cpu0, 1);
	struct perfring_event *ev = add_getpid(s);
	int fds = kutil_fd_count();
	char what[128];

	snprintf(what, sizeof(what), "start with filter \"%s\"", filter);
	cr_assert_eq(perfring_event_set_filter(ev, filter), 0);
	arm(s);
	expect_err(what, perfring_session_start(s), -EINVAL, s, filter);
	cr_expect_eq(kutil_fd_count(), fds, "%s: the failed start closed its fds", what);
	cr_expect_eq(perfring_session_fds(s, NULL), 0);
	cr_assert_eq(perfring_event_set_filter(ev, "common_pid != 0"), 0);
	cr_expect_eq(perfring_session_start(s), 0, "a good filter then starts: %s",
		     perfring_session_last_error(s));
	perfring_session_free(s);
}

Test(hostile, bad_filter)
{
	expect_bad_filter("common_pid == == 1 &&& (");
	expect_bad_filter("no_such_field == 1");
	log_tried("bad_filter", 0);
}

Test(hostile, missing_tracefs)
{
	char dir[] = "/tmp/perfring-notracefs-XXXXXX";
	struct perfring_session *s = new_session(cpu0, 1);
	int rc;

	cr_assert_not_null(mkdtemp(dir));
	setenv("PERFRING_TRACEFS", dir, 1);
	arm(s);
	rc = perfring_session_add_tracepoint(s, "syscalls", "sys_enter_getpid", NULL);
	unsetenv("PERFRING_TRACEFS");
	rmdir(dir);
	expect_err("PERFRING_TRACEFS = an empty directory", rc, -ENODEV, s, "tracefs");
	cr_expect(strstr(perfring_session_last_error(s), "mount"), "the fix: %s",
		  perfring_session_last_error(s));
	cr_expect_eq(access(dir, F_OK), -1, "the temp dir is gone");
	add_getpid(s);
	perfring_session_free(s);
	log_tried("missing_tracefs", 0);
}

/* -------------------------------------------------------------- lifecycle */

static void expect_not_started(struct perfring_session *s)
{
	struct perfring_record rec;
	struct perfring_sample smp;

	arm(s);
	expect_err("parse_all before start", perfring_session_parse_all(s), -EINVAL, s, "start");
	arm(s);
	expect_err("parse_for_cpu before start", perfring_session_parse_for_cpu(s, 0), -EINVAL, s,
		   "start");
	arm(s);
	expect_err("parse_for_duration before start", perfring_session_parse_for_duration(s, 1000),
		   -EINVAL, s, "start");
	arm(s);
	expect_err("parse_until before start", perfring_session_parse_until(s, never, NULL),
		   -EINVAL, s, "start");
	arm(s);
	expect_err("cpu_next before start", perfring_cpu_next(s, 0, &smp, &rec), -EINVAL, s,
		   "start");
	arm(s);
	expect_err("cpu_commit before start", perfring_cpu_commit(s, 0), -EINVAL, s, "start");
	arm(s);
	expect_err("stop before start", perfring_session_stop(s), -EINVAL, s, "not running");
}

static void expect_busy(struct perfring_session *s, struct perfring_event *ev, const char *when)
{
	char what[96];

	snprintf(what, sizeof(what), "add_tracepoint %s", when);
	arm(s);
	expect_err(what, perfring_session_add_tracepoint(s, "sched", "sched_switch", NULL),
		   -EBUSY, s, "before");
	snprintf(what, sizeof(what), "add_software %s", when);
	arm(s);
	expect_err(what, perfring_session_add_software(s, PERFRING_SW_CPU_CLOCK, 1, NULL), -EBUSY,
		   s, "before");
	snprintf(what, sizeof(what), "add_attr %s", when);
	arm(s);
	expect_err(what, perfring_session_add_attr(s, perfring_event_attr(ev), NULL), -EBUSY, s,
		   "before");
	snprintf(what, sizeof(what), "set_filter %s", when);
	arm(s);
	expect_err(what, perfring_event_set_filter(ev, "common_pid == 1"), -EBUSY, s, "before");
	snprintf(what, sizeof(what), "set_record_callback %s", when);
	arm(s);
	expect_err(what, perfring_session_set_record_callback(s, 0, NULL, NULL), -EBUSY, s,
		   "before");
}

Test(hostile, lifecycle)
{
	struct perfring_session *s = new_session(cpu0, 1);
	struct perfring_event *ev;

	arm(s);
	expect_err("start with no events", perfring_session_start(s), -EINVAL, s, "no events");
	ev = add_getpid(s);
	expect_not_started(s);
	KCHECK(perfring_session_start(s), s);
	arm(s);
	expect_err("start after start", perfring_session_start(s), -EBUSY, s, "already started");
	expect_busy(s, ev, "after start");
	arm(s);
	expect_err("parse_for_cpu of an unwatched CPU", perfring_session_parse_for_cpu(s, 7),
		   -ENOENT, s, "CPU 7");
	cr_expect_eq(perfring_session_fd_for_cpu(s, 7), -ENOENT);
	cr_expect_eq(perfring_session_stop(s), 0);
	arm(s);
	expect_err("stop twice", perfring_session_stop(s), -EINVAL, s, "not running");
	expect_busy(s, ev, "after stop");
	cr_expect_geq(perfring_session_parse_all(s), 0, "rings stay readable after stop");
	/* R11: a start after a stop resumes (tests/test_start counts it). */
	cr_expect_eq(perfring_session_start(s), 0, "start after stop: %s",
		     perfring_session_last_error(s));
	cr_expect_eq(perfring_session_stop(s), 0);
	perfring_session_free(s);
	perfring_session_free(NULL);
	log_tried("lifecycle", 0);
}

/* perfring_strerror() of any int, even INT_MIN, is a string (UBSan would
 * flag negating INT_MIN). */
Test(hostile, strerror_any_int)
{
	static const int v[] = { 0, 1, -1, -4095, -4096, 4096, INT_MAX, INT_MIN, INT_MIN + 1 };
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		cr_expect_not_null(perfring_strerror(v[i]));
		cr_expect(perfring_strerror(v[i])[0], "strerror(%d) is empty", v[i]);
	}
	tried += (long)(sizeof(v) / sizeof(v[0]));
	log_tried("strerror_any_int", 0);
}
