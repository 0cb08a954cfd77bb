/* SPDX-License-Identifier: MIT */
/* The /metrics page in the Prometheus text format 0.0.4: every family has
 * its HELP and TYPE, every series is written once (events of one name and a
 * real --by value "other" are folded in), and label values are escaped
 * twice: textesc.c's escape (the same text every mode shows), then the
 * format's own backslash and quote. */
#include "config.h"
#include "watch.h"
#include "textesc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct page {
	char *buf;
	size_t len, cap;
	bool oom;
};

__attribute__((format(printf, 2, 3)))
static void put(struct page *p, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (int tries = 0; tries < 2 && !p->oom; tries++) {
		va_start(ap, fmt);
		n = vsnprintf(p->buf + p->len, p->cap - p->len, fmt, ap);
		va_end(ap);
		if (n >= 0 && (size_t)n < p->cap - p->len) {
			p->len += (size_t)n;
			return;
		}
		size_t cap = 2 * (p->cap + (size_t)(n > 0 ? n : 0) + 1);
		char *b = realloc(p->buf, cap);

		if (!b)
			p->oom = true;
		else
			p->buf = b, p->cap = cap;
	}
}

/* A label value: the shown text, then '\\' and '"' escaped for the format. */
static void put_label(struct page *p, const char *s, size_t len)
{
	char shown[FC_KEY_MAX * 4 + 1], out[sizeof(shown) * 2];
	size_t o = 0;

	esc_text(shown, sizeof(shown), s, len, 0);
	for (const char *c = shown; *c; c++) {
		if (*c == '\\' || *c == '"')
			out[o++] = '\\';
		out[o++] = *c;
	}
	out[o] = '\0';
	put(p, "%s", out);
}

static void family(struct page *p, const char *name, const char *type, const char *help)
{
	put(p, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static bool same_name_before(const struct watch *w, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (!strcmp(w->names[j], w->names[i]))
			return true;
	return false;
}

static void samples_family(struct page *p, const struct watch *w)
{
	family(p, "perfring_samples_total", "counter",
	       "Samples delivered to the callback, per event and CPU.");
	for (size_t i = 0; i < w->nnames; i++) {
		if (same_name_before(w, i))
			continue;
		for (size_t c = 0; c < w->ncpu; c++) {
			uint64_t n = 0;

			if (!w->cpus[c].ever) /* a possible CPU never online: no series */
				continue;
			for (size_t j = i; j < w->nnames; j++)
				if (!strcmp(w->names[j], w->names[i]))
					n += w->ev_cpu_samples[j * w->ncpu + c];
			put(p, "perfring_samples_total{event=\"");
			put_label(p, w->names[i], strlen(w->names[i]));
			put(p, "\",cpu=\"%d\"} %llu\n", w->cpus[c].cpu, (unsigned long long)n);
		}
	}
}

enum cpu_field { F_RECORDS, F_BYTES, F_LOST, F_WAKEUPS };

static uint64_t cpu_field(const struct perfring_cpu_stats *st, enum cpu_field f)
{
	switch (f) {
	case F_RECORDS: return st->records;
	case F_BYTES: return st->bytes;
	case F_LOST: return st->lost;
	default: return st->wakeups;
	}
}

static void cpu_families(struct page *p, const struct watch *w,
			 const struct perfring_cpu_stats *st)
{
	static const struct { const char *name, *help; } fam[] = {
		[F_RECORDS] = { "perfring_records_total",
				"Records read from the CPU's ring (samples and kernel records)." },
		[F_BYTES] = { "perfring_bytes_total", "Ring bytes read on the CPU." },
		[F_LOST] = { "perfring_lost_total",
			     "Records the kernel dropped because the CPU's ring was full." },
		[F_WAKEUPS] = { "perfring_wakeups_total",
				"Kernel readiness wakeups handled for the CPU's ring." },
	};

	for (unsigned f = 0; f < sizeof(fam) / sizeof(fam[0]); f++) {
		family(p, fam[f].name, "counter", fam[f].help);
		for (size_t c = 0; c < w->ncpu; c++)
			if (w->cpus[c].ever)
				put(p, "%s{cpu=\"%d\"} %llu\n", fam[f].name, w->cpus[c].cpu,
				    (unsigned long long)cpu_field(&st[c], (enum cpu_field)f));
	}
	family(p, "perfring_ring_fill_max_ratio", "gauge",
	       "The highest ring fill seen at a read since the start, from 0 to 1.");
	for (size_t c = 0; c < w->ncpu; c++)
		if (w->cpus[c].ever)
			put(p, "perfring_ring_fill_max_ratio{cpu=\"%d\"} %.2f\n", w->cpus[c].cpu,
			    st[c].max_fill_pct / 100.0);
}

/* --bpf-map ring buffers: a series per map, labelled with its pin. */
static void ringbuf_families(struct page *p, const struct watch *w)
{
	static const struct { const char *name, *help; } fam[] = {
		{ "perfring_ringbuf_records_total", "Records read from the BPF ring buffer." },
		{ "perfring_ringbuf_bytes_total", "Bytes of those records' data." },
		{ "perfring_ringbuf_discarded_total",
		  "Records the BPF program discarded (bpf_ringbuf_discard), skipped." },
	};

	if (!w->nrb)
		return;
	for (unsigned f = 0; f < sizeof(fam) / sizeof(fam[0]); f++) {
		family(p, fam[f].name, "counter", fam[f].help);
		for (size_t i = 0; i < w->nrb; i++) {
			struct perfring_ringbuf_stats st = { 0 };
			uint64_t v[] = { 0, 0, 0 };

			perfring_ringbuf_stats(w->rbs[i].e->ev, &st);
			v[0] = st.records, v[1] = st.bytes, v[2] = st.discarded;
			put(p, "%s{map=\"", fam[f].name);
			put_label(p, w->rbs[i].path, strlen(w->rbs[i].path));
			put(p, "\"} %llu\n", (unsigned long long)v[f]);
		}
	}
}

static void latency_family(struct page *p, const struct watch *w)
{
	uint64_t cum = 0;

	family(p, "perfring_delivery_latency_seconds", "histogram",
	       "Time from a sample's timestamp to its callback (CLOCK_MONOTONIC).");
	for (unsigned i = 0; i < WATCH_LAT_BUCKETS; i++) {
		cum += w->lat_b[i];
		put(p, "perfring_delivery_latency_seconds_bucket{le=\"%g\"} %llu\n",
		    (double)watch_lat_le_ns[i] / 1e9, (unsigned long long)cum);
	}
	cum += w->lat_b[WATCH_LAT_BUCKETS];
	put(p, "perfring_delivery_latency_seconds_bucket{le=\"+Inf\"} %llu\n"
	    "perfring_delivery_latency_seconds_sum %.9f\n"
	    "perfring_delivery_latency_seconds_count %llu\n", (unsigned long long)cum,
	    (double)w->lat_sum_ns / 1e9, (unsigned long long)cum);
}

static void by_series(struct page *p, const struct fieldcount *fc, const char *value,
		      size_t len, uint64_t n)
{
	put(p, "perfring_samples_by_field_total{event=\"");
	put_label(p, fc->event, strlen(fc->event));
	put(p, "\",field=\"");
	put_label(p, fc->field, strlen(fc->field));
	put(p, "\",value=\"");
	put_label(p, value, len);
	put(p, "\"} %llu\n", (unsigned long long)n);
}

static void by_family(struct page *p, const struct watch *w)
{
	if (!w->nby)
		return;
	family(p, "perfring_samples_by_field_total", "counter",
	       "Samples per value of a tracepoint field (--by); past --max-series "
	       "values, value=\"other\".");
	for (size_t i = 0; i < w->a.by_cnt; i++) {
		const struct fieldcount *fc = &w->by[i];
		uint64_t other = fc->other_total;

		if (!fc->ev)
			continue;
		for (size_t j = 0; j < fc->n; j++) {
			if (fc->e[j].len == 5 && !memcmp(fc->e[j].key, "other", 5))
				other += fc->e[j].total;   /* one series for both */
			else
				by_series(p, fc, fc->e[j].key, fc->e[j].len, fc->e[j].total);
		}
		by_series(p, fc, "other", 5, other);
	}
}

int watch_metrics_page(const struct watch *w, char **buf, size_t *len)
{
	struct page p = { .buf = malloc(16384), .cap = 16384 };
	struct perfring_cpu_stats *st = calloc(w->ncpu ? w->ncpu : 1, sizeof(*st));

	if (!st || !p.buf) {
		free(st);
		free(p.buf);
		return -ENOMEM;
	}
	for (size_t c = 0; c < w->ncpu; c++)
		perfring_session_cpu_stats(w->s, w->cpus[c].cpu, &st[c]);
	samples_family(&p, w);
	cpu_families(&p, w, st);
	ringbuf_families(&p, w);
	latency_family(&p, w);
	by_family(&p, w);
	free(st);
	if (p.oom) {
		free(p.buf);
		return -ENOMEM;
	}
	*buf = p.buf;
	*len = p.len;
	return 0;
}
