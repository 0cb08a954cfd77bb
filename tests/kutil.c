#include "kutil.h"

#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <pthread.h>
#include <unistd.h>

int kutil_unavailable(int err)
{
	return err == -EACCES || err == -EPERM || err == -ENOSYS || err == -ENOENT;
}

int kutil_under_valgrind(void)
{
	return getenv("PERFRING_UNDER_VALGRIND") != NULL;
}

void kutil_getpid_n(long n)
{
	for (long i = 0; i < n; i++)
		syscall(SYS_getpid);
}

int kutil_pinned_getpid(void *arg)
{
	const struct kpinned *p = arg;

	if (kutil_pin(p->cpu))
		return 1;
	kutil_getpid_n(p->n);
	return 0;
}

struct leader { const struct kleader *l; int go, tid; };

static void *leader_worker(void *arg)
{
	const struct leader *w = arg;
	struct timespec ts = { 0, (long)w->l->ms * 1000000L / 20 };
	pid_t tid = (pid_t)syscall(SYS_gettid);
	char b;

	if (write(w->tid, &tid, sizeof(tid)) != sizeof(tid) || read(w->go, &b, 1) != 1)
		return NULL;
	for (long i = 0; i < w->l->n; i++) {
		syscall(SYS_getpid);
		if (w->l->n >= 20 && i % (w->l->n / 20) == 0)
			nanosleep(&ts, NULL);
	}
	/* No exit handlers: a sanitizer's would make getpid calls of its own. */
	_exit(0);
}

/* Both threads exist before the session starts (it lists them), and the
 * main thread exits at go: its fds report HUP while the worker writes. */
int kutil_leader_start(struct kchild *c, struct kleader *l)
{
	static struct leader w;
	int go[2], p[2], tid[2];
	pthread_t t;
	char b;

	if (pipe(go) < 0 || pipe(tid) < 0 || (c->pid = fork()) < 0)
		return -errno;
	if (c->pid == 0) {
		close(go[1]);
		w = (struct leader){ l, -1, tid[1] };
		if (pipe(p) || (w.go = p[0], pthread_create(&t, NULL, leader_worker, &w)) ||
		    read(go[0], &b, 1) != 1 || write(p[1], "g", 1) != 1)
			_exit(127);
		pthread_exit(NULL); /* the process lives on in the worker, and exits 0 */
	}
	close(go[0]);
	close(tid[1]);
	c->go_fd = go[1];
	if (read(tid[0], &l->worker, sizeof(l->worker)) != sizeof(l->worker))
		l->worker = -1;
	close(tid[0]);
	return l->worker > 0 && kutil_thread_count(c->pid) == 2 ? 0 : -ESRCH;
}

int kutil_thread_count(pid_t pid)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(dir = opendir(path)))
		return -1;
	while ((d = readdir(dir)))
		n += d->d_name[0] != '.';
	closedir(dir);
	return n;
}

struct perfring_cpu_stats kutil_stats(const struct perfring_session *s)
{
	struct perfring_cpu_stats sum = { 0 }, st;
	const struct perfring_cpu_fd *fds;
	size_t n = perfring_session_fds(s, &fds);

	for (size_t i = 0; i < n; i++) {
		if (perfring_session_cpu_stats(s, fds[i].cpu, &st))
			continue;
		sum.records += st.records;
		sum.bytes += st.bytes;
		sum.lost += st.lost;
		sum.corrupt += st.corrupt;
		sum.wakeups += st.wakeups;
		sum.samples += st.samples;
		sum.late += st.late;
		sum.unknown += st.unknown;
		sum.flushes += st.flushes;
		sum.overwritten += st.overwritten;
		sum.max_fill_pct = st.max_fill_pct > sum.max_fill_pct ? st.max_fill_pct : sum.max_fill_pct;
		sum.hup |= st.hup;
	}
	return sum;
}

int kutil_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* Defined only when the test runs with LeakSanitizer. */
extern int __lsan_do_recoverable_leak_check(void) __attribute__((weak));

int kutil_leak_check_on(void)
{
	return __lsan_do_recoverable_leak_check != NULL;
}

int kutil_leak_found(void)
{
	static int seen;

	if (seen || !kutil_leak_check_on())
		return 0;
	seen = __lsan_do_recoverable_leak_check() != 0;
	return seen;
}

int kutil_fd_snapshot(struct kfdset *fs)
{
	char path[64];
	struct dirent *e;
	DIR *d = opendir("/proc/self/fd");
	ssize_t n;
	int fd;

	memset(fs, 0, sizeof(*fs));
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		fd = atoi(e->d_name);
		if (e->d_name[0] == '.' || fd == dirfd(d) || fd >= KUTIL_FD_MAX)
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, fs->target[fd], sizeof(fs->target[fd]) - 1);
		fs->target[fd][n > 0 ? n : 0] = '\0';
		if (n <= 0)
			strcpy(fs->target[fd], "?");
		fs->n++;
	}
	closedir(d);
	return 0;
}

int kutil_fd_changed(const struct kfdset *before, char *why, size_t len)
{
	struct kfdset now;
	int fd;

	if (kutil_fd_snapshot(&now)) {
		snprintf(why, len, "cannot list /proc/self/fd");
		return 0;
	}
	for (fd = 0; fd < KUTIL_FD_MAX; fd++)
		if (strcmp(before->target[fd], now.target[fd]) != 0)
			break;
	if (fd == KUTIL_FD_MAX)
		return -1;
	snprintf(why, len, "fd %d was \"%s\" and is now \"%s\" (%d fds before, %d now)", fd,
		 before->target[fd], now.target[fd], before->n, now.n);
	return fd;
}

int kutil_fd_count(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the DIR's own fd */
}

uint64_t kutil_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int kutil_ncpu_online(void)
{
	return (int)sysconf(_SC_NPROCESSORS_ONLN);
}

int kutil_child_start(struct kchild *c, int (*fn)(void *), void *arg)
{
	int p[2];
	char b;

	if (pipe(p) < 0)
		return -errno;
	c->pid = fork();
	if (c->pid < 0)
		return -errno;
	if (c->pid == 0) {
		close(p[1]);
		if (read(p[0], &b, 1) != 1)
			_exit(127);
		_exit(fn(arg));
	}
	close(p[0]);
	c->go_fd = p[1];
	return 0;
}

void kutil_child_go(struct kchild *c)
{
	if (write(c->go_fd, "g", 1) != 1)
		kill(c->pid, SIGKILL);
	close(c->go_fd);
	c->go_fd = -1;
}

int kutil_child_wait(struct kchild *c)
{
	int st;

	if (c->go_fd >= 0) {
		close(c->go_fd);
		c->go_fd = -1;
	}
	if (waitpid(c->pid, &st, 0) != c->pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int kutil_count_cb(const struct perfring_sample *s, void *ctx)
{
	struct kcount *k = ctx;

	k->n++;
	if (s->cpu >= 0 && s->cpu < 64)
		k->per_cpu[s->cpu]++;
	if (s->time < k->last_time)
		k->out_of_order++;
	k->last_time = s->time;
	return 0;
}

int kutil_getpid_session(struct perfring_opts *o, pid_t filter_pid, struct kcount *k,
			 struct perfring_session **out, struct perfring_event **evp)
{
	struct perfring_session *s = NULL;
	struct perfring_event *ev;
	char filter[64];
	int err;

	*out = NULL;
	if ((err = perfring_session_new(o, &s)))
		return err;
	*out = s;
	if ((err = perfring_session_add_tracepoint(s, "syscalls", "sys_enter_getpid", &ev)))
		return err;
	if (filter_pid > 0) {
		snprintf(filter, sizeof(filter), "common_pid == %d", (int)filter_pid);
		if ((err = perfring_event_set_filter(ev, filter)))
			return err;
	}
	if (evp)
		*evp = ev;
	return perfring_event_set_callback(ev, kutil_count_cb, k);
}
