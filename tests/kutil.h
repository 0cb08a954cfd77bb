/* Helpers for tests that open real perf events. */
#ifndef KUTIL_H
#define KUTIL_H

#include <perfring/perfring.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Whether err means perf is really unavailable here (EACCES, EPERM, ENOSYS,
 * or ENOENT for a missing tracepoint): the only reasons a kernel test skips. */
int kutil_unavailable(int err);

/* Skips the current test with the reason when perf is unavailable, else
 * fails it with the session's sentence when err is an error. */
#define KCHECK(err, s)                                                                   \
	do {                                                                             \
		int e_ = (err);                                                          \
		if (e_ && kutil_unavailable(e_))                                         \
			cr_skip_test("perf unavailable: %s", perfring_session_last_error(s)); \
		cr_assert_eq(e_, 0, "%s (%d)", perfring_session_last_error(s), e_);      \
	} while (0)

/* Under valgrind (tests/run-valgrind.sh sets PERFRING_UNDER_VALGRIND) the
 * traced tasks make valgrind's own syscalls too, so exact counts of a
 * syscall tracepoint become lower bounds there. */
int kutil_under_valgrind(void);
#define KCOUNT_EQ(got, want)                                                            \
	do {                                                                            \
		unsigned long long g_ = (unsigned long long)(got), w_ = (unsigned long long)(want); \
		if (kutil_under_valgrind())                                             \
			cr_assert_geq(g_, w_, "got %llu, want at least %llu", g_, w_);  \
		else                                                                    \
			cr_assert_eq(g_, w_, "got %llu, want %llu", g_, w_);            \
	} while (0)

void kutil_getpid_n(long n);

/* For kutil_child_start: pins itself to cpu, then makes n getpid calls. */
struct kpinned { int cpu; long n; };
int kutil_pinned_getpid(void *arg);

/* A process of two threads, both running before the caller's session
 * starts: at kutil_child_go its main thread exits, while the other makes n
 * getpid calls over about ms milliseconds, then exits 0 (R2). */
struct kleader { long n; int ms; pid_t worker; /* out: the other thread's tid */ };
struct kchild;
int kutil_leader_start(struct kchild *c, struct kleader *l);
/* Threads of pid now, or -1. */
int kutil_thread_count(pid_t pid);

/* Every watched CPU's counters added up (max_fill_pct and hup: the max). */
struct perfring_cpu_stats kutil_stats(const struct perfring_session *s);
int kutil_pin(int cpu);
int kutil_fd_count(void);
uint64_t kutil_now_ns(void);
int kutil_ncpu_online(void);

/* A child that waits for kutil_child_go(), runs fn(arg) and exits with its
 * return value. Lets a test start watching a pid before it does anything. */
struct kchild { pid_t pid; int go_fd; };
int kutil_child_start(struct kchild *c, int (*fn)(void *), void *arg);
void kutil_child_go(struct kchild *c);
int kutil_child_wait(struct kchild *c); /* exit status, or -1 */

/* The process's open fds below KUTIL_FD_MAX and what each points at, so a
 * failure that closed an fd not its own shows even when another one leaked. */
#define KUTIL_FD_MAX 256
struct kfdset { int n; char target[KUTIL_FD_MAX][64]; };
int kutil_fd_snapshot(struct kfdset *fs); /* 0 or -errno */
/* -1 when the fds are as in before, else the first fd that changed, with
 * "fd N was \"X\" and is now \"Y\" (A fds before, B now)" in why. */
int kutil_fd_changed(const struct kfdset *before, char *why, size_t len);

/* Whether LeakSanitizer runs in this build (ASan; else leak checks are off). */
int kutil_leak_check_on(void);
/* Whether LeakSanitizer finds a leak now. Every leak it has found stays
 * reported, so after the first one this returns false: only the first case
 * that leaks is named. */
int kutil_leak_found(void);

/* Counts samples per CPU in a callback (ctx = struct kcount *). */
struct kcount { uint64_t n; uint64_t per_cpu[64]; uint64_t last_time; uint64_t out_of_order; };
int kutil_count_cb(const struct perfring_sample *s, void *ctx);

/* A session on every online CPU with opts o, getpid tracepoint filtered on
 * pid (0: no filter), counting into k. */
int kutil_getpid_session(struct perfring_opts *o, pid_t filter_pid, struct kcount *k,
			 struct perfring_session **out, struct perfring_event **ev);

#endif
