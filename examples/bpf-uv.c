/* SPDX-License-Identifier: MIT */
/* bpf-uv: a libbpf tool read on libuv. libbpf loads and attaches the BPF
 * program (examples/bpf/getpid.bpf.c, compiled by clang -target bpf);
 * libperfring-uv reads its perf event array instead of libbpf's
 * perf_buffer, so the records come from the application's own loop with a
 * watermark, a flush timer and per-CPU stats. The tool makes its own
 * getpid(2) calls, -n over -d seconds, and reports what arrived.
 * usage: bpf-uv [-o OBJECT] [-n CALLS] [-d SECONDS] */
#include <perfring/perfring-uv.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef BPF_UV_OBJECT
#define BPF_UV_OBJECT "getpid.bpf.o"
#endif
#define TICK_MS 100

struct getpid_rec {           /* as examples/bpf/getpid.bpf.c writes it */
	uint64_t magic;
	uint32_t tgid, tid;
	uint64_t ns;
};

struct tool {
	const char *object;
	long calls, made;
	int ticks, max_ticks;
	uint64_t records, short_records, delay_ns;
	struct bpf_object *obj;
	struct bpf_link *link;
	struct perfring_session *s;
	struct perfring_libuv *a;
	uv_timer_t tick;
};

static int on_record(const struct perfring_sample *smp, void *ctx)
{
	struct tool *t = ctx;
	struct getpid_rec r;

	if (smp->raw_size < sizeof(r)) {
		t->short_records++;
		return 0;
	}
	memcpy(&r, smp->raw, sizeof(r));
	t->records++;
	t->delay_ns += smp->time - r.ns;  /* both CLOCK_MONOTONIC */
	return 0;
}

/* libbpf's side: open, load, tell the program our tgid, attach. */
static int load_bpf(struct tool *t)
{
	struct bpf_program *prog;
	uint32_t key = 0, tgid = (uint32_t)getpid();
	int err;

	t->obj = bpf_object__open_file(t->object, NULL);
	if (!t->obj)
		return -errno;
	if ((err = bpf_object__load(t->obj)) ||
	    (err = bpf_map__update_elem(bpf_object__find_map_by_name(t->obj, "target"), &key,
					sizeof(key), &tgid, sizeof(tgid), BPF_ANY)))
		return err;
	prog = bpf_object__find_program_by_name(t->obj, "on_getpid");
	t->link = prog ? bpf_program__attach(prog) : NULL;
	return t->link ? 0 : -errno;
}

/* libperfring's side: what replaces perf_buffer__new and its poll loop. */
static int read_on_loop(struct tool *t, uv_loop_t *loop)
{
	struct perfring_opts o = { .sz = sizeof(o), .wakeup_watermark = 4096 };
	struct perfring_event *ev;
	int map_fd = bpf_object__find_map_fd_by_name(t->obj, "events");

	if (perfring_session_new(&o, &t->s) ||
	    perfring_session_add_bpf_output(t->s, map_fd, &ev) ||
	    perfring_event_set_callback(ev, on_record, t) ||
	    perfring_session_start(t->s) ||
	    perfring_libuv_attach(t->s, loop, NULL, &t->a)) {
		fprintf(stderr, "bpf-uv: %s\n", perfring_session_last_error(t->s));
		return -1;
	}
	return 0;
}

/* Every tick, this tick's share of the calls; then the end. */
static void on_tick(uv_timer_t *h)
{
	struct tool *t = h->data;
	long n = t->calls * (t->ticks + 1) / t->max_ticks - t->made;

	if (t->ticks++ == t->max_ticks) {
		perfring_libuv_detach(t->a, NULL, NULL);
		uv_close((uv_handle_t *)h, NULL);
		return;
	}
	for (; n > 0; n--, t->made++)
		syscall(SYS_getpid);
}

static uint64_t lost(const struct perfring_session *s)
{
	const struct perfring_cpu_fd *fds;
	struct perfring_cpu_stats st;
	size_t n = perfring_session_fds(s, &fds);
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++)
		if (perfring_session_cpu_stats(s, fds[i].cpu, &st) == 0)
			sum += st.lost;
	return sum;
}

static int parse_args(struct tool *t, int argc, char **argv)
{
	int opt;

	while ((opt = getopt(argc, argv, "o:n:d:")) != -1) {
		if (opt == 'o')
			t->object = optarg;
		else if (opt == 'n')
			t->calls = strtol(optarg, NULL, 10);
		else if (opt == 'd')
			t->max_ticks = atoi(optarg) * 1000 / TICK_MS;
		else
			return -1;
	}
	return t->calls >= 0 && t->max_ticks > 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct tool t = { .object = BPF_UV_OBJECT, .calls = 10000, .max_ticks = 10 };
	uv_loop_t *loop = uv_default_loop();
	int err;

	if (parse_args(&t, argc, argv)) {
		fprintf(stderr, "usage: bpf-uv [-o OBJECT] [-n CALLS] [-d SECONDS]\n");
		return 2;
	}
	if ((err = load_bpf(&t))) {
		fprintf(stderr, "bpf-uv: loading %s: %s\n", t.object, strerror(-err));
		bpf_link__destroy(t.link);
		bpf_object__close(t.obj);
		return 1;
	}
	if (read_on_loop(&t, loop) == 0) {
		uv_timer_init(loop, &t.tick);
		t.tick.data = &t;
		uv_timer_start(&t.tick, on_tick, TICK_MS, TICK_MS);
		uv_run(loop, UV_RUN_DEFAULT);
		/* What is still below the watermark, and the drops the kernel counted. */
		perfring_session_stop(t.s);
		perfring_session_parse_all(t.s);
		printf("bpf-uv: %llu records of %ld calls, %llu lost, %llu short; %.1f us from "
		       "bpf_ktime_get_ns() to the sample's time on average\n",
		       (unsigned long long)t.records, t.made, (unsigned long long)lost(t.s),
		       (unsigned long long)t.short_records,
		       t.records ? (double)t.delay_ns / (double)t.records / 1e3 : 0.0);
	}
	perfring_session_free(t.s);   /* deletes the map entries it wrote */
	bpf_link__destroy(t.link);
	bpf_object__close(t.obj);
	uv_loop_close(loop);
	return t.s && t.records == (uint64_t)t.made ? 0 : 1;
}
