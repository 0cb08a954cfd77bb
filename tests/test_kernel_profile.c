/* SPDX-License-Identifier: MIT */
/* Profiler data on the real kernel: user registers and stack bytes of a
 * cpu-clock profile, and a group's counters read in every sample. */
#include "kutil.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <linux/bpf.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define CANARY 0x6b1d5ca1ab1e0ddull
#define WANT 5
#define GIVE_UP_NS (20ull * 1000000000)

struct spinner {
	volatile uint64_t *volatile canary; /* where the spinning frame keeps it */
	volatile int tid;
	volatile int stop;
	volatile uint64_t sink;
};

static __attribute__((noinline)) void mix(struct spinner *sp, volatile uint64_t *canary)
{
	sp->sink = sp->sink * 6364136223846793005ull + *canary;
}

/* The canary lives in this frame for as long as it spins. The call keeps
 * the frame above SP (a leaf may keep locals in the red zone below it). */
static __attribute__((noinline)) void spin_with_canary(struct spinner *sp)
{
	volatile uint64_t canary = CANARY;

	sp->canary = &canary;
	while (!sp->stop)
		mix(sp, &canary);
	sp->canary = NULL;
}

static void *spin_main(void *arg)
{
	struct spinner *sp = arg;

	sp->tid = (int)syscall(SYS_gettid);
	spin_with_canary(sp);
	return NULL;
}

struct canary_seen {
	struct spinner *sp;
	int samples, found, bad;
	char why[200];
};

static int on_profile(const struct perfring_sample *s, void *ctx)
{
	struct canary_seen *c = ctx;
	uint64_t bp, sp, ip, at = (uint64_t)(uintptr_t)c->sp->canary;

	if ((int)s->tid != c->sp->tid || !s->regs_user_abi || !at)
		return 0;
	c->samples++;
	if (s->regs_user_abi != PERF_SAMPLE_REGS_ABI_64 || s->regs_user_nr != 3) {
		c->bad++;
		snprintf(c->why, sizeof(c->why), "abi %llu nr %u",
			 (unsigned long long)s->regs_user_abi, s->regs_user_nr);
		return 0;
	}
	bp = s->regs_user[0]; /* 0 where the build omits frame pointers */
	sp = s->regs_user[1];
	ip = s->regs_user[2];
	(void)bp;
	if (ip != s->ip || s->stack_user_size != 4096 || s->stack_user_dyn_size > 4096) {
		c->bad++;
		snprintf(c->why, sizeof(c->why), "ip %#llx vs %#llx, stack %llu/%llu",
			 (unsigned long long)ip, (unsigned long long)s->ip,
			 (unsigned long long)s->stack_user_dyn_size,
			 (unsigned long long)s->stack_user_size);
		return 0;
	}
	if (at >= sp && at + 8 <= sp + s->stack_user_dyn_size &&
	    !memcmp(s->stack_user + (at - sp), &(uint64_t){ CANARY }, 8))
		c->found++;
	return 0;
}

#if defined(__x86_64__)
Test(kernel_profile, regs_user_and_stack_user_hold_the_canary)
{
	struct perfring_software_opts so = { .sz = sizeof(so), .period = 200000,
					     .exclude_kernel = 1, .stack_user = 4096 };
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .pid = getpid() };
	struct spinner sp = { 0 };
	struct canary_seen c = { .sp = &sp };
	struct perfring_session *s;
	struct perfring_event *ev;
	uint64_t t0;
	pthread_t th;

	KCHECK(perfring_session_new(&o, &s), NULL);
	cr_assert_eq(perfring_session_add_software_opts(s, PERFRING_SW_CPU_CLOCK, &so, &ev), 0,
		     "%s", perfring_session_last_error(s));
	cr_assert_eq(perfring_event_attr(ev)->sample_regs_user, PERFRING_REGS_USER_DEFAULT);
	cr_assert_eq(perfring_event_set_callback(ev, on_profile, &c), 0);
	cr_assert_eq(pthread_create(&th, NULL, spin_main, &sp), 0);
	t0 = kutil_now_ns();
	while (!sp.canary && kutil_now_ns() - t0 < GIVE_UP_NS)
		sched_yield();
	cr_assert_not_null(sp.canary);
	KCHECK(perfring_session_start(s), s);
	t0 = kutil_now_ns();
	while (c.found < WANT && !c.bad && kutil_now_ns() - t0 < GIVE_UP_NS) {
		cr_assert_geq(perfring_session_parse_all(s), 0);
		usleep(5000);
	}
	sp.stop = 1;
	pthread_join(th, NULL);
	perfring_session_free(s);
	cr_assert_eq(c.bad, 0, "%s", c.why);
	cr_assert_geq(c.found, WANT, "%d of %d samples of the spinner held the canary at SP's offset",
		      c.found, c.samples);
}
#endif

/* ------------------------------------------------------ group reads */

struct group_seen {
	struct perfring_session *s;
	struct perfring_event *leader, *member;
	int samples, bad;
	uint64_t last[2], last_enabled;
	char why[200];
};

static int on_group(const struct perfring_sample *s, void *ctx)
{
	struct group_seen *g = ctx;
	struct perfring_read_value v[2];

	g->samples++;
	if (s->read_nr != 2 || perfring_sample_read_value(s, 0, &v[0]) ||
	    perfring_sample_read_value(s, 1, &v[1])) {
		g->bad++;
		snprintf(g->why, sizeof(g->why), "read_nr %u", s->read_nr);
		return 0;
	}
	if (perfring_session_event_of_id(g->s, s->cpu, v[0].id) != g->leader ||
	    perfring_session_event_of_id(g->s, s->cpu, v[1].id) != g->member || v[0].id != s->id) {
		g->bad++;
		snprintf(g->why, sizeof(g->why), "ids %llu %llu (sample %llu) are not the events'",
			 (unsigned long long)v[0].id, (unsigned long long)v[1].id,
			 (unsigned long long)s->id);
		return 0;
	}
	if (v[0].value < g->last[0] || v[1].value < g->last[1] ||
	    s->time_enabled < g->last_enabled || !s->time_running) {
		g->bad++;
		snprintf(g->why, sizeof(g->why), "values went back: %llu<%llu or %llu<%llu",
			 (unsigned long long)v[0].value, (unsigned long long)g->last[0],
			 (unsigned long long)v[1].value, (unsigned long long)g->last[1]);
	}
	g->last[0] = v[0].value;
	g->last[1] = v[1].value;
	g->last_enabled = s->time_enabled;
	return 0;
}

/* The spin's sink: a global, so no compiler calls it set but unused. */
static volatile uint64_t group_spin;

Test(kernel_profile, group_read_of_cpu_clock_and_task_clock)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 64, .pid = getpid() };
	struct perf_event_attr lead = {
		.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 1000000, .sample_type = PERF_SAMPLE_READ,
		.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
			       PERF_FORMAT_TOTAL_TIME_RUNNING,
	};
	struct perf_event_attr memb = { .type = PERF_TYPE_SOFTWARE,
					.config = PERF_COUNT_SW_TASK_CLOCK };
	struct group_seen g = { 0 };
	uint64_t t0;

	cr_assert_eq(kutil_pin(0), 0);
	KCHECK(perfring_session_new(&o, &g.s), NULL);
	cr_assert_eq(perfring_session_add_attr(g.s, &lead, &g.leader), 0);
	cr_assert_eq(perfring_session_add_attr(g.s, &memb, &g.member), 0);
	cr_assert_eq(perfring_event_set_group(g.leader, g.leader), -EINVAL);
	cr_assert_eq(perfring_event_set_group(g.member, g.leader), 0,
		     "%s", perfring_session_last_error(g.s));
	cr_assert_eq(perfring_event_set_group(g.leader, g.member), -EINVAL);
	cr_assert_eq(perfring_event_set_callback(g.leader, on_group, &g), 0);
	KCHECK(perfring_session_start(g.s), g.s);
	cr_assert_eq(perfring_event_set_group(g.member, g.leader), -EBUSY);
	t0 = kutil_now_ns();
	while (g.samples < 20 && kutil_now_ns() - t0 < GIVE_UP_NS) {
		for (int i = 0; i < 1000000; i++)
			group_spin += (uint64_t)i;
		cr_assert_geq(perfring_session_parse_all(g.s), 0);
	}
	perfring_session_free(g.s);
	cr_assert_eq(g.bad, 0, "%s", g.why);
	cr_assert_geq(g.samples, 20);
	cr_assert_gt(g.last[0], 0);
	cr_assert_gt(g.last[1], 0);
}

/* ---------------------------------------- KSYMBOL and BPF_EVENT records */

#define PROG_NAME "prtest_ksym"

/* A socket filter of two raw instructions, r0 = 0; exit. */
static int prog_load(void)
{
	struct bpf_insn insns[2] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = 2;
	a.license = (uint64_t)(uintptr_t)"GPL";
	memcpy(a.prog_name, PROG_NAME, sizeof(PROG_NAME));
	return (int)syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof(a));
}

static int prog_info(int fd, struct bpf_prog_info *info)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	memset(info, 0, sizeof(*info));
	a.info.bpf_fd = (uint32_t)fd;
	a.info.info_len = sizeof(*info);
	a.info.info = (uint64_t)(uintptr_t)info;
	return (int)syscall(SYS_bpf, BPF_OBJ_GET_INFO_BY_FD, &a, sizeof(a));
}

struct bpf_seen {
	struct bpf_prog_info info;
	int load, unload, ksym_reg, ksym_unreg;
	uint64_t ksym_addr;
};

static int on_bpf_record(const struct perfring_record *r, void *ctx)
{
	struct bpf_seen *b = ctx;

	if (r->type == PERF_RECORD_BPF_EVENT && r->u.bpf_event.id == b->info.id &&
	    !memcmp(r->u.bpf_event.tag, b->info.tag, BPF_TAG_SIZE)) {
		b->load += r->u.bpf_event.type == PERF_BPF_EVENT_PROG_LOAD;
		b->unload += r->u.bpf_event.type == PERF_BPF_EVENT_PROG_UNLOAD;
	}
	if (r->type == PERF_RECORD_KSYMBOL && strstr(r->u.ksymbol.name, "_" PROG_NAME) &&
	    r->u.ksymbol.ksym_type == PERF_RECORD_KSYMBOL_TYPE_BPF) {
		if (r->u.ksymbol.flags & PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER) {
			b->ksym_unreg += r->u.ksymbol.addr == b->ksym_addr;
		} else {
			b->ksym_reg++;
			b->ksym_addr = r->u.ksymbol.addr;
		}
	}
	return 0;
}

Test(kernel_profile, bpf_load_and_close_give_ksymbol_and_bpf_event)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 64 };
	struct perfring_session *s;
	struct bpf_seen b = { 0 };
	uint64_t t0;
	int fd;

	KCHECK(perfring_session_new(&o, &s), NULL);
	cr_assert_eq(perfring_session_set_record_callback(s, PERFRING_REC_KSYMBOL |
							  PERFRING_REC_BPF_EVENT,
							  on_bpf_record, &b), 0);
	KCHECK(perfring_session_start(s), s);
	fd = prog_load();
	cr_assert_geq(fd, 0, "BPF_PROG_LOAD: %s", strerror(errno));
	cr_assert_eq(prog_info(fd, &b.info), 0, "BPF_OBJ_GET_INFO_BY_FD: %s", strerror(errno));
	close(fd);
	t0 = kutil_now_ns();
	do {
		cr_assert_geq(perfring_session_parse_all(s), 0);
		if (b.unload && b.ksym_unreg)
			break;
		usleep(10000);
	} while (kutil_now_ns() - t0 < GIVE_UP_NS);
	perfring_session_free(s);
	cr_assert_eq(b.load, 1, "program %u: %d loads", b.info.id, b.load);
	cr_assert_eq(b.unload, 1, "program %u: %d unloads", b.info.id, b.unload);
	cr_assert_eq(b.ksym_reg, 1, "%d ksymbols named *_%s", b.ksym_reg, PROG_NAME);
	cr_assert_eq(b.ksym_unreg, 1, "%d unregistered", b.ksym_unreg);
}

/* ------------------------------------------------------ cgroup scope */

#define IN_CALLS 1000
#define OUT_CALLS 700

static struct {
	char dir[512], rel[64];
	struct kchild in, out;
	bool made;
} cg = { .in = { .pid = -1 }, .out = { .pid = -1 } };

/* The mount point of the first filesystem of type `want`, from /proc/self/mounts. */
static int mount_of_type(const char *want, char *dir, size_t len)
{
	char line[1024], mdir[512], type[64];
	FILE *f = fopen("/proc/self/mounts", "r");
	int found = 0;

	while (f && !found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %511s %63s", mdir, type) == 2 && !strcmp(type, want) &&
		    strlen(mdir) < len) {
			strcpy(dir, mdir);
			found = 1;
		}
	if (f)
		fclose(f);
	return found ? 0 : -ENOENT;
}

static int cgroup2_mount(char *dir, size_t len)
{
	return mount_of_type("cgroup2", dir, len);
}

static void reap(struct kchild *c)
{
	if (c->pid <= 0)
		return;
	kill(c->pid, SIGKILL);
	waitpid(c->pid, NULL, 0);
	c->pid = -1;
}

/* Runs after the test whatever its outcome: no child, no cgroup left. */
static void cg_cleanup(void)
{
	reap(&cg.in);
	reap(&cg.out);
	if (cg.made && rmdir(cg.dir) == 0)
		cg.made = false;
}

static int getpid_calls(void *arg)
{
	kutil_getpid_n((long)(intptr_t)arg);
	return 0;
}

static int move_into(const char *dir, pid_t pid)
{
	char f[600];
	FILE *fp;
	int ok;

	snprintf(f, sizeof(f), "%s/cgroup.procs", dir);
	if (!(fp = fopen(f, "w")))
		return -errno;
	ok = fprintf(fp, "%d\n", (int)pid) > 0;
	return fclose(fp) == 0 && ok ? 0 : -EIO;
}

static long tracepoint_id(const char *sys, const char *name)
{
	char f[256];
	long id = -1;
	FILE *fp;

	snprintf(f, sizeof(f), "/sys/kernel/tracing/events/%s/%s/id", sys, name);
	if ((fp = fopen(f, "r"))) {
		if (fscanf(fp, "%ld", &id) != 1)
			id = -1;
		fclose(fp);
	}
	return id;
}

struct cg_seen {
	pid_t in, out;
	int in_n, out_n, bad_id;
	uint64_t want_id, rec_id;
	char rec_path[80];
};

static int on_cg_sample(const struct perfring_sample *s, void *ctx)
{
	struct cg_seen *c = ctx;

	if ((pid_t)s->pid == c->in) {
		c->in_n++;
		c->bad_id += s->cgroup != c->want_id;
	} else if ((pid_t)s->pid == c->out) {
		c->out_n++;
	}
	return 0;
}

static int on_cg_record(const struct perfring_record *r, void *ctx)
{
	struct cg_seen *c = ctx;

	if (r->type == PERF_RECORD_CGROUP && !strcmp(r->u.cgroup.path, c->rec_path))
		c->rec_id = r->u.cgroup.id;
	return 0;
}

Test(kernel_profile, cgroup_scope_sees_only_its_tasks, .fini = cg_cleanup)
{
	struct perfring_opts wide = { .sz = sizeof(wide) };
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256 };
	struct perf_event_attr a = { .type = PERF_TYPE_TRACEPOINT, .sample_period = 1,
				     .sample_type = PERF_SAMPLE_RAW | PERF_SAMPLE_CGROUP };
	struct perfring_session *s, *w;
	struct perfring_event *ev;
	struct cg_seen c = { 0 };
	char mnt[256];
	struct stat st;
	long id = tracepoint_id("syscalls", "sys_enter_getpid");

	cr_assert_gt(id, 0, "syscalls:sys_enter_getpid has no id in tracefs");
	if (cgroup2_mount(mnt, sizeof(mnt)))
		cr_skip_test("no cgroup v2 hierarchy is mounted (/proc/self/mounts has no cgroup2; "
			     "mount -t cgroup2 none /sys/fs/cgroup)");
	snprintf(cg.rel, sizeof(cg.rel), "prtest.%d", (int)getpid());
	snprintf(cg.dir, sizeof(cg.dir), "%s/%s", mnt, cg.rel);
	snprintf(c.rec_path, sizeof(c.rec_path), "/%s", cg.rel);
	/* A session that is not scoped sees the cgroup made. */
	KCHECK(perfring_session_new(&wide, &w), NULL);
	cr_assert_eq(perfring_session_set_record_callback(w, PERFRING_REC_CGROUP, on_cg_record,
							  &c), 0);
	KCHECK(perfring_session_start(w), w);
	cr_assert_eq(mkdir(cg.dir, 0755), 0, "mkdir %s: %s", cg.dir, strerror(errno));
	cg.made = true;
	cr_assert_eq(perfring_session_parse_all(w), 0);
	perfring_session_free(w);
	cr_assert_eq(stat(cg.dir, &st), 0);
	c.want_id = st.st_ino;
	cr_assert_eq(c.rec_id, c.want_id, "CGROUP record of %s: id %llu, the directory's inode %llu",
		     c.rec_path, (unsigned long long)c.rec_id, (unsigned long long)c.want_id);

	o.cgroup = cg.rel;
	KCHECK(perfring_session_new(&o, &s), NULL);
	a.config = (uint64_t)id;
	cr_assert_eq(perfring_session_add_attr(s, &a, &ev), 0, "%s", perfring_session_last_error(s));
	cr_assert_eq(perfring_event_set_callback(ev, on_cg_sample, &c), 0);
	cr_assert_eq(kutil_child_start(&cg.in, getpid_calls, (void *)(intptr_t)IN_CALLS), 0);
	cr_assert_eq(kutil_child_start(&cg.out, getpid_calls, (void *)(intptr_t)OUT_CALLS), 0);
	c.in = cg.in.pid;
	c.out = cg.out.pid;
	cr_assert_eq(move_into(cg.dir, cg.in.pid), 0);
	KCHECK(perfring_session_start(s), s);
	kutil_child_go(&cg.in);
	kutil_child_go(&cg.out);
	cr_assert_eq(kutil_child_wait(&cg.in), 0);
	cr_assert_eq(kutil_child_wait(&cg.out), 0);
	cg.in.pid = cg.out.pid = -1;
	cr_assert_geq(perfring_session_parse_all(s), 0);
	perfring_session_free(s);
	KCOUNT_EQ(c.in_n, IN_CALLS);
	cr_assert_eq(c.out_n, 0, "%d samples of the process outside the cgroup", c.out_n);
	cr_assert_eq(c.bad_id, 0, "%d samples with another cgroup id than %llu", c.bad_id,
		     (unsigned long long)c.want_id);
}

/* None of these needs a cgroup v2 mount: the paths are absolute. */
Test(kernel_profile, cgroup_errors_name_the_path)
{
	struct perfring_opts o = { .sz = sizeof(o), .cgroup = "/tmp" };
	struct perfring_session *s = NULL;

	cr_assert_eq(perfring_session_new(&o, &s), -EINVAL);
	cr_assert_not_null(strstr(perfring_session_last_error(NULL), "/tmp is not a cgroup v2"),
			   "%s", perfring_session_last_error(NULL));
	o.cgroup = "/";
	o.pid = getpid();
	cr_assert_eq(perfring_session_new(&o, &s), -EINVAL);
	cr_assert_not_null(strstr(perfring_session_last_error(NULL), "opts.pid"));
	o.pid = 0;
	/* The CPU set of a following session is made before the cgroup is
	 * looked at: its failure frees it (LeakSanitizer in the sanitizer trees). */
	o.cgroup = "/nonexistent/prtest-no-such-cgroup.slice";
	o.follow_hotplug = 1;
	cr_assert_eq(perfring_session_new(&o, &s), -ENOENT);
	cr_assert_null(s);
	cr_assert_not_null(strstr(perfring_session_last_error(NULL), o.cgroup), "%s",
			   perfring_session_last_error(NULL));
	o.follow_hotplug = 0;
	o.cgroup = "";
	cr_assert_eq(perfring_session_new(&o, &s), -EINVAL);
}

Test(kernel_profile, cgroup_relative_path_missing_names_it)
{
	struct perfring_opts o = { .sz = sizeof(o), .cgroup = "prtest-no-such-cgroup.slice" };
	struct perfring_session *s = NULL;
	char mnt[256];

	if (cgroup2_mount(mnt, sizeof(mnt)))
		cr_skip_test("no cgroup v2 hierarchy is mounted (/proc/self/mounts has no cgroup2; "
			     "mount -t cgroup2 none /sys/fs/cgroup)");
	cr_assert_eq(perfring_session_new(&o, &s), -ENOENT);
	cr_assert_null(s);
	cr_assert_not_null(strstr(perfring_session_last_error(NULL), "prtest-no-such-cgroup.slice"),
			   "%s", perfring_session_last_error(NULL));
}

static char fake_cg[64], fake_ctl[96];

static void fake_cg_cleanup(void)
{
	if (fake_ctl[0])
		unlink(fake_ctl);
	if (fake_cg[0])
		rmdir(fake_cg);
}

/* The cgroup v1 mount point of a hierarchy, if one is mounted. */
static int cgroup1_mount(char *dir, size_t len)
{
	return mount_of_type("cgroup", dir, len);
}

/* A directory outside cgroup v2 is refused at perfring_session_new, even
 * one holding a file named cgroup.controllers (perf_event_open would
 * refuse its fd only at start, with EBADF), and so is a v1 hierarchy. */
Test(kernel_profile, cgroup_outside_cgroup2_is_refused_at_new, .fini = fake_cg_cleanup)
{
	struct perfring_opts o = { .sz = sizeof(o), .cgroup = fake_cg };
	struct perfring_session *s = NULL;
	char v1[512];
	FILE *f;

	snprintf(fake_cg, sizeof(fake_cg), "/tmp/prtest-cgroup.XXXXXX");
	cr_assert_not_null(mkdtemp(fake_cg));
	snprintf(fake_ctl, sizeof(fake_ctl), "%s/cgroup.controllers", fake_cg);
	cr_assert_not_null(f = fopen(fake_ctl, "w"));
	fputs("cpu io memory pids\n", f);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(perfring_session_new(&o, &s), -EINVAL, "%s",
		     s ? "the session was made" : perfring_session_last_error(NULL));
	cr_assert_null(s);
	cr_assert_not_null(strstr(perfring_session_last_error(NULL), fake_cg), "%s",
			   perfring_session_last_error(NULL));
	cr_assert_not_null(strstr(perfring_session_last_error(NULL), "not a cgroup v2"));
	if (cgroup1_mount(v1, sizeof(v1)) == 0) {
		o.cgroup = v1;
		cr_assert_eq(perfring_session_new(&o, &s), -EINVAL, "%s", v1);
		cr_assert_not_null(strstr(perfring_session_last_error(NULL), "cgroup v1"), "%s",
				   perfring_session_last_error(NULL));
	}
	perfring_session_free(s);
}

/* ------------------------------------------------------------ uprobes */

#define UPROBE_CALLS 777

struct up_seen {
	pid_t pid;
	struct perfring_event *entry, *ret;
	int entries, returns;
	uint64_t entry_ip_min, entry_ip_max;
};

static int on_uprobe(const struct perfring_sample *s, void *ctx)
{
	struct up_seen *u = ctx;

	if ((pid_t)s->pid != u->pid)
		return 0;
	if (s->event == u->entry)
		u->entries++;
	else if (s->event == u->ret)
		u->returns++;
	return 0;
}

/* The lines of uprobe_events naming path (tracefs is not written: none). */
static int uprobe_events_naming(const char *path)
{
	char line[1024];
	FILE *f = fopen("/sys/kernel/tracing/uprobe_events", "r");
	int n = 0;

	while (f && fgets(line, sizeof(line), f))
		n += strstr(line, path) != NULL;
	if (f)
		fclose(f);
	return n;
}

static void target_path(char *path, size_t len)
{
	const char *top = getenv("top_builddir");
	char rel[512];

	snprintf(rel, sizeof(rel), "%s/tests/uprobe_target", top ? top : ".");
	cr_assert_not_null(realpath(rel, path), "%s: %s", rel, strerror(errno));
	(void)len;
}

Test(kernel_profile, uprobe_and_uretprobe_count_every_call)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256 };
	struct perfring_session *s;
	struct up_seen u = { 0 };
	char path[PATH_MAX], n[16];
	uint64_t off;
	pid_t pid;
	int status;

	target_path(path, sizeof(path));
	cr_assert_eq(perfring_uprobe_offset(path, "prtest_uprobe_fn", &off), 0, "%s",
		     perfring_session_last_error(NULL));
	cr_assert_eq(perfring_uprobe_offset(path, "prtest_no_such_fn", &off), -ENOENT);
	cr_assert_eq(perfring_uprobe_offset(path, "prtest_uprobe_fn", &off), 0);
	KCHECK(perfring_session_new(&o, &s), NULL);
	cr_assert_eq(perfring_session_add_uprobe(s, path, off, false, &u.entry), 0, "%s",
		     perfring_session_last_error(s));
	cr_assert_eq(perfring_session_add_uprobe(s, path, off, true, &u.ret), 0, "%s",
		     perfring_session_last_error(s));
	cr_assert_eq(perfring_event_set_callback(u.entry, on_uprobe, &u), 0);
	cr_assert_eq(perfring_event_set_callback(u.ret, on_uprobe, &u), 0);
	KCHECK(perfring_session_start(s), s);
	cr_assert_eq(uprobe_events_naming(path), 0);
	snprintf(n, sizeof(n), "%d", UPROBE_CALLS);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		execl(path, path, n, (char *)NULL);
		_exit(127);
	}
	u.pid = pid;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
	cr_assert_geq(perfring_session_parse_all(s), 0);
	perfring_session_free(s);
	cr_assert_eq(u.entries, UPROBE_CALLS);
	cr_assert_eq(u.returns, UPROBE_CALLS);
	cr_assert_eq(uprobe_events_naming(path), 0);
}
