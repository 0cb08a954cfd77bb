/* Start on the real kernel: against a process whose threads come and go
 * (R3), and again after a stop (R11). */
#include "kutil.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define STARTS 50

/* tests/churn with its "ready" read; killed and reaped by churn_stop. */
static pid_t churn_start(int threads)
{
	const char *top = getenv("top_builddir");
	char path[4096], arg[16], line[16] = "";
	int p[2];
	pid_t pid;
	FILE *f;

	snprintf(path, sizeof(path), "%s/tests/churn", top ? top : ".");
	snprintf(arg, sizeof(arg), "%d", threads);
	cr_assert_eq(pipe(p), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execl(path, path, arg, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	f = fdopen(p[0], "r");
	cr_assert_not_null(f);
	if (!fgets(line, sizeof(line), f) || strcmp(line, "ready\n")) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		cr_assert_fail("%s did not start (\"%s\")", path, line);
	}
	fclose(f);
	return pid;
}

static void churn_stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* Each start lists the threads, then opens a leader, a dummy and an event
 * per thread on every CPU: threads that end in between must be skipped. */
Test(start, thread_churn)
{
	struct perfring_software_opts so = { .sz = sizeof(so), .period = 1 };
	struct perfring_session *s;
	pid_t pid = churn_start(8);
	int i, rc, failed = 0;
	char first[512] = "";

	for (i = 0; i < STARTS; i++) {
		struct perfring_opts o = { .sz = sizeof(o), .pid = pid, .ring_pages = 8 };

		cr_assert_eq(perfring_session_new(&o, &s), 0, "%s", perfring_session_last_error(NULL));
		rc = perfring_session_add_software_opts(s, PERFRING_SW_CONTEXT_SWITCHES, &so, NULL);
		if (!rc)
			rc = perfring_session_start(s);
		if (rc && kutil_unavailable(rc) && rc != -ESRCH) {
			churn_stop(pid);
			cr_skip_test("perf unavailable: %s", perfring_session_last_error(s));
		}
		if (rc && !failed++)
			snprintf(first, sizeof(first), "%s", perfring_session_last_error(s));
		perfring_session_free(s);
	}
	churn_stop(pid);
	fprintf(stderr, "# thread_churn: %d of %d starts failed\n", failed, STARTS);
	cr_assert_eq(failed, 0, "%d of %d starts failed; the first: %s", failed, STARTS, first);
}

/* The process itself gone is still -ESRCH, with a sentence. */
Test(start, process_gone)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 8 };
	struct perfring_session *s;
	pid_t pid = churn_start(1);
	int rc;

	o.pid = pid;
	cr_assert_eq(perfring_session_new(&o, &s), 0);
	cr_assert_eq(perfring_session_add_software(s, PERFRING_SW_CONTEXT_SWITCHES, 1, NULL), 0);
	churn_stop(pid);
	rc = perfring_session_start(s);
	cr_expect_eq(rc, -ESRCH, "start on a reaped process: %d (%s)", rc,
		     perfring_session_last_error(s));
	cr_expect(strstr(perfring_session_last_error(s), "exited"), "%s",
		  perfring_session_last_error(s));
	perfring_session_free(s);
}

static uint64_t samples(const struct perfring_session *s)
{
	return kutil_stats(s).samples;
}

/* stop, start, stop: what runs while stopped is not counted, what runs
 * while started is, exactly; the rings and the stats carry on. */
Test(start, restart_after_stop)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 64 };
	const struct perfring_cpu_fd *fds0, *fds1;
	struct perfring_session *s;
	struct kcount k = { 0 };
	int fd0;

	KCHECK(kutil_getpid_session(&o, getpid(), &k, &s, NULL), s);
	KCHECK(perfring_session_start(s), s);
	kutil_getpid_n(100);
	cr_assert_eq(perfring_session_stop(s), 0, "%s", perfring_session_last_error(s));
	kutil_getpid_n(40); /* stopped: not counted */
	KCOUNT_EQ(perfring_session_parse_all(s), 100);
	cr_assert_eq(perfring_session_fds(s, &fds0), (size_t)kutil_ncpu_online());
	fd0 = fds0[0].fd;

	cr_assert_eq(perfring_session_start(s), 0, "start after stop: %s",
		     perfring_session_last_error(s));
	cr_assert_eq(perfring_session_start(s), -EBUSY, "start while started");
	cr_expect(strstr(perfring_session_last_error(s), "already started"), "%s",
		  perfring_session_last_error(s));
	kutil_getpid_n(70);
	cr_assert_eq(perfring_session_stop(s), 0, "%s", perfring_session_last_error(s));
	kutil_getpid_n(25); /* stopped again */
	KCOUNT_EQ(perfring_session_parse_all(s), 70);
	KCOUNT_EQ(k.n, 170);
	KCOUNT_EQ(samples(s), 170);
	cr_assert_eq(perfring_session_fds(s, &fds1), (size_t)kutil_ncpu_online());
	cr_expect_eq(fds1[0].fd, fd0, "the same rings after the restart");

	/* A third round, then the end: still exact. */
	cr_assert_eq(perfring_session_start(s), 0, "%s", perfring_session_last_error(s));
	kutil_getpid_n(5);
	cr_assert_eq(perfring_session_stop(s), 0);
	KCOUNT_EQ(perfring_session_parse_all(s), 5);
	KCOUNT_EQ(samples(s), 175);
	cr_expect_eq(kutil_stats(s).lost, 0);
	perfring_session_free(s);
}
