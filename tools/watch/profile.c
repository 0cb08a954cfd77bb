/* SPDX-License-Identifier: MIT */
/* perfring-watch --profile: each cpu-clock sample's user instruction pointer
 * placed in its file as PATH+0xOFFSET, through the MMAP2 records (or, for a
 * process mapped before the start, its /proc/PID/maps once), and the top 10
 * of each interval and of the run in the TTY frame, piped lines and JSON. */
#include "config.h"
#include "watch.h"
#include "textesc.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define TOP 10
#define MAX_FILES 65536
#define MAX_HITS (1u << 20)         /* distinct PATH+0xOFFSET kept; the rest: other */
#define MAX_MAPS_PER_PID 4096
#define PID_SLOTS 8192              /* processes whose maps are kept, a hash */

struct pmap { uint64_t start, end, pgoff; uint32_t file; };

struct pid_maps {
	uint32_t pid;                   /* 0: free slot */
	bool loaded;                    /* /proc/PID/maps read (or MMAP2 seen) */
	struct pmap *m;
	size_t n, cap;
};

/* Counts of this interval [0] and of the run [1]. */
enum { SEC, RUN };

struct hit { uint64_t off; uint32_t file; uint32_t used; uint64_t n[2]; };

struct prof_counts { uint64_t samples, user, unknown, other; };

struct watch_prof {
	struct pid_maps pids[PID_SLOTS];
	char **files;
	size_t nfiles;
	struct hit *hits;               /* open addressing, cap entries */
	size_t nhits, cap;
	struct prof_counts c[2];
};

/* ------------------------------------------------------------ mappings */

static uint32_t file_id(struct watch_prof *p, const char *name)
{
	char **f;

	for (size_t i = p->nfiles; i-- > 0;)
		if (!strcmp(p->files[i], name))
			return (uint32_t)i;
	if (p->nfiles == MAX_FILES || !(f = realloc(p->files, (p->nfiles + 1) * sizeof(*f))))
		return UINT32_MAX;
	p->files = f;
	if (!(f[p->nfiles] = strdup(name)))
		return UINT32_MAX;
	return (uint32_t)p->nfiles++;
}

static struct pid_maps *pid_slot(struct watch_prof *p, uint32_t pid, bool make)
{
	size_t i = (pid * 2654435761u) % PID_SLOTS;

	for (size_t k = 0; k < PID_SLOTS; k++, i = (i + 1) % PID_SLOTS) {
		if (p->pids[i].pid == pid)
			return &p->pids[i];
		if (!p->pids[i].pid) {
			if (!make)
				return NULL;
			p->pids[i].pid = pid;
			return &p->pids[i];
		}
	}
	return NULL;
}

static void add_map(struct watch_prof *p, uint32_t pid, uint64_t start, uint64_t len,
		    uint64_t pgoff, const char *name)
{
	struct pid_maps *pm = pid_slot(p, pid, true);
	uint32_t f;

	if (!pm || pm->n == MAX_MAPS_PER_PID || (f = file_id(p, name)) == UINT32_MAX)
		return;
	if (pm->n == pm->cap) {
		size_t cap = pm->cap ? 2 * pm->cap : 16;
		struct pmap *m = realloc(pm->m, cap * sizeof(*m));

		if (!m)
			return;
		pm->m = m;
		pm->cap = cap;
	}
	pm->m[pm->n++] = (struct pmap){ start, start + len, pgoff, f };
	pm->loaded = true;
}

/* A process mapped before the session: its executable mappings once. */
static void load_proc_maps(struct watch_prof *p, struct pid_maps *pm)
{
	char path[64], line[4352], perm[8], name[4096];
	unsigned long long lo, hi, off;
	FILE *f;

	pm->loaded = true;
	snprintf(path, sizeof(path), "/proc/%u/maps", pm->pid);
	if (!(f = fopen(path, "re")))
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095[^\n]", &lo, &hi, perm, &off,
			   name) == 5 && perm[2] == 'x' && hi > lo)
			add_map(p, pm->pid, lo, hi - lo, off, name);
	fclose(f);
}

static int on_record(const struct perfring_record *r, void *ctx)
{
	struct watch *w = ctx;
	struct pid_maps *pm;

	if (r->type == PERF_RECORD_MMAP2 && (r->u.mmap.prot & PROT_EXEC))
		add_map(w->prof, r->u.mmap.pid, r->u.mmap.addr, r->u.mmap.len, r->u.mmap.pgoff,
			r->u.mmap.filename);
	else if (r->type == PERF_RECORD_COMM && r->u.comm.exec &&
		 (pm = pid_slot(w->prof, r->u.comm.pid, false)))
		pm->n = 0;              /* a new image: its MMAP2 records follow */
	return 0;
}

int watch_profile_open(struct watch *w)
{
	if (!w->prof && !(w->prof = calloc(1, sizeof(*w->prof))))
		return -ENOMEM;
	return perfring_session_set_record_callback(w->s, PERFRING_REC_MMAP | PERFRING_REC_COMM,
						    on_record, w);
}

void watch_profile_close(struct watch *w)
{
	struct watch_prof *p = w->prof;

	if (!p)
		return;
	for (size_t i = 0; i < PID_SLOTS; i++)
		free(p->pids[i].m);
	for (size_t i = 0; i < p->nfiles; i++)
		free(p->files[i]);
	free(p->files);
	free(p->hits);
	free(p);
	w->prof = NULL;
}

/* ---------------------------------------------------------- counting */

/* The user IP of a sample: its own in user mode, else the first entry
 * after the callchain's PERF_CONTEXT_USER marker. */
static bool user_ip(const struct perfring_sample *s, uint64_t *ip)
{
	if ((s->record->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER) {
		*ip = s->ip;
		return true;
	}
	for (uint32_t i = 0; i + 1 < s->callchain_nr; i++)
		if (s->callchain[i] == PERF_CONTEXT_USER) {
			*ip = s->callchain[i + 1];
			return true;
		}
	return false;
}

/* Newest first: an exec's new image lies over the old one's ranges. */
static const struct pmap *find_map(struct watch_prof *p, uint32_t pid, uint64_t ip)
{
	struct pid_maps *pm = pid_slot(p, pid, true);

	if (!pm)
		return NULL;
	if (!pm->loaded)
		load_proc_maps(p, pm);
	for (size_t i = pm->n; i-- > 0;)
		if (ip >= pm->m[i].start && ip < pm->m[i].end)
			return &pm->m[i];
	return NULL;
}

static bool grow(struct watch_prof *p)
{
	size_t cap = p->cap ? 2 * p->cap : 1024;
	struct hit *h = calloc(cap, sizeof(*h));

	if (!h)
		return false;
	for (size_t i = 0; i < p->cap; i++) {
		size_t j;

		if (!p->hits[i].used)
			continue;
		j = (p->hits[i].off * 0x9e3779b97f4a7c15ull ^ p->hits[i].file) & (cap - 1);
		while (h[j].used)
			j = (j + 1) & (cap - 1);
		h[j] = p->hits[i];
	}
	free(p->hits);
	p->hits = h;
	p->cap = cap;
	return true;
}

static size_t slot_of(const struct watch_prof *p, uint32_t file, uint64_t off)
{
	size_t j = (off * 0x9e3779b97f4a7c15ull ^ file) & (p->cap - 1);

	while (p->hits[j].used && (p->hits[j].file != file || p->hits[j].off != off))
		j = (j + 1) & (p->cap - 1);
	return j;
}

/* The counter of (file, off), made if there is room: NULL once MAX_HITS
 * distinct ones are kept (the table stays at most half full). */
static struct hit *hit_of(struct watch_prof *p, uint32_t file, uint64_t off)
{
	size_t j;

	if (!p->cap && !grow(p))
		return NULL;
	j = slot_of(p, file, off);
	if (p->hits[j].used)
		return &p->hits[j];
	if ((p->nhits + 1) * 2 > p->cap) {
		if (p->nhits >= MAX_HITS || !grow(p))
			return NULL;
		j = slot_of(p, file, off);
	}
	p->hits[j] = (struct hit){ .off = off, .file = file, .used = 1 };
	p->nhits++;
	return &p->hits[j];
}

static void bump(uint64_t *sec, uint64_t *run)
{
	(*sec)++;
	(*run)++;
}

void watch_profile_sample(struct watch *w, const struct perfring_sample *smp)
{
	struct watch_prof *p = w->prof;
	struct prof_counts *c;
	const struct pmap *m;
	struct hit *h;
	uint64_t ip;

	if (!p)
		return;
	c = p->c;
	bump(&c[SEC].samples, &c[RUN].samples);
	if (!user_ip(smp, &ip))
		return;
	bump(&c[SEC].user, &c[RUN].user);
	if (!(m = find_map(p, smp->pid, ip)))
		bump(&c[SEC].unknown, &c[RUN].unknown);
	else if (!(h = hit_of(p, m->file, ip - m->start + m->pgoff)))
		bump(&c[SEC].other, &c[RUN].other);
	else
		bump(&h->n[SEC], &h->n[RUN]);
}

void watch_profile_interval_reset(struct watch *w)
{
	struct watch_prof *p = w->prof;

	if (!p)
		return;
	for (size_t i = 0; i < p->cap; i++)
		p->hits[i].n[SEC] = 0;
	p->c[SEC] = (struct prof_counts){ 0 };
}

/* The n largest counts of k (SEC or RUN), largest first; returns how many. */
static size_t top(const struct watch_prof *p, int k, const struct hit **out, size_t n)
{
	size_t got = 0;

	for (size_t i = 0; i < p->cap; i++) {
		const struct hit *h = &p->hits[i];
		uint64_t c = h->n[k];
		size_t j;

		if (!h->used || !c || (got == n && c <= out[got - 1]->n[k]))
			continue;
		j = got < n ? got++ : n - 1;
		while (j > 0 && out[j - 1]->n[k] < c) {
			out[j] = out[j - 1];
			j--;
		}
		out[j] = h;
	}
	return got;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* PATH+0xOFFSET with the path escaped (it comes from the traced system). */
static void where(const struct watch_prof *p, const struct hit *h, char *buf, size_t len)
{
	const char *f = p->files[h->file];
	size_t n = esc_text(buf, len, f, strlen(f), 0);

	snprintf(buf + n, len - n, "+0x%" PRIx64, h->off);
}

/* ------------------------------------------------------------- views */

/* The state and the top of k for a view; NULL without --profile. */
static const struct watch_prof *view_top(const struct watch *w, int k, const struct hit **t,
					 size_t *n)
{
	*n = w->prof ? top(w->prof, k, t, TOP) : 0;
	return w->prof;
}

/* The table's rows of k: into the TTY frame (w), or printed (w NULL). */
static void rows(struct watch *w, const struct watch_prof *p, const struct hit **t, size_t n,
		 int k)
{
	char line[512], at[384];

	for (size_t i = 0; i < n; i++) {
		where(p, t[i], at, sizeof(at));
		snprintf(line, sizeof(line), "  %10" PRIu64 " %6.1f%%  %s", t[i]->n[k],
			 pct(t[i]->n[k], p->c[k].user), at);
		if (w)
			watch_frame_line(w, line);
		else
			puts(line);
	}
}

void watch_profile_tty(struct watch *w, double dt)
{
	const struct hit *t[TOP];
	char line[512];
	size_t n;
	const struct watch_prof *p = view_top(w, SEC, t, &n);

	if (!p)
		return;
	watch_frame_line(w, "");
	snprintf(line, sizeof(line), "profile: %.0f samples/s, %.0f in user space; top user IPs:",
		 dt > 0 ? (double)p->c[SEC].samples / dt : 0,
		 dt > 0 ? (double)p->c[SEC].user / dt : 0);
	watch_frame_line(w, line);
	rows(w, p, t, n, SEC);
}

void watch_profile_pipe(struct watch *w, double t, double dt)
{
	const struct hit *h[TOP];
	char at[384];
	size_t n;
	const struct watch_prof *p = view_top(w, SEC, h, &n);

	if (!p)
		return;
	printf("%8.1f   profile %" PRIu64 " samples (%.0f/s), %" PRIu64 " user, %" PRIu64
	       " unmapped\n", t, p->c[SEC].samples, dt > 0 ? (double)p->c[SEC].samples / dt : 0,
	       p->c[SEC].user, p->c[SEC].unknown);
	for (size_t i = 0; i < n; i++) {
		where(p, h[i], at, sizeof(at));
		printf("%8.1f   profile %10" PRIu64 " %s\n", t, h[i]->n[SEC], at);
	}
}

void watch_profile_json(const struct watch *w, bool run, double dt)
{
	const struct hit *h[TOP];
	char at[384];
	size_t n;
	int k = run ? RUN : SEC;
	const struct watch_prof *p = view_top(w, k, h, &n);

	if (!p)
		return;
	printf(",\"profile\":{\"samples\":%" PRIu64 ",\"user\":%" PRIu64 ",\"unmapped\":%" PRIu64
	       ",\"other\":%" PRIu64 ",\"interval_s\":%.3f,\"top\":[", p->c[k].samples,
	       p->c[k].user, p->c[k].unknown, p->c[k].other, dt);
	for (size_t i = 0; i < n; i++) {
		snprintf(at, sizeof(at), "%s+0x%" PRIx64, p->files[h[i]->file], h[i]->off);
		printf("%s{\"at\":", i ? "," : "");
		watch_json_str(at);
		printf(",\"count\":%" PRIu64 "}", h[i]->n[k]);
	}
	printf("]}");
}

void watch_profile_summary(const struct watch *w)
{
	const struct hit *h[TOP];
	size_t n;
	const struct watch_prof *p = view_top(w, RUN, h, &n);

	if (!p)
		return;
	printf("profile: %" PRIu64 " samples, %" PRIu64 " in user space, %" PRIu64
	       " unmapped; top user IPs:\n", p->c[RUN].samples, p->c[RUN].user, p->c[RUN].unknown);
	rows(NULL, p, h, n, RUN);
}
