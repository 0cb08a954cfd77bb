/* perfring_session_new validates every option with an errno and a sentence. */
#include "kutil.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

static int make(struct perfring_opts *o)
{
	struct perfring_session *s = (void *)1;
	int err = perfring_session_new(o, &s);

	if (!err)
		perfring_session_free(s);
	else
		cr_assert_null(s, "out is NULL on failure");
	return err;
}

static void expect(struct perfring_opts *o, int err, const char *words)
{
	cr_assert_eq(make(o), err, "%s", perfring_session_last_error(NULL));
	cr_assert(strstr(perfring_session_last_error(NULL), words), "sentence \"%s\" lacks \"%s\"",
		  perfring_session_last_error(NULL), words);
}

Test(opts, defaults)
{
	cr_assert_eq(make(NULL), 0);
	cr_assert_eq(make(&(struct perfring_opts){ .sz = sizeof(struct perfring_opts) }), 0);
}

Test(opts, sz)
{
	struct { struct perfring_opts o; char tail[16]; } big;

	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);

	expect(&(struct perfring_opts){ .sz = 8 }, -EINVAL, "opts.sz");
	cr_assert_eq(make(&big.o), 0, "a zero tail is accepted");
	big.tail[3] = 1;
	expect(&big.o, -E2BIG, "newer");
}

Test(opts, cpus)
{
	int neg[] = { 0, -1 }, dup[] = { 1, 0, 1 }, off[] = { 0, 4000 }, one[] = { 0 };

	expect(&(struct perfring_opts){ .sz = sizeof(struct perfring_opts), .cpus = neg, .cpu_cnt = 2 },
	       -EINVAL, "-1");
	if (kutil_ncpu_online() > 1)
		expect(&(struct perfring_opts){ .sz = sizeof(struct perfring_opts), .cpus = dup,
						.cpu_cnt = 3 }, -EINVAL, "twice");
	expect(&(struct perfring_opts){ .sz = sizeof(struct perfring_opts), .cpus = off, .cpu_cnt = 2 },
	       -ENODEV, "CPU 4000");
	expect(&(struct perfring_opts){ .sz = sizeof(struct perfring_opts), .cpus = one }, -EINVAL,
	       "cpu_cnt");
	cr_assert_eq(make(&(struct perfring_opts){ .sz = sizeof(struct perfring_opts), .cpus = one,
						   .cpu_cnt = 1 }), 0);
}

Test(opts, pid)
{
	expect(&(struct perfring_opts){ .sz = sizeof(struct perfring_opts), .pid = -1 }, -EINVAL,
	       "opts.pid");
	expect(&(struct perfring_opts){ .sz = sizeof(struct perfring_opts), .pid = 0x3ffffff0 }, -ESRCH,
	       "no such process");
}

Test(opts, ring_and_wakeups)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 3 };

	expect(&o, -EINVAL, "power of two");
	o.ring_pages = 1;
	o.wakeup_watermark = 4096;
	expect(&o, -EINVAL, "4096 bytes");
	o.wakeup_watermark = 4095;
	cr_assert_eq(make(&o), 0);
	o.ring_pages = 0;
	o.wakeup_watermark = 64 * 4096;
	expect(&o, -EINVAL, "262144");
	o.wakeup_watermark = 4096;
	o.wakeup_events = 10;
	expect(&o, -EINVAL, "exclude each other");
}

Test(opts, intervals)
{
	struct perfring_opts o = { .sz = sizeof(o), .poll_interval_ms = 4000000 };

	expect(&o, -EINVAL, "poll_interval_ms");
	o.poll_interval_ms = 0;
	o.flush_ms = PERFRING_FLUSH_NEVER;
	cr_assert_eq(make(&o), 0);
	o.flush_ms = PERFRING_FLUSH_NEVER - 1;
	expect(&o, -EINVAL, "flush_ms");
}
