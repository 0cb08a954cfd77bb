/* SPDX-License-Identifier: MIT */
/* getpidsnoop: a BPF ring-buffer tool in the style of libbpf-tools, read on
 * libuv. Its BPF program (raw instructions built below: no clang, no
 * skeleton, no libbpf) runs on syscalls:sys_enter_getpid and writes one
 * event per call with bpf_ringbuf_reserve() + bpf_ringbuf_submit(). Where a
 * libbpf tool calls ring_buffer__new() and loops on ring_buffer__poll(),
 * this one gives the map to perfring_session_add_bpf_ringbuf() and runs
 * uv_default_loop() through libperfring-uv: the events arrive on the
 * application's own loop, beside its timers and signals, one line each.
 * A ring buffer has no drop count in the kernel: the program counts its
 * failed reserves in an array map, read at the end. The session's lost
 * callback (a perf_buffer port's lost_cb) is wired too, for perf rings.
 * usage: getpidsnoop [-p PID] [-c COUNT] [-d SECONDS] [-s RING_BYTES] */
#include <perfring/perfring-uv.h>

#include <errno.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

struct event {                /* what the program writes, 32 bytes */
	uint64_t ts;          /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	uint32_t pid, tid;
	char comm[16];
};

struct tool {
	pid_t target;         /* -p: 0 = every process */
	uint64_t max, seen;   /* -c: stop after this many events (0 = never) */
	double duration;      /* -d: 0 = until Ctrl-C */
	uint32_t ring_bytes;  /* -s: a power of two, a multiple of the page */
	int rb, drops, prog, tp;
	struct perfring_session *s;
	struct perfring_event *ev;
	struct perfring_libuv *a;
	uv_signal_t sigint, sigterm;
	uv_timer_t timer;
	bool ending;
};

/* ------------------------------------------------ the BPF side (libbpf's) */

#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), \
						 .off = (o), .imm = (i) })
#define MOV_REG(d, s) INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define MOV_IMM(d, i) INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define ADD_IMM(d, i) INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define RSH_IMM(d, i) INSN(BPF_ALU64 | BPF_RSH | BPF_K, d, 0, 0, i)
#define LD_MAP(d, fd) INSN(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, fd), INSN(0, 0, 0, 0, 0)
#define STX(sz, d, s, o) INSN(BPF_STX | (sz) | BPF_MEM, d, s, o, 0)
#define ST_IMM(sz, d, o, i) INSN(BPF_ST | (sz) | BPF_MEM, d, 0, o, i)
#define XADD(d, s) INSN(BPF_STX | BPF_DW | BPF_ATOMIC, d, s, 0, BPF_ADD)
#define JNE_IMM(d, i, o) INSN(BPF_JMP | BPF_JNE | BPF_K, d, 0, o, i)
#define JEQ_IMM(d, i, o) INSN(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, i)
#define JA(o) INSN(BPF_JMP | BPF_JA, 0, 0, o, 0)
#define CALL(f) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define EXIT() INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

static int sys_bpf(int cmd, union bpf_attr *a)
{
	return (int)syscall(SYS_bpf, cmd, a, sizeof(*a));
}

static int map_create(uint32_t type, uint32_t key, uint32_t value, uint32_t entries)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = key;
	a.value_size = value;
	a.max_entries = entries;
	return sys_bpf(BPF_MAP_CREATE, &a);
}

/* if (target && tgid != target) return 1;
 * e = bpf_ringbuf_reserve(&rb, 32, 0); if (!e) { drops[0]++; return 1; }
 * e->ts = ktime; e->pid = tgid; e->tid = tid; get_current_comm(e->comm);
 * bpf_ringbuf_submit(e, 0); return 1;   (0 would drop the tracepoint's samples) */
static int load(struct tool *t)
{
	struct bpf_insn prog[] = {
		CALL(BPF_FUNC_get_current_pid_tgid),
		MOV_REG(7, 0),
		RSH_IMM(0, 32),
		t->target ? JNE_IMM(0, t->target, 30) : JA(0),             /* -> out */
		LD_MAP(1, t->rb),
		MOV_IMM(2, (int32_t)sizeof(struct event)),
		MOV_IMM(3, 0),
		CALL(BPF_FUNC_ringbuf_reserve),
		JEQ_IMM(0, 0, 15),                                          /* -> drop */
		MOV_REG(8, 0),
		CALL(BPF_FUNC_ktime_get_ns),
		STX(BPF_DW, 8, 0, 0),
		MOV_REG(9, 7),
		RSH_IMM(9, 32),
		STX(BPF_W, 8, 9, 8),
		STX(BPF_W, 8, 7, 12),
		MOV_REG(1, 8),
		ADD_IMM(1, 16),
		MOV_IMM(2, 16),
		CALL(BPF_FUNC_get_current_comm),
		MOV_REG(1, 8),
		MOV_IMM(2, 0),
		CALL(BPF_FUNC_ringbuf_submit),
		JA(9),                                                      /* -> out */
		ST_IMM(BPF_W, 10, -4, 0),                                   /* drop: */
		LD_MAP(1, t->drops),
		MOV_REG(2, 10),
		ADD_IMM(2, -4),
		CALL(BPF_FUNC_map_lookup_elem),
		JEQ_IMM(0, 0, 2),                                           /* -> out */
		MOV_IMM(1, 1),
		XADD(0, 1),
		MOV_IMM(0, 1),                                              /* out: */
		EXIT(),
	};
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_TRACEPOINT;
	a.insns = (uint64_t)(uintptr_t)prog;
	a.insn_cnt = sizeof(prog) / sizeof(prog[0]);
	a.license = (uint64_t)(uintptr_t)"GPL";
	return t->prog = sys_bpf(BPF_PROG_LOAD, &a);
}

/* The program on the tracepoint: one perf event (CPU 0 is enough, a
 * tracepoint has one program list for every CPU), PERF_EVENT_IOC_SET_BPF. */
static int attach(struct tool *t)
{
	struct perf_event_attr pa = { .size = sizeof(pa), .type = PERF_TYPE_TRACEPOINT,
				      .sample_period = 1 };
	FILE *f = fopen("/sys/kernel/tracing/events/syscalls/sys_enter_getpid/id", "r");
	unsigned long long id;

	if (!f || fscanf(f, "%llu", &id) != 1) {
		if (f)
			fclose(f);
		errno = ENOENT;
		return -1;
	}
	fclose(f);
	pa.config = id;
	t->tp = (int)syscall(SYS_perf_event_open, &pa, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (t->tp < 0 || ioctl(t->tp, PERF_EVENT_IOC_SET_BPF, t->prog) < 0)
		return -1;
	return 0;
}

static int open_bpf(struct tool *t)
{
	t->rb = map_create(BPF_MAP_TYPE_RINGBUF, 0, 0, t->ring_bytes);
	t->drops = map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 1);
	if (t->rb < 0 || t->drops < 0 || load(t) < 0 || attach(t) < 0)
		return -errno;
	return 0;
}

/* Detaching is closing the tracepoint's event; the program and maps go
 * with their last fd. */
static void close_bpf(struct tool *t)
{
	int fds[] = { t->tp, t->prog, t->drops, t->rb };

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

static uint64_t dropped(const struct tool *t)
{
	uint32_t key = 0;
	uint64_t n = 0;
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)t->drops;
	a.key = (uint64_t)(uintptr_t)&key;
	a.value = (uint64_t)(uintptr_t)&n;
	return sys_bpf(BPF_MAP_LOOKUP_ELEM, &a) < 0 ? 0 : n;
}

/* ------------------------------------------ the reading side (libperfring) */

/* The tool is ending: a second SIGINT or SIGTERM (a second Ctrl-C, or
 * timeout(1), which signals the command and then its whole group) must not
 * kill it before its summary once closing the watchers has given the
 * signals back their default action. Blocked, they die with the process. */
static void end_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

static void end(struct tool *t)
{
	if (t->ending)
		return;
	t->ending = true;
	end_signals();
	perfring_libuv_detach(t->a, NULL, NULL);   /* safe inside the sample callback */
	uv_close((uv_handle_t *)&t->sigint, NULL);
	uv_close((uv_handle_t *)&t->sigterm, NULL);
	uv_close((uv_handle_t *)&t->timer, NULL);
}

/* libbpf-tools' handle_event: one line per event. */
static int on_event(const struct perfring_sample *smp, void *ctx)
{
	struct tool *t = ctx;
	struct event e;

	if (smp->raw_size != sizeof(e) || (t->max && t->seen == t->max))
		return 0;
	memcpy(&e, smp->raw, sizeof(e));
	e.comm[sizeof(e.comm) - 1] = '\0';
	printf("%-14.6f %-7u %-7u %s\n", (double)e.ts / 1e9, e.pid, e.tid, e.comm);
	if (++t->seen == t->max)
		end(t);
	return 0;
}

/* libbpf-tools' handle_lost_events: for perf rings (a perf_buffer port). */
static void on_lost(int cpu, uint64_t lost, void *ctx)
{
	(void)ctx;
	fprintf(stderr, "lost %llu events on CPU #%d\n", (unsigned long long)lost, cpu);
}

static void on_signal(uv_signal_t *h, int signo)
{
	(void)signo;
	end(h->data);
}

static void on_timer(uv_timer_t *h)
{
	end(h->data);
}

/* What replaces ring_buffer__new() and the ring_buffer__poll() loop. */
static int read_on_loop(struct tool *t, uv_loop_t *loop)
{
	struct perfring_opts o = { .sz = sizeof(o) };
	struct perfring_ringbuf_opts ro = { .sz = sizeof(ro), .flags = PERFRING_RINGBUF_TIME,
					    .time_offset = offsetof(struct event, ts) };

	if (perfring_session_new(&o, &t->s) ||
	    perfring_session_add_bpf_ringbuf(t->s, t->rb, &ro, &t->ev) ||
	    perfring_event_set_callback(t->ev, on_event, t) ||
	    perfring_session_set_lost_callback(t->s, on_lost, t) ||
	    perfring_session_start(t->s) ||
	    perfring_libuv_attach(t->s, loop, NULL, &t->a)) {
		fprintf(stderr, "getpidsnoop: %s\n", perfring_session_last_error(t->s));
		return -1;
	}
	uv_signal_init(loop, &t->sigint);
	uv_signal_init(loop, &t->sigterm);
	uv_timer_init(loop, &t->timer);
	t->sigint.data = t->sigterm.data = t->timer.data = t;
	uv_signal_start(&t->sigint, on_signal, SIGINT);
	uv_signal_start(&t->sigterm, on_signal, SIGTERM);
	if (t->duration > 0)
		uv_timer_start(&t->timer, on_timer, (uint64_t)(t->duration * 1000), 0);
	return 0;
}

static int parse_args(struct tool *t, int argc, char **argv)
{
	char *end = NULL;
	int opt;

	while ((opt = getopt(argc, argv, "p:c:d:s:")) != -1) {
		errno = 0;
		if (opt == 'p')
			t->target = (pid_t)strtol(optarg, &end, 10);
		else if (opt == 'c')
			t->max = strtoull(optarg, &end, 10);
		else if (opt == 'd')
			t->duration = strtod(optarg, &end);
		else if (opt == 's')
			t->ring_bytes = (uint32_t)strtoul(optarg, &end, 0);
		else
			return -1;
		if (errno || end == optarg || *end || *optarg == '-')
			return -1;
	}
	return optind == argc && t->target >= 0 && t->duration < 1e6 ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct tool t = { .ring_bytes = 256 * 1024, .rb = -1, .drops = -1, .prog = -1, .tp = -1 };
	uv_loop_t *loop = uv_default_loop();
	int err, code = 1;

	if (parse_args(&t, argc, argv)) {
		fprintf(stderr, "usage: getpidsnoop [-p PID] [-c COUNT] [-d SECONDS] "
			"[-s RING_BYTES]\n");
		return 2;
	}
	if ((err = open_bpf(&t))) {
		fprintf(stderr, "getpidsnoop: loading the BPF program: %s\n", strerror(-err));
	} else if (read_on_loop(&t, loop) == 0) {
		fprintf(stderr, "Tracing getpid(2)... Hit Ctrl-C to end.\n");
		printf("%-14s %-7s %-7s %s\n", "TIME(s)", "PID", "TID", "COMM");
		fflush(stdout);
		uv_run(loop, UV_RUN_DEFAULT);
		/* What was committed since the loop's last drain (unless -c is met). */
		perfring_session_stop(t.s);
		perfring_ringbuf_parse(t.ev, 0, NULL);
		fflush(stdout);
		fprintf(stderr, "getpidsnoop: %llu events, %llu dropped by the program (ring "
			"buffer full)\n", (unsigned long long)t.seen, (unsigned long long)dropped(&t));
		code = 0;
	}
	perfring_session_free(t.s);   /* its own duplicate of the map goes with it */
	close_bpf(&t);
	uv_loop_close(loop);
	return code;
}
