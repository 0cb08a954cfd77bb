/* Sessions on the real kernel: exact counts, time order, fields, task
 * records, overflow accounting, rollback and permission errors. */
#include "kutil.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define N 10000

static int getpid_n(void *arg)
{
	kutil_getpid_n((long)(intptr_t)arg);
	return 0;
}

static void start_or_skip(struct perfring_session *s)
{
	KCHECK(perfring_session_start(s), s);
}

Test(kernel_session, exact_count_pid_mode)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256 };
	struct perfring_cpu_stats st;
	struct perfring_session *s;
	struct kcount k = { 0 };
	struct kchild c;
	uint64_t samples = 0, lost = 0;

	cr_assert_eq(kutil_child_start(&c, getpid_n, (void *)(intptr_t)N), 0);
	o.pid = c.pid;
	KCHECK(kutil_getpid_session(&o, 0, &k, &s, NULL), s);
	start_or_skip(s);
	kutil_child_go(&c);
	cr_assert_eq(kutil_child_wait(&c), 0);
	KCOUNT_EQ(perfring_session_parse_all(s), N);
	KCOUNT_EQ(k.n, N);
	for (int cpu = 0; cpu < kutil_ncpu_online(); cpu++) {
		cr_assert_eq(perfring_session_cpu_stats(s, cpu, &st), 0);
		samples += st.samples;
		lost += st.lost;
		cr_assert_eq(st.corrupt, 0);
	}
	KCOUNT_EQ(samples, N);
	cr_assert_eq(lost, 0);
	perfring_session_free(s);
}

Test(kernel_session, exact_count_system_wide_filter)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256 };
	struct perfring_session *s;
	struct kcount k = { 0 };
	struct kchild c;
	uint64_t sum = 0;

	cr_assert_eq(kutil_child_start(&c, getpid_n, (void *)(intptr_t)N), 0);
	KCHECK(kutil_getpid_session(&o, c.pid, &k, &s, NULL), s);
	start_or_skip(s);
	kutil_child_go(&c);
	cr_assert_eq(kutil_child_wait(&c), 0);
	KCOUNT_EQ(perfring_session_parse_all(s), N);
	for (int cpu = 0; cpu < 64; cpu++)
		sum += k.per_cpu[cpu];
	KCOUNT_EQ(sum, N);
	perfring_session_free(s);
}

struct migrator { pid_t tid; volatile int ready, go; };

static void *migrate(void *arg)
{
	struct migrator *m = arg;

	m->tid = (pid_t)syscall(SYS_gettid);
	__atomic_store_n(&m->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&m->go, __ATOMIC_ACQUIRE))
		sched_yield();
	for (int i = 0; i < 20; i++) {
		kutil_pin(i % kutil_ncpu_online());
		kutil_getpid_n(N / 20);
	}
	return NULL;
}

Test(kernel_session, time_order_across_cpus)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256 };
	struct perfring_session *s;
	struct migrator m = { 0 };
	struct kcount k = { 0 };
	pthread_t t;

	cr_assert_eq(pthread_create(&t, NULL, migrate, &m), 0);
	while (!__atomic_load_n(&m.ready, __ATOMIC_ACQUIRE))
		sched_yield();
	KCHECK(kutil_getpid_session(&o, m.tid, &k, &s, NULL), s);
	start_or_skip(s);
	__atomic_store_n(&m.go, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	KCOUNT_EQ(perfring_session_parse_all(s), N);
	if (kutil_ncpu_online() > 1)
		cr_assert(k.per_cpu[0] > 0 && k.per_cpu[1] > 0, "the generator ran on both CPUs");
	cr_assert_eq(k.out_of_order, 0, "%llu records out of time order",
		     (unsigned long long)k.out_of_order);
	perfring_session_free(s);
}

struct writes { struct perfring_field count; uint64_t seen[64]; int n; };

static int on_write(const struct perfring_sample *smp, void *ctx)
{
	struct writes *w = ctx;
	uint64_t v;

	cr_assert_eq(perfring_field_uint(&w->count, smp, &v), 0);
	if (w->n < 64)
		w->seen[w->n] = v;
	w->n++;
	return 0;
}

Test(kernel_session, field_sys_enter_write_count)
{
	static const size_t sizes[] = { 1, 7, 100, 4096 };
	struct perfring_opts o = { .sz = sizeof(o) };
	struct perfring_session *s;
	struct perfring_event *ev;
	struct writes w = { 0 };
	static char buf[4096];
	char filter[64];
	int fd = open("/dev/null", O_WRONLY);

	cr_assert_geq(fd, 0);
	KCHECK(perfring_session_new(&o, &s), NULL);
	KCHECK(perfring_session_add_tracepoint(s, "syscalls", "sys_enter_write", &ev), s);
	cr_assert_eq(perfring_event_field(ev, "count", &w.count), 0);
	cr_assert_eq(perfring_event_field(ev, "no_such_field", &(struct perfring_field){ 0 }), -ENOENT);
	snprintf(filter, sizeof(filter), "common_pid == %d", (int)syscall(SYS_gettid));
	cr_assert_eq(perfring_event_set_filter(ev, filter), 0);
	cr_assert_eq(perfring_event_set_callback(ev, on_write, &w), 0);
	start_or_skip(s);
	for (size_t i = 0; i < 4; i++)
		cr_assert_eq(write(fd, buf, sizes[i]), (ssize_t)sizes[i]);
	KCOUNT_EQ(perfring_session_parse_all(s), 4);
	/* In order; valgrind's own writes may stand between them. */
	for (int i = 0, j = 0; i < 4; i++, j++) {
		while (kutil_under_valgrind() && j < w.n - 1 && j < 63 && w.seen[j] != sizes[i])
			j++;
		cr_assert_eq(w.seen[j], sizes[i], "write %d: count %llu", i,
			     (unsigned long long)w.seen[j]);
	}
	close(fd);
	perfring_session_free(s);
}

struct execs { struct perfring_field filename; char got[256]; int n; };

static int on_exec(const struct perfring_sample *smp, void *ctx)
{
	struct execs *e = ctx;
	const char *str;
	size_t len;

	cr_assert_eq(perfring_field_str(&e->filename, smp, &str, &len), 0);
	if (len < sizeof(e->got)) {
		memcpy(e->got, str, len);
		e->got[len] = '\0';
	}
	e->n++;
	return 0;
}

static int exec_true(void *arg)
{
	execl((const char *)arg, "true", (char *)NULL);
	return 127;
}

Test(kernel_session, field_data_loc_exec_filename)
{
	struct perfring_opts o = { .sz = sizeof(o) };
	struct perfring_session *s;
	struct perfring_event *ev;
	struct execs e = { 0 };
	struct kchild c;

	cr_assert_eq(kutil_child_start(&c, exec_true, (void *)"/bin/true"), 0);
	o.pid = c.pid;
	KCHECK(perfring_session_new(&o, &s), NULL);
	KCHECK(perfring_session_add_tracepoint(s, "sched", "sched_process_exec", &ev), s);
	cr_assert_eq(perfring_event_field(ev, "filename", &e.filename), 0);
	cr_assert(e.filename.flags & PERFRING_FIELD_DATA_LOC);
	cr_assert_eq(perfring_event_set_callback(ev, on_exec, &e), 0);
	start_or_skip(s);
	kutil_child_go(&c);
	cr_assert_eq(kutil_child_wait(&c), 0);
	cr_assert_eq(perfring_session_parse_all(s), 1);
	cr_assert_str_eq(e.got, "/bin/true");
	perfring_session_free(s);
}

struct task_log { pid_t child, grandchild; int fork, comm_exec, exit_child, exit_grand; };

static int on_record(const struct perfring_record *r, void *ctx)
{
	struct task_log *t = ctx;

	if (r->type == PERF_RECORD_FORK && (pid_t)r->u.task.ppid == t->child &&
	    r->u.task.pid != r->u.task.ppid) {
		t->fork++;
		t->grandchild = (pid_t)r->u.task.pid;
	} else if (r->type == PERF_RECORD_COMM && r->u.comm.exec &&
		   strcmp(r->u.comm.comm, "true") == 0) {
		t->comm_exec += (pid_t)r->u.comm.pid == t->grandchild;
	} else if (r->type == PERF_RECORD_EXIT && r->u.task.pid == r->u.task.tid) {
		t->exit_child += (pid_t)r->u.task.pid == t->child;
		t->exit_grand += (pid_t)r->u.task.pid == t->grandchild && t->grandchild;
	}
	return 0;
}

static int fork_exec_true(void *arg)
{
	int st;
	pid_t p = fork();

	if (p == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	return waitpid(p, &st, 0) == p && WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

Test(kernel_session, task_records_fork_comm_exit)
{
	struct perfring_opts o = { .sz = sizeof(o) };
	struct perfring_session *s;
	struct task_log t = { 0 };
	struct kchild c;

	cr_assert_eq(kutil_child_start(&c, fork_exec_true, NULL), 0);
	o.pid = t.child = c.pid;
	KCHECK(perfring_session_new(&o, &s), NULL);
	cr_assert_eq(perfring_session_set_record_callback(s, PERFRING_REC_COMM | PERFRING_REC_TASK,
							  on_record, &t), 0);
	start_or_skip(s);
	kutil_child_go(&c);
	cr_assert_eq(kutil_child_wait(&c), 0);
	cr_assert_eq(perfring_session_parse_all(s), 0, "no samples, only kernel records");
	cr_assert_eq(t.fork, 1);
	cr_assert_gt(t.grandchild, 0);
	cr_assert_eq(t.comm_exec, 1);
	cr_assert_eq(t.exit_grand, 1);
	cr_assert_eq(t.exit_child, 1);
	perfring_session_free(s);
}

struct lost_log { uint64_t lost; int records; };

static int on_lost(const struct perfring_record *r, void *ctx)
{
	struct lost_log *l = ctx;

	if (r->type == PERF_RECORD_LOST) {
		l->lost += r->u.lost.lost;
		l->records++;
	}
	return 0;
}

/* The kernel writes LOST only with the next record that fits, so the child
 * makes one more record, on the same CPU, after the parent drained the ring. */
struct two_phase { int up[2], down[2]; };

static int overflow_child(void *arg)
{
	struct two_phase *p = arg;
	char b = 0;

	/* One ring: a CPU's losses are reported only into its own ring. */
	if (kutil_pin(0))
		return 1;
	kutil_getpid_n(N);
	if (write(p->up[1], &b, 1) != 1 || read(p->down[0], &b, 1) != 1)
		return 1;
	kutil_getpid_n(1);
	return 0;
}

Test(kernel_session, overflow_delivered_plus_lost_is_exact)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 1 };
	struct perfring_cpu_stats st;
	struct perfring_session *s;
	struct lost_log l = { 0 };
	struct kcount k = { 0 };
	struct two_phase p;
	struct kchild c;
	uint64_t lost = 0;
	char b;

	cr_assert_eq(pipe(p.up), 0);
	cr_assert_eq(pipe(p.down), 0);
	cr_assert_eq(kutil_child_start(&c, overflow_child, &p), 0);
	o.pid = c.pid;
	KCHECK(kutil_getpid_session(&o, 0, &k, &s, NULL), s);
	cr_assert_eq(perfring_session_set_record_callback(s, 0, on_lost, &l), 0);
	start_or_skip(s);
	kutil_child_go(&c);
	cr_assert_eq(read(p.up[0], &b, 1), 1);
	perfring_session_parse_all(s);
	cr_assert_eq(write(p.down[1], &b, 1), 1);
	cr_assert_eq(kutil_child_wait(&c), 0);
	perfring_session_parse_all(s);
	cr_assert_gt(l.records, 0, "a LOST record reached the callback");
	cr_log_info("delivered %llu + lost %llu", (unsigned long long)k.n,
		    (unsigned long long)l.lost);
	KCOUNT_EQ(k.n + l.lost, N + 1);
	for (int cpu = 0; cpu < kutil_ncpu_online(); cpu++) {
		cr_assert_eq(perfring_session_cpu_stats(s, cpu, &st), 0);
		lost += st.lost;
	}
	cr_assert_eq(lost, l.lost, "stats agree with the LOST records");
	perfring_session_free(s);
}

Test(kernel_session, failed_start_rolls_back_every_fd)
{
	struct perf_event_attr bad = { .type = PERF_TYPE_SOFTWARE, .config = 1000,
				       .sample_period = 1 };
	struct perfring_opts o = { .sz = sizeof(o) };
	struct perfring_session *s;
	int before = kutil_fd_count(), err;

	KCHECK(perfring_session_new(&o, &s), NULL);
	KCHECK(perfring_session_add_tracepoint(s, "syscalls", "sys_enter_getpid", NULL), s);
	cr_assert_eq(perfring_session_add_attr(s, &bad, NULL), 0);
	err = perfring_session_start(s);
	cr_assert_lt(err, 0);
	cr_assert_eq(kutil_fd_count(), before, "fds leaked by a failed start");
	cr_assert(strstr(perfring_session_last_error(s), "perf_event_open attr:type=1,config=1000 on CPU"),
		  "sentence: %s", perfring_session_last_error(s));
	cr_assert_eq(perfring_session_fds(s, NULL), 0);
	perfring_session_free(s);
	cr_assert_eq(kutil_fd_count(), before);
}

static int unprivileged_open(void *arg)
{
	struct perfring_opts o = { .sz = sizeof(o) };
	struct perfring_session *s = NULL;
	struct passwd *pw = getpwnam("nobody");
	int err;

	(void)arg;
	if (!pw || setgid(pw->pw_gid) || setuid(pw->pw_uid))
		return 10;
	if (perfring_session_new(&o, &s))
		return 11;
	perfring_session_add_software(s, PERFRING_SW_CONTEXT_SWITCHES, 1, NULL);
	err = perfring_session_start(s);
	fprintf(stderr, "as nobody: %d: %s\n", err, perfring_session_last_error(s));
	if (err != -EACCES && err != -EPERM)
		return 12;
	if (!strstr(perfring_session_last_error(s), "perf_event_paranoid") ||
	    !strstr(perfring_session_last_error(s), "CAP_PERFMON"))
		return 13;
	perfring_session_free(s);
	return 0;
}

Test(kernel_session, permission_error_names_paranoid)
{
	struct kchild c;
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int paranoid = 2;

	cr_assert(f);
	cr_assert_eq(fscanf(f, "%d", &paranoid), 1);
	fclose(f);
	if (paranoid < 1)
		cr_skip_test("perf_event_paranoid is %d: unprivileged system-wide opens succeed",
			     paranoid);
	cr_assert_eq(kutil_child_start(&c, unprivileged_open, NULL), 0);
	kutil_child_go(&c);
	cr_assert_eq(kutil_child_wait(&c), 0, "see the .log for the sentence");
}

Test(kernel_session, stop_keeps_records_readable)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256 };
	struct perfring_session *s;
	struct kcount k = { 0 };

	KCHECK(kutil_getpid_session(&o, (pid_t)syscall(SYS_gettid), &k, &s, NULL), s);
	start_or_skip(s);
	kutil_getpid_n(100);
	cr_assert_eq(perfring_session_stop(s), 0);
	kutil_getpid_n(50);
	cr_assert_eq(perfring_session_parse_all(s), 100);
	cr_assert_eq(perfring_session_stop(s), -EINVAL, "stop twice");
	perfring_session_free(s);
}

struct faults { uintptr_t lo, hi; int in_range, total; };

static int on_fault(const struct perfring_sample *smp, void *ctx)
{
	struct faults *f = ctx;

	f->total++;
	f->in_range += smp->addr >= f->lo && smp->addr < f->hi;
	return 0;
}

Test(kernel_session, page_faults_exact_by_address)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_PAGE_FAULTS,
				     .sample_period = 1, .sample_type = PERF_SAMPLE_ADDR };
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 64 };
	struct perfring_session *s;
	struct perfring_event *ev;
	struct faults f = { 0 };
	long page = sysconf(_SC_PAGESIZE);
	const int pages = 500;
	char *m;

	o.pid = getpid();
	KCHECK(perfring_session_new(&o, &s), NULL);
	cr_assert_eq(perfring_session_add_attr(s, &a, &ev), 0);
	cr_assert_eq(perfring_event_set_callback(ev, on_fault, &f), 0);
	m = mmap(NULL, (size_t)page * pages, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(m, MAP_FAILED);
	f.lo = (uintptr_t)m;
	f.hi = f.lo + (uintptr_t)page * pages;
	start_or_skip(s);
	for (int i = 0; i < pages; i++)
		m[(long)i * page] = 1;
	perfring_session_stop(s);
	perfring_session_parse_all(s);
	cr_assert_eq(f.in_range, pages, "%d faults in the region", f.in_range);
	munmap(m, (size_t)page * pages);
	perfring_session_free(s);
}

struct prof { int n, with_chain, with_ip; };

static int on_prof(const struct perfring_sample *smp, void *ctx)
{
	struct prof *p = ctx;

	p->n++;
	p->with_chain += smp->callchain_nr > 0;
	p->with_ip += smp->ip != 0;
	return 0;
}

Test(kernel_session, cpu_clock_profiling_with_callchains)
{
	struct perfring_software_opts so = { .sz = sizeof(so), .freq = 1000, .callchain = 1 };
	struct perfring_opts o = { .sz = sizeof(o) };
	struct perfring_session *s;
	struct perfring_event *ev;
	struct prof p = { 0 };
	uint64_t end;
	volatile uint64_t x = 0;

	o.pid = getpid();
	KCHECK(perfring_session_new(&o, &s), NULL);
	KCHECK(perfring_session_add_software_opts(s, PERFRING_SW_CPU_CLOCK, &so, &ev), s);
	cr_assert(perfring_event_attr(ev)->freq);
	cr_assert_eq(perfring_event_set_callback(ev, on_prof, &p), 0);
	start_or_skip(s);
	end = kutil_now_ns() + 300000000ull;
	while (kutil_now_ns() < end)
		x++;
	perfring_session_stop(s);
	perfring_session_parse_all(s);
	cr_assert_gt(p.n, 10, "%d samples in 300 ms of spinning at 1 kHz", p.n);
	cr_assert_eq(p.with_chain, p.n);
	cr_assert_eq(p.with_ip, p.n);
	perfring_session_free(s);
}

static int on_any(const struct perfring_sample *smp, void *ctx)
{
	(void)smp;
	(*(int *)ctx)++;
	return 0;
}

Test(kernel_session, context_switches_and_migrations)
{
	struct perfring_opts o = { .sz = sizeof(o) };
	struct perfring_session *s;
	struct perfring_event *cs, *mig;
	int ncs = 0, nmig = 0;

	KCHECK(perfring_session_new(&o, &s), NULL);
	KCHECK(perfring_session_add_software(s, PERFRING_SW_CONTEXT_SWITCHES, 1, &cs), s);
	KCHECK(perfring_session_add_software(s, PERFRING_SW_CPU_MIGRATIONS, 1, &mig), s);
	perfring_event_set_callback(cs, on_any, &ncs);
	perfring_event_set_callback(mig, on_any, &nmig);
	start_or_skip(s);
	for (int i = 0; i < 20; i++) {
		kutil_pin(i % kutil_ncpu_online());
		usleep(1000);
	}
	perfring_session_stop(s);
	perfring_session_parse_all(s);
	cr_assert_geq(ncs, 20, "%d context switches", ncs);
	if (kutil_ncpu_online() > 1)
		cr_assert_gt(nmig, 0, "%d migrations", nmig);
	perfring_session_free(s);
}
