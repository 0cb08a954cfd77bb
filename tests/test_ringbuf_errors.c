/* SPDX-License-Identifier: MIT */
/* Every error of the ring buffer calls, each errno and each sentence:
 * add_bpf_ringbuf (no session, not a map, a closed fd, a program, another
 * map type, a PERF_EVENT_ARRAY, a read-only fd, a frozen map, the same map
 * twice, after start, each bad opts), add_bpf_output given a ring buffer,
 * perfring_ringbuf_fd/_parse/_stats on the wrong event or at the wrong
 * time, the per-event calls a ring buffer has no use for, and the lost
 * callback's. */
#include "test_ringbuf_fx.h"
#include "kutil.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

static struct kfdset fds_before;

static void setup(void)
{
	cr_assert_eq(kutil_fd_snapshot(&fds_before), 0);
}

static void teardown(void)
{
	char why[192];

	cr_expect_lt(kutil_fd_changed(&fds_before, why, sizeof(why)), 0, "%s", why);
}

TestSuite(rberr, .init = setup, .fini = teardown, .timeout = 60);

static int map_create(uint32_t type, uint32_t key, uint32_t value, uint32_t entries)
{
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = key;
	a.value_size = value;
	a.max_entries = entries;
	snprintf(a.map_name, sizeof(a.map_name), "rberr");
	fd = (int)syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof(a));
	if (fd < 0 && (errno == EPERM || errno == ENOSYS))
		cr_skip_test("BPF unavailable: %s", strerror(errno));
	cr_assert_geq(fd, 0, "BPF_MAP_CREATE type %u: %s", type, strerror(errno));
	return fd;
}

static int ringbuf_map(void)
{
	return map_create(BPF_MAP_TYPE_RINGBUF, 0, 0, 4096);
}

static void expect_sentence(struct perfring_session *s, const char *what, int rc, int want,
			    const char *says)
{
	const char *why = perfring_session_last_error(s);

	cr_expect_eq(rc, want, "%s: %d, want %d (%s)", what, rc, want, why);
	cr_expect(strstr(why, says), "%s: the sentence \"%s\" does not say \"%s\"", what, why,
		  says);
}

/* add_bpf_ringbuf(map_fd, ro) on a fresh session: want, saying says; *out
 * untouched on an error. */
static void expect_add(int fd, const struct perfring_ringbuf_opts *ro, int want,
		       const char *says)
{
	struct perfring_event *ev = NULL;
	struct perfring_session *s;
	char what[64];

	KCHECK(perfring_session_new(NULL, &s), NULL);
	snprintf(what, sizeof(what), "add_bpf_ringbuf(fd %d)", fd);
	expect_sentence(s, what, perfring_session_add_bpf_ringbuf(s, fd, ro, &ev), want, says);
	cr_expect(want ? !ev : ev != NULL, "%s: ev %p", what, (void *)ev);
	perfring_session_free(s);
}

Test(rberr, null_session)
{
	struct perfring_event *ev = NULL;

	cr_expect_eq(perfring_session_add_bpf_ringbuf(NULL, 0, NULL, &ev), -EINVAL);
	cr_expect(strstr(perfring_session_last_error(NULL), "must not be NULL"));
	cr_expect_null(ev);
	cr_expect_eq(perfring_ringbuf_fd(NULL), -EINVAL);
	cr_expect_eq(perfring_ringbuf_parse(NULL, 0, NULL), -EINVAL);
	cr_expect_eq(perfring_ringbuf_stats(NULL, NULL), -EINVAL);
	cr_expect_eq(perfring_session_set_lost_callback(NULL, NULL, NULL), -EINVAL);
}

Test(rberr, not_a_map)
{
	struct kbpf_rb b;
	char why[1024];
	int efd = eventfd(0, EFD_CLOEXEC);

	cr_assert_geq(efd, 0);
	expect_add(efd, NULL, -EBADF, "add_bpf_ringbuf: map_fd");
	expect_add(efd, NULL, -EBADF, "is not a BPF map");
	close(efd);
	expect_add(efd, NULL, -EBADF, "not an open file descriptor");
	expect_add(-1, NULL, -EBADF, "not an open file descriptor");
	if (kbpf_rb_open(&b, getpid(), 4096, KBPF_RB_OUTPUT, 24, why, sizeof(why)))
		cr_skip_test("BPF unavailable: %s", why);
	expect_add(b.prog, NULL, -EBADF, "a BPF object but not a map");
	kbpf_rb_close(&b);
}

Test(rberr, other_map_types_name_their_type)
{
	int arr = map_create(BPF_MAP_TYPE_ARRAY, 4, 4, 4);
	int hash = map_create(BPF_MAP_TYPE_HASH, 4, 4, 4);
	int pea = map_create(BPF_MAP_TYPE_PERF_EVENT_ARRAY, 4, 4, 4);
	int urb = map_create(BPF_MAP_TYPE_USER_RINGBUF, 0, 0, 4096);

	expect_add(arr, NULL, -EINVAL, "is a BPF_MAP_TYPE_ARRAY (2), not BPF_MAP_TYPE_RINGBUF (27)");
	expect_add(hash, NULL, -EINVAL, "is a BPF_MAP_TYPE_HASH (1), not BPF_MAP_TYPE_RINGBUF (27)");
	expect_add(pea, NULL, -EINVAL, "is a BPF_MAP_TYPE_PERF_EVENT_ARRAY (4), not "
		   "BPF_MAP_TYPE_RINGBUF (27): use perfring_session_add_bpf_output");
	expect_add(urb, NULL, -EINVAL, "is a BPF_MAP_TYPE_USER_RINGBUF (31), not "
		   "BPF_MAP_TYPE_RINGBUF (27) (user space writes it");
	close(arr);
	close(hash);
	close(pea);
	close(urb);
}

/* The converse: add_bpf_output given a ring buffer names this call. */
Test(rberr, add_bpf_output_given_a_ring_buffer)
{
	struct perfring_event *ev = NULL;
	struct perfring_session *s;
	int fd = ringbuf_map();

	KCHECK(perfring_session_new(NULL, &s), NULL);
	expect_sentence(s, "add_bpf_output(ringbuf)", perfring_session_add_bpf_output(s, fd, &ev),
			-EINVAL, "is a BPF_MAP_TYPE_RINGBUF (27), not BPF_MAP_TYPE_PERF_EVENT_ARRAY "
			"(4): use perfring_session_add_bpf_ringbuf");
	cr_expect_null(ev);
	perfring_session_free(s);
	close(fd);
}

/* A read-only fd of the map (BPF_MAP_GET_FD_BY_ID with BPF_F_RDONLY). */
static int read_only_fd(int fd)
{
	union bpf_attr a;
	int ro;

	memset(&a, 0, sizeof(a));
	a.map_id = kbpf_id(fd);
	a.open_flags = BPF_F_RDONLY;
	ro = (int)syscall(SYS_bpf, BPF_MAP_GET_FD_BY_ID, &a, sizeof(a));
	cr_assert_geq(ro, 0, "BPF_MAP_GET_FD_BY_ID: %s", strerror(errno));
	return ro;
}

Test(rberr, read_only_fd)
{
	int fd = ringbuf_map(), ro = read_only_fd(fd);

	expect_add(ro, NULL, -EPERM, "is read-only to user space (map_fd made or opened with "
		   "BPF_F_RDONLY), but its consumer page");
	close(ro);
	close(fd);
}

Test(rberr, same_map_twice_and_after_start)
{
	struct perfring_event *ev, *again = NULL;
	struct perfring_session *s;
	int fd = ringbuf_map(), other = ringbuf_map();

	KCHECK(perfring_session_new(NULL, &s), NULL);
	KCHECK(perfring_session_add_bpf_ringbuf(s, fd, NULL, &ev), s);
	expect_sentence(s, "twice", perfring_session_add_bpf_ringbuf(s, fd, NULL, &again), -EEXIST,
			"already reads map");
	cr_expect_null(again);
	KCHECK(perfring_session_start(s), s);
	expect_sentence(s, "after start", perfring_session_add_bpf_ringbuf(s, other, NULL, &again),
			-EBUSY, "before perfring_session_start");
	cr_expect_null(again);
	expect_sentence(s, "lost cb after start", perfring_session_set_lost_callback(s, NULL, NULL),
			-EBUSY, "only before start");
	perfring_session_free(s);
	close(fd);
	close(other);
}

Test(rberr, opts)
{
	struct { struct perfring_ringbuf_opts o; uint64_t tail; } big = { { .sz = sizeof(big) }, 0 };
	struct perfring_ringbuf_opts o = { .sz = 8 };
	int fd = ringbuf_map();

	expect_add(fd, &o, -EINVAL, "perfring_ringbuf_opts.sz is 8");
	o = (struct perfring_ringbuf_opts){ .sz = sizeof(o), .flags = 0x6 };
	expect_add(fd, &o, -EINVAL, "flags = 0x6: only PERFRING_RINGBUF_TIME is defined");
	o = (struct perfring_ringbuf_opts){ .sz = sizeof(o), .time_offset = 8 };
	expect_add(fd, &o, -EINVAL, "time_offset is 8 without PERFRING_RINGBUF_TIME");
	o = (struct perfring_ringbuf_opts){ .sz = sizeof(o), .flags = PERFRING_RINGBUF_TIME,
					    .time_offset = 4096 - 8 };
	expect_add(fd, &o, -EINVAL, "holds 4096 bytes: no record of it reaches a u64");
	big.tail = 1;
	expect_add(fd, &big.o, -E2BIG, "a newer libperfring's option is set");
	big.tail = 0;
	expect_add(fd, &big.o, 0, "");
	o = (struct perfring_ringbuf_opts){ .sz = sizeof(o), .flags = PERFRING_RINGBUF_TIME,
					    .time_offset = 4096 - 16 };
	expect_add(fd, &o, 0, "");
	close(fd);
}

/* The calls on the event: before start, and on an event of another kind. */
Test(rberr, event_calls)
{
	struct perfring_ringbuf_stats st;
	struct perfring_event *ev, *tp;
	struct perfring_session *s;
	struct perfring_field fld;
	bool more = true;
	int fd = ringbuf_map();

	KCHECK(perfring_session_new(NULL, &s), NULL);
	KCHECK(perfring_session_add_bpf_ringbuf(s, fd, NULL, &ev), s);
	KCHECK(perfring_session_add_tracepoint(s, "syscalls", "sys_enter_getpid", &tp), s);
	cr_expect(strncmp(perfring_event_name(ev), "ringbuf:rberr(map ", 18) == 0, "name %s",
		  perfring_event_name(ev));
	cr_expect_null(perfring_event_attr(ev), "a ring buffer has no attr");
	expect_sentence(s, "fd before start", perfring_ringbuf_fd(ev), -ENOTCONN,
			"mapped at perfring_session_start");
	expect_sentence(s, "parse before start", perfring_ringbuf_parse(ev, 0, &more), -EINVAL,
			"before perfring_session_start");
	cr_expect(!more);
	expect_sentence(s, "fd of a tracepoint", perfring_ringbuf_fd(tp), -EINVAL,
			"syscalls:sys_enter_getpid is not a BPF ring buffer");
	expect_sentence(s, "parse of a tracepoint", perfring_ringbuf_parse(tp, 0, NULL), -EINVAL,
			"is not a BPF ring buffer");
	expect_sentence(s, "stats of a tracepoint", perfring_ringbuf_stats(tp, &st), -EINVAL,
			"is not a BPF ring buffer");
	expect_sentence(s, "stats NULL", perfring_ringbuf_stats(ev, NULL), -EINVAL,
			"out must not be NULL");
	expect_sentence(s, "set_filter", perfring_event_set_filter(ev, "x == 1"), -EOPNOTSUPP,
			"is a BPF ring buffer, not a perf event");
	expect_sentence(s, "event_field", perfring_event_field(ev, "x", &fld), -EOPNOTSUPP,
			"with no tracefs format");
	expect_sentence(s, "set_group", perfring_event_set_group(ev, tp), -EOPNOTSUPP,
			"is a BPF ring buffer");
	expect_sentence(s, "set_group leader", perfring_event_set_group(tp, ev), -EOPNOTSUPP,
			"is a BPF ring buffer");
	cr_expect_eq(perfring_event_set_callback(ev, NULL, NULL), 0);
	cr_expect_eq(perfring_ringbuf_stats(ev, &st), 0);
	cr_expect_eq(st.records + st.bytes + st.discarded + st.untimed + st.wakeups, 0);
	KCHECK(perfring_session_start(s), s);
	cr_expect_geq(perfring_ringbuf_fd(ev), 0);
	cr_expect_neq(perfring_ringbuf_fd(ev), fd, "the session's own dup");
	cr_expect_eq(perfring_ringbuf_parse(ev, 0, &more), 0);
	perfring_session_free(s);
	close(fd);
}

/* A map frozen after the add: start's mmap of the consumer page fails,
 * with why; a frozen map is refused at the add. */
Test(rberr, frozen_before_start)
{
	struct perfring_session *s;
	struct perfring_event *ev;
	union bpf_attr a;
	int fd = ringbuf_map();

	KCHECK(perfring_session_new(NULL, &s), NULL);
	KCHECK(perfring_session_add_bpf_ringbuf(s, fd, NULL, &ev), s);
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	if (syscall(SYS_bpf, BPF_MAP_FREEZE, &a, sizeof(a)) < 0) {
		perfring_session_free(s);
		close(fd);
		cr_skip_test("BPF_MAP_FREEZE on a ring buffer: %s", strerror(errno));
	}
	expect_sentence(s, "start", perfring_session_start(s), -EPERM, "mapping ringbuf:rberr");
	expect_sentence(s, "start", -EPERM, -EPERM, "not frozen");
	cr_expect_eq(perfring_session_fds(s, NULL), 0, "nothing left open");
	perfring_session_free(s);
	/* Frozen already: refused at the add, with why. */
	expect_add(fd, NULL, -EPERM, "is frozen (BPF_MAP_FREEZE): its consumer page cannot be "
		   "mapped writable");
	close(fd);
}
