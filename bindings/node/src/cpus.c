/* SPDX-License-Identifier: MIT */
/* A following watch's CPUs: which are open, and a returning CPU whose open
 * failed. The library reports both a CPU that left and a failed open as
 * (cpu, online false); the one that was not open is the failure, and its
 * sentence is perfring_session_last_error()'s. The callback runs inside a
 * drain: the failure waits for the check phase, where the watch emits it as
 * an 'error' (an Error with code, cpu and the sentence). */
#include "pn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool bit(const uint64_t *set, int cpu)
{
	return set[cpu / 64] >> (cpu % 64) & 1;
}

static void set_bit(uint64_t *set, int cpu, bool on)
{
	if (on)
		set[cpu / 64] |= 1ULL << (cpu % 64);
	else
		set[cpu / 64] &= ~(1ULL << (cpu % 64));
}

/* The callback gives no errno: the sentence names it as perfring_strerror
 * spells it ("...: Too many open files; ..."). The earliest name in the
 * sentence, the longest there ("No such device or address" over "No such
 * device"); EIO when none is found. */
static int errno_of(const char *why)
{
	const char *at, *best = NULL, *name;
	size_t len, best_len = 0;
	int e, err = -EIO;

	for (e = 1; e < 134; e++) {
		name = perfring_strerror(-e);
		if (!strcmp(name, "Unknown error") || !(at = strstr(why, name)))
			continue;
		len = strlen(name);
		if (!best || at < best || (at == best && len > best_len)) {
			best = at;
			best_len = len;
			err = -e;
		}
	}
	return err;
}

static void failed(struct pn_watch *w, int cpu)
{
	const char *why = perfring_session_last_error(w->s);
	struct pn_cpu_fail *grown, *f;

	if (w->fail_n == w->fail_cap) {
		grown = realloc(w->fails, (w->fail_cap ? w->fail_cap * 2 : 4) * sizeof(*grown));
		if (!grown) {
			w->fail_lost++; /* told, without the sentences */
			return;
		}
		w->fails = grown;
		w->fail_cap = w->fail_cap ? w->fail_cap * 2 : 4;
	}
	f = &w->fails[w->fail_n++];
	f->cpu = cpu;
	f->err = errno_of(why);
	snprintf(f->why, sizeof(f->why), "%s", why);
}

static void on_cpu(int cpu, bool online, void *ctx)
{
	struct pn_watch *w = ctx;

	if (cpu < 0 || cpu >= PN_MAX_CPUS)
		return;
	if (!online && !bit(w->cpu_on, cpu)) {
		failed(w, cpu);
		pn_watch_pending(w);
	}
	set_bit(w->cpu_on, cpu, online);
}

int pn_cpus_follow(struct pn_watch *w)
{
	return perfring_session_set_cpu_callback(w->s, on_cpu, w);
}

/* After start: the CPUs open now. */
void pn_cpus_started(struct pn_watch *w)
{
	const struct perfring_cpu_fd *fds;
	size_t i, n = perfring_session_fds(w->s, &fds);

	for (i = 0; i < n; i++)
		if (fds[i].cpu >= 0 && fds[i].cpu < PN_MAX_CPUS)
			set_bit(w->cpu_on, fds[i].cpu, true);
}

static void tell(struct pn_watch *w, int cpu, int err, const char *why)
{
	pn_watch_notify(w, "error", pn_error_cpu(w->env, err, why, cpu));
}

/* Emits each failure once, in the order they came; stops if the watch
 * closes from a listener. */
void pn_cpus_tell(struct pn_watch *w)
{
	char why[160];
	size_t i;

	for (i = 0; i < w->fail_n && !w->closing; i++)
		tell(w, w->fails[i].cpu, w->fails[i].err, w->fails[i].why);
	w->fail_n = 0;
	if (w->fail_lost && !w->closing) {
		snprintf(why, sizeof(why), "perfring: %zu more CPUs came online but could not "
			 "be opened (no memory was left for the reasons); they are not watched",
			 w->fail_lost);
		w->fail_lost = 0;
		tell(w, -1, -ENOMEM, why);
	}
}
