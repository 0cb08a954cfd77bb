/* SPDX-License-Identifier: MIT */
/*
 * bench/pause: what a flight recorder's snapshot costs the stream it records,
 * by each wait (perfring_snapshot_opts.wait). A getpid generator runs on CPU 1
 * under an overwrite session on every online CPU (1024 pages, holding some
 * 60 ms of the stream); this thread, on CPU 0, takes a snapshot every 20 ms.
 * What the kernel makes while the rings are paused it drops and reports in a
 * LOST record, which the next snapshot delivers: lost per snapshot is the
 * pause's price. The waits alternate, round by round.
 *
 *   bench/pause [-r ROUNDS] [-s SNAPSHOTS]   (root; CPUs 0 and 1 online)
 */
#include "kbench.h"

#include <perfring/perfring.h>

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#define GAP_US 20000

struct tally {
	uint64_t samples, lost;
};

struct gen {
	pthread_t t;
	volatile int stop;
};

static void *gen_main(void *arg)
{
	struct gen *g = arg;
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(KB_GEN_CPU, &one);
	pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
	while (!g->stop)
		syscall(SYS_getpid);
	return NULL;
}

static int on_sample(const struct perfring_sample *s, void *ctx)
{
	(void)s;
	((struct tally *)ctx)->samples++;
	return 0;
}

static int on_record(const struct perfring_record *r, void *ctx)
{
	if (r->type == PERF_RECORD_LOST)
		((struct tally *)ctx)->lost += r->u.lost.lost;
	return 0;
}

/* Per snapshot, each round's: what the pause dropped, the call's time, samples. */
struct rounds {
	double lost[64], ms[64], samples[64];
};

/* Round k: a session, the generator, `snaps` snapshots with wait w. */
static int round_of(uint32_t w, int snaps, struct rounds *out, int k)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 1024, .overwrite = 1 };
	struct perfring_snapshot_opts so = { .sz = sizeof(so), .wait = w };
	struct perfring_session *s = NULL;
	struct perfring_event *ev;
	struct tally t = { 0 };
	struct gen g = { 0 };
	uint64_t t0, ns = 0;
	int i, err;

	if ((err = perfring_session_new(&o, &s)) ||
	    (err = perfring_session_add_tracepoint(s, "syscalls", "sys_enter_getpid", &ev)) ||
	    (err = perfring_event_set_callback(ev, on_sample, &t)) ||
	    (err = perfring_session_set_record_callback(s, 0, on_record, &t)) ||
	    (err = perfring_session_start(s))) {
		fprintf(stderr, "pause: %s\n", perfring_session_last_error(s));
		perfring_session_free(s);
		return err;
	}
	if ((err = -pthread_create(&g.t, NULL, gen_main, &g))) {
		perfring_session_free(s);
		return err;
	}
	usleep(GAP_US);
	/* The first takes what the rings hold from before: not counted. */
	err = perfring_session_snapshot_opts(s, &so);
	t = (struct tally){ 0 };
	for (i = 0; i < snaps && err >= 0; i++) {
		usleep(GAP_US);
		t0 = kb_now_ns();
		err = perfring_session_snapshot_opts(s, &so);
		ns += kb_now_ns() - t0;
	}
	g.stop = 1;
	pthread_join(g.t, NULL);
	if (err < 0)
		fprintf(stderr, "pause: %s\n", perfring_session_last_error(s));
	perfring_session_free(s);
	out->lost[k] = (double)t.lost / snaps;
	out->samples[k] = (double)t.samples / snaps;
	out->ms[k] = (double)ns / 1e6 / snaps;
	return err < 0 ? err : 0;
}

int main(int argc, char **argv)
{
	static const char *const name[2] = { "GRACE (membarrier)", "VISIT (each CPU)" };
	static struct rounds res[2];
	char note[512];
	int rounds = 5, snaps = 20, opt, k, w;
	cpu_set_t one;

	while ((opt = getopt(argc, argv, "r:s:")) != -1) {
		if (opt == 'r')
			rounds = atoi(optarg);
		else if (opt == 's')
			snaps = atoi(optarg);
		else
			return 2;
	}
	if (rounds < 1 || rounds > 64 || snaps < 1) {
		fprintf(stderr, "usage: bench/pause [-r ROUNDS (1-64)] [-s SNAPSHOTS]\n");
		return 2;
	}
	CPU_ZERO(&one);
	CPU_SET(KB_CONS_CPU, &one);
	if (sched_setaffinity(0, sizeof(one), &one)) {
		perror("pause: sched_setaffinity");
		return 1;
	}
	for (k = 0; k < rounds; k++)
		for (w = 0; w < 2; w++)
			if (round_of((uint32_t)w, snaps, &res[w], k))
				return 1;
	snprintf(note, sizeof(note), "A getpid generator on CPU %d under an overwrite session "
		 "(1024 pages a CPU); a snapshot every %d ms from CPU %d, %d a round, %d rounds "
		 "alternating the waits; medians of the rounds. Lost: what the kernel dropped "
		 "while the rings were paused (its LOST records), per snapshot; ms: the whole "
		 "call (pause, copy, delivery).", KB_GEN_CPU, GAP_US / 1000, KB_CONS_CPU, snaps,
		 rounds);
	if (kb_report_begin("Snapshot pause, by wait (bench/pause)", note,
			    "wait|lost / snapshot|ms / snapshot|samples / snapshot", argc, argv))
		return 1;
	for (w = 0; w < 2; w++)
		kb_report_line("| %s | %.0f | %.2f | %.0f |", name[w],
			       kb_median(res[w].lost, (size_t)rounds),
			       kb_median(res[w].ms, (size_t)rounds),
			       kb_median(res[w].samples, (size_t)rounds));
	kb_report_end();
	return 0;
}
