/* Tries one case of R10 (errors name the cause that applies) and prints
 * "CASE ok" or "CASE rc=N: the sentence". tests/test_errors.sh runs each
 * case as root and as nobody and checks the sentences. Public API only.
 * Every case watches this process (pid mode) with user-only events unless
 * the case is about that, so that it starts as nobody too. */
#include <perfring/perfring.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

struct ctx {
	struct perfring_opts o;
	struct perfring_session *s;
	const char *name;
	int rc;
};

static int report(struct ctx *c)
{
	if (c->rc)
		printf("%s rc=%d: %s\n", c->name, c->rc, perfring_session_last_error(c->s));
	else
		printf("%s ok\n", c->name);
	perfring_session_free(c->s);
	return 0;
}

/* The session of a case: this process, 8-page rings. */
static int new_session(struct ctx *c)
{
	if (!c->o.sz) {
		c->o.sz = sizeof(c->o);
		c->o.pid = getpid();
		c->o.ring_pages = c->o.ring_pages ? c->o.ring_pages : 8;
	}
	return c->rc = perfring_session_new(&c->o, &c->s);
}

static int add_faults(struct ctx *c, int exclude_kernel)
{
	struct perfring_software_opts so = { .sz = sizeof(so), .period = 1,
					     .exclude_kernel = (uint32_t)exclude_kernel };

	return c->rc = perfring_session_add_software_opts(c->s, PERFRING_SW_PAGE_FAULTS, &so, NULL);
}

/* new, a page-fault event, start; each step only if the last one worked. */
static int start_faults(struct ctx *c, int exclude_kernel)
{
	if (!new_session(c) && !add_faults(c, exclude_kernel))
		c->rc = perfring_session_start(c->s);
	return report(c);
}

static long proc_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* A filter of len bytes that the kernel's parser accepts. */
static char *filter_of(size_t len)
{
	char *f = malloc(len + 1);
	size_t n;
	int i;

	if (!f)
		return NULL;
	n = (size_t)snprintf(f, len + 1, "common_pid != 0");
	for (i = 1; n + 32 < len; i++)
		n += (size_t)snprintf(f + n, len + 1 - n, " && common_pid != %d", i);
	memset(f + n, ' ', len - n);
	f[len] = '\0';
	return f;
}

static int filter_case(struct ctx *c, size_t len, int start)
{
	struct perfring_event *ev;
	char *f = filter_of(len);

	if (f && start > 1) /* a long filter the kernel refuses: an unknown field */
		memcpy(f, "no_such_fd", 10);
	if (!f || new_session(c))
		goto out;
	if ((c->rc = perfring_session_add_tracepoint(c->s, "syscalls", "sys_enter_getpid", &ev)))
		goto out;
	if (!(c->rc = perfring_event_set_filter(ev, f)) && start)
		c->rc = perfring_session_start(c->s);
out:
	free(f);
	return report(c);
}

/* The largest ring_pages a sentence names is accepted; twice it is not. */
static int ring_case(struct ctx *c)
{
	const char *at;
	unsigned long max;

	c->o = (struct perfring_opts){ .sz = sizeof(c->o), .pid = getpid(),
				       .ring_pages = 1u << 31 };
	if (!new_session(c) || !(at = strstr(perfring_session_last_error(NULL), "at most ")))
		return report(c);
	max = strtoul(at + 8, NULL, 10);
	c->o.ring_pages = (uint32_t)max;
	if ((c->rc = new_session(c)))
		return report(c);
	printf("%s: ring_pages %lu accepted\n", c->name, max);
	perfring_session_free(c->s);
	c->s = NULL;
	c->o.ring_pages = (uint32_t)max * 2;
	new_session(c);
	return report(c);
}

static int limit(int resource, rlim_t v)
{
	struct rlimit rl;

	getrlimit(resource, &rl);
	rl.rlim_cur = v;
	return setrlimit(resource, &rl);
}

/* The lowest free fd: a limit of it makes the next fd fail with EMFILE. */
static int lowest_free_fd(void)
{
	int fd = dup(0);

	if (fd >= 0)
		close(fd);
	return fd;
}

static int emfile_case(struct ctx *c, int in_wait)
{
	if (in_wait)
		c->o = (struct perfring_opts){ .sz = sizeof(c->o), .pid = getpid(), .ring_pages = 8,
					       .wakeup_watermark = 64 };
	if (new_session(c) || add_faults(c, 1))
		return report(c);
	if (in_wait && (c->rc = perfring_session_start(c->s)))
		return report(c);
	/* In start, one fd: the listing of the threads, then the first ring. */
	limit(RLIMIT_NOFILE, (rlim_t)lowest_free_fd() + !in_wait);
	if (in_wait) /* its epoll set and timer are made on the first wait */
		c->rc = perfring_session_parse_for_duration(c->s, 1000000);
	else
		c->rc = perfring_session_start(c->s);
	if (c->rc > 0)
		c->rc = 0;
	return report(c);
}

/* The address space just past what is mapped: the ring's mmap is ENOMEM. */
static int nomem_case(struct ctx *c)
{
	unsigned long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f || fscanf(f, "%lu", &pages) != 1)
		return printf("%s: cannot read /proc/self/statm\n", c->name), 1;
	fclose(f);
	/* A 128 MiB ring and 32 MiB to spare: what the ring's mmap needs is
	 * refused, while a sanitizer's runtime still finds room for its own. */
	c->o.ring_pages = 32768;
	if (new_session(c) || add_faults(c, 1))
		return report(c);
	limit(RLIMIT_AS, (rlim_t)(pages * (unsigned long)sysconf(_SC_PAGESIZE) + (32ul << 20)));
	c->rc = perfring_session_start(c->s);
	return report(c);
}

static int attr_case(struct ctx *c, int backward)
{
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
				     .config = PERF_COUNT_SW_PAGE_FAULTS, .exclude_kernel = 1 };
	long max = proc_long("/proc/sys/kernel/perf_event_max_sample_rate");

	if (backward) {
		a.sample_period = 1;
		a.write_backward = 1;
	} else {
		a.freq = 1;
		a.sample_freq = (uint64_t)max + 1;
	}
	if (!new_session(c) && !(c->rc = perfring_session_add_attr(c->s, &a, NULL)))
		c->rc = perfring_session_start(c->s);
	return report(c);
}

static int tracepoint_case(struct ctx *c, const char *sys, const char *name)
{
	if (!new_session(c) && !(c->rc = perfring_session_add_tracepoint(c->s, sys, name, NULL)))
		c->rc = perfring_session_start(c->s);
	return report(c);
}

static int restart_case(struct ctx *c)
{
	if (new_session(c) || add_faults(c, 1) || (c->rc = perfring_session_start(c->s)) ||
	    (c->rc = perfring_session_stop(c->s)) || (c->rc = perfring_session_start(c->s)))
		return report(c);
	c->rc = perfring_session_stop(c->s);
	return report(c);
}

int main(int argc, char **argv)
{
	struct ctx c = { .name = argc > 1 ? argv[1] : "" };
	const char *n = c.name;
	long page = sysconf(_SC_PAGESIZE);

	if (!strcmp(n, "filter_page"))
		return filter_case(&c, (size_t)page, 0);
	if (!strcmp(n, "filter_page_minus_one"))
		return filter_case(&c, (size_t)page - 1, 1);
	if (!strcmp(n, "filter_long_refused"))
		return filter_case(&c, (size_t)page - 1, 2);
	if (!strcmp(n, "ring_above_kernel"))
		return ring_case(&c);
	if (!strcmp(n, "ring_max_maps") && argc > 2) {
		c.o = (struct perfring_opts){ .sz = sizeof(c.o), .pid = getpid(),
					      .ring_pages = (uint32_t)strtoul(argv[2], NULL, 10),
					      .cpus = (const int[]){ 0 }, .cpu_cnt = 1 };
		return start_faults(&c, 1);
	}
	if (!strcmp(n, "mmap_enomem"))
		return nomem_case(&c);
	if (!strcmp(n, "mmap_memlock")) {
		limit(RLIMIT_MEMLOCK, 64 << 10);
		c.o.ring_pages = 4096;
		return start_faults(&c, 1);
	}
	if (!strcmp(n, "kernel_samples"))
		return start_faults(&c, 0);
	if (!strcmp(n, "user_samples"))
		return start_faults(&c, 1);
	if (!strcmp(n, "system_wide")) {
		c.o = (struct perfring_opts){ .sz = sizeof(c.o), .ring_pages = 8 };
		return start_faults(&c, 1);
	}
	if (!strcmp(n, "other_user") || !strcmp(n, "other_user_kernel")) {
		c.o = (struct perfring_opts){ .sz = sizeof(c.o), .pid = 1, .ring_pages = 8 };
		return start_faults(&c, !strcmp(n, "other_user"));
	}
	if (!strcmp(n, "emfile_open"))
		return emfile_case(&c, 0);
	if (!strcmp(n, "emfile_epoll"))
		return emfile_case(&c, 1);
	if (!strcmp(n, "einval_freq"))
		return attr_case(&c, 0);
	if (!strcmp(n, "einval_backward"))
		return attr_case(&c, 1);
	if (!strcmp(n, "einval_ftrace"))
		return tracepoint_case(&c, "ftrace", "function");
	if (!strcmp(n, "restart"))
		return restart_case(&c);
	fprintf(stderr, "usage: errcases CASE (see tests/test_errors.sh)\n");
	return 2;
}
