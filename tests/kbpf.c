/* SPDX-License-Identifier: MIT */
/* The tests' BPF program on sys_enter_getpid, as raw instructions. */
#include "kbpf.h"

#include <perfring/perfring.h>

#include <errno.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), \
						 .off = (o), .imm = (i) })
#define MOV64_REG(d, s) INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define MOV64_IMM(d, i) INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV32_IMM(d, i) INSN(BPF_ALU | BPF_MOV | BPF_K, d, 0, 0, i)
#define ADD64_IMM(d, i) INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define RSH64_IMM(d, i) INSN(BPF_ALU64 | BPF_RSH | BPF_K, d, 0, 0, i)
#define LD_IMM64(d, s, lo, hi) INSN(BPF_LD | BPF_DW | BPF_IMM, d, s, 0, lo), INSN(0, 0, 0, 0, hi)
#define STX(sz, d, s, o) INSN(BPF_STX | (sz) | BPF_MEM, d, s, o, 0)
#define ST_IMM(sz, d, o, i) INSN(BPF_ST | (sz) | BPF_MEM, d, 0, o, i)
#define XADD64(d, s, o) INSN(BPF_STX | BPF_DW | BPF_ATOMIC, d, s, o, BPF_ADD)
#define JNE_IMM(d, i, o) INSN(BPF_JMP | BPF_JNE | BPF_K, d, 0, o, i)
#define JEQ_IMM(d, i, o) INSN(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, i)
#define CALL(f) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define EXIT() INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

static long sys_bpf(int cmd, union bpf_attr *a)
{
	return syscall(SYS_bpf, cmd, a, sizeof(*a));
}

static int map_create(uint32_t type, uint32_t vsize, uint32_t entries)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = 4;
	a.value_size = vsize;
	a.max_entries = entries;
	a.map_flags = 0;
	snprintf(a.map_name, sizeof(a.map_name), "kbpf_%u", type);
	return (int)sys_bpf(BPF_MAP_CREATE, &a);
}

int kbpf_possible_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
	int lo = 0, hi = 0, n;

	if (!f)
		return -errno;
	/* "0-N" or "0" */
	n = fscanf(f, "%d-%d", &lo, &hi);
	fclose(f);
	return n == 2 ? hi + 1 : lo + 1;
}

int kbpf_array_map(uint32_t entries)
{
	return map_create(BPF_MAP_TYPE_ARRAY, 4, entries);
}

/* if (tgid != want) return 1; rec = {magic, tgid, tid, ktime}; r =
 * output(ctx, out, CURRENT_CPU, &rec, 24); res.last = r; if (r) res.failed++; return 1 */
static int load(struct kbpf *b, pid_t tgid, char *why, size_t len)
{
	struct bpf_insn prog[] = {
		MOV64_REG(6, 1),
		CALL(BPF_FUNC_get_current_pid_tgid),
		MOV64_REG(7, 0),
		RSH64_IMM(0, 32),
		JNE_IMM(0, (int32_t)tgid, 28),                           /* -> exit */
		LD_IMM64(1, 0, (int32_t)(uint32_t)KBPF_MAGIC, (int32_t)(KBPF_MAGIC >> 32)),
		STX(BPF_DW, 10, 1, -24),
		STX(BPF_W, 10, 0, -16),
		STX(BPF_W, 10, 7, -12),
		CALL(BPF_FUNC_ktime_get_ns),
		STX(BPF_DW, 10, 0, -8),
		MOV64_REG(1, 6),
		LD_IMM64(2, BPF_PSEUDO_MAP_FD, b->out_map, 0),
		LD_IMM64(3, 0, -1, 0),                                 /* BPF_F_CURRENT_CPU */
		MOV64_REG(4, 10),
		ADD64_IMM(4, -24),
		MOV64_IMM(5, (int32_t)sizeof(struct kbpf_rec)),
		CALL(BPF_FUNC_perf_event_output),
		MOV64_REG(8, 0),
		ST_IMM(BPF_W, 10, -32, 0),
		LD_IMM64(1, BPF_PSEUDO_MAP_FD, b->res_map, 0),
		MOV64_REG(2, 10),
		ADD64_IMM(2, -32),
		CALL(BPF_FUNC_map_lookup_elem),
		JEQ_IMM(0, 0, 4),                                         /* -> exit */
		STX(BPF_DW, 0, 8, 0),
		JEQ_IMM(8, 0, 2),                                         /* -> exit */
		MOV64_IMM(1, 1),
		XADD64(0, 1, 8),
		MOV64_IMM(0, 1), /* 0 would drop the tracepoint's own samples, everyone's */
		EXIT(),
	};
	static char log[65536];
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_TRACEPOINT;
	a.insns = (uint64_t)(uintptr_t)prog;
	a.insn_cnt = sizeof(prog) / sizeof(prog[0]);
	a.license = (uint64_t)(uintptr_t)"GPL";
	a.log_buf = (uint64_t)(uintptr_t)log;
	a.log_size = sizeof(log);
	a.log_level = 1;
	log[0] = '\0';
	b->prog = (int)sys_bpf(BPF_PROG_LOAD, &a);
	if (b->prog < 0 && why)
		snprintf(why, len, "BPF_PROG_LOAD: %s: %s", strerror(errno), log);
	return b->prog < 0 ? -errno : 0;
}

static int tracepoint_id(void)
{
	FILE *f = fopen("/sys/kernel/tracing/events/syscalls/sys_enter_getpid/id", "r");
	int id = -1;

	if (!f)
		f = fopen("/sys/kernel/debug/tracing/events/syscalls/sys_enter_getpid/id", "r");
	if (!f)
		return -errno;
	if (fscanf(f, "%d", &id) != 1)
		id = -EINVAL;
	fclose(f);
	return id;
}

/* One event on CPU 0 is enough: a tracepoint has one program list, run on
 * every hit on every CPU. */
static int attach(struct kbpf *b, char *why, size_t len)
{
	struct perf_event_attr a;
	int id = tracepoint_id();

	if (id < 0)
		return id;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = (uint64_t)id;
	a.sample_period = 1;
	a.disabled = 1;
	b->tp_fd = (int)syscall(SYS_perf_event_open, &a, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (b->tp_fd < 0 || ioctl(b->tp_fd, PERF_EVENT_IOC_SET_BPF, b->prog) < 0 ||
	    ioctl(b->tp_fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
		if (why)
			snprintf(why, len, "attaching to sys_enter_getpid: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

int kbpf_open(struct kbpf *b, pid_t tgid, uint32_t entries, char *why, size_t len)
{
	int err;

	*b = (struct kbpf){ -1, -1, -1, -1, 0 };
	b->out_entries = entries ? entries : (uint32_t)kbpf_possible_cpus();
	b->out_map = map_create(BPF_MAP_TYPE_PERF_EVENT_ARRAY, 4, b->out_entries);
	b->res_map = map_create(BPF_MAP_TYPE_ARRAY, 16, 1);
	if (b->out_map < 0 || b->res_map < 0) {
		err = -errno;
		if (why)
			snprintf(why, len, "BPF_MAP_CREATE: %s", strerror(errno));
		kbpf_close(b);
		return err;
	}
	if ((err = load(b, tgid, why, len)) || (err = attach(b, why, len)))
		kbpf_close(b);
	return err;
}

void kbpf_close(struct kbpf *b)
{
	int *fds[] = { &b->tp_fd, &b->prog, &b->res_map, &b->out_map };
	size_t i;

	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

static int elem(int cmd, int map, uint32_t key, void *value)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)map;
	a.key = (uint64_t)(uintptr_t)&key;
	a.value = (uint64_t)(uintptr_t)value;
	return sys_bpf(cmd, &a) < 0 ? -errno : 0;
}

int64_t kbpf_result(const struct kbpf *b, uint32_t i)
{
	int64_t v[2] = { 0, 0 };

	return i > 1 || elem(BPF_MAP_LOOKUP_ELEM, b->res_map, 0, v) ? INT64_MIN : v[i];
}

int kbpf_delete(int map, uint32_t key)
{
	return elem(BPF_MAP_DELETE_ELEM, map, key, NULL);
}

int kbpf_update(int map, uint32_t key, uint32_t value)
{
	return elem(BPF_MAP_UPDATE_ELEM, map, key, &value);
}

/* From fdinfo: "prog_id:" or "map_id:". */
uint32_t kbpf_id(int fd)
{
	char path[64], line[128];
	unsigned id = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (!(f = fopen(path, "r")))
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "prog_id: %u", &id) == 1 || sscanf(line, "map_id: %u", &id) == 1)
			break;
	fclose(f);
	return id;
}

static int exists(int cmd, uint32_t id)
{
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.prog_id = id; /* map_id shares the field */
	fd = (int)sys_bpf(cmd, &a);
	if (fd >= 0)
		close(fd);
	return fd >= 0 || errno != ENOENT;
}

int kbpf_prog_exists(uint32_t id)
{
	return exists(BPF_PROG_GET_FD_BY_ID, id);
}

int kbpf_map_exists(uint32_t id)
{
	return exists(BPF_MAP_GET_FD_BY_ID, id);
}

static void bad(struct kbpf_check *c, uint64_t *count, const char *what,
		const struct perfring_sample *s)
{
	(*count)++;
	if (!c->first_bad[0])
		snprintf(c->first_bad, sizeof(c->first_bad), "sample %llu on CPU %d: %s "
			 "(raw_size %u, pid %u, tid %u, time %llu)", (unsigned long long)c->n,
			 s->cpu, what, s->raw_size, s->pid, s->tid,
			 (unsigned long long)s->time);
}

int kbpf_check_cb(const struct perfring_sample *s, void *ctx)
{
	struct kbpf_check *c = ctx;
	struct kbpf_rec r;
	uint64_t t1 = c->t1 ? c->t1 : UINT64_MAX;

	c->n++;
	c->raw_size = s->raw_size;
	if (s->cpu >= 0 && s->cpu < 64)
		c->per_cpu[s->cpu]++;
	if (s->time < c->last_time)
		c->out_of_order++;
	c->last_time = s->time;
	if (s->raw_size != 28 || !s->raw || s->record->size != 72) {
		bad(c, &c->bad_size, "size", s);
		return 0;
	}
	memcpy(&r, s->raw, sizeof(r));
	if (r.magic != KBPF_MAGIC)
		bad(c, &c->bad_magic, "magic", s);
	if (r.tgid != c->tgid || s->pid != c->tgid || (c->tid && (r.tid != c->tid ||
							    s->tid != c->tid)))
		bad(c, &c->bad_task, "task", s);
	if (r.ns < c->t0 || r.ns > t1 || s->time < r.ns || s->time > t1)
		bad(c, &c->bad_time, "time", s);
	return 0;
}

uint64_t kbpf_check_bad(const struct kbpf_check *c)
{
	return c->bad_size + c->bad_magic + c->bad_task + c->bad_time;
}

int kbpf_wait_gone(const uint32_t *ids, int n)
{
	const struct timespec nap = { 0, 10000000 };
	int i, t, left = 0;

	for (i = 0; i < n; i++) {
		for (t = 0; t < 1000 && (kbpf_prog_exists(ids[i]) || kbpf_map_exists(ids[i])); t++)
			nanosleep(&nap, NULL);
		left += kbpf_prog_exists(ids[i]) || kbpf_map_exists(ids[i]);
	}
	return left;
}

int kbpf_close_gone(struct kbpf *b)
{
	uint32_t ids[3] = { kbpf_id(b->prog), kbpf_id(b->out_map), kbpf_id(b->res_map) };

	kbpf_close(b);
	return kbpf_wait_gone(ids, 3);
}

/* The ring-buffer programs, emitted with their jumps patched (one builder
 * for the three modes). */
struct emit {
	struct bpf_insn i[512];
	int n;
	int to_exit[8], nexit;    /* jumps to patch to EXIT */
	int to_fail[8], nfail;    /* ... to FAIL */
};

static void put(struct emit *e, struct bpf_insn x)
{
	if (e->n < (int)(sizeof(e->i) / sizeof(e->i[0])))
		e->i[e->n] = x;
	e->n++;
}

static void put_ld64(struct emit *e, int dst, int src, uint64_t v)
{
	struct bpf_insn two[] = { LD_IMM64(dst, src, (int32_t)(uint32_t)v, (int32_t)(v >> 32)) };

	put(e, two[0]);
	put(e, two[1]);
}

/* A forward jump whose target is patched later: kind 0 EXIT, 1 FAIL. */
static void put_jump(struct emit *e, struct bpf_insn j, int kind)
{
	if (kind == 0 && e->nexit < 8)
		e->to_exit[e->nexit++] = e->n;
	else if (kind == 1 && e->nfail < 8)
		e->to_fail[e->nfail++] = e->n;
	put(e, j);
}

static void patch(struct emit *e, const int *at, int n, int target)
{
	int k;

	for (k = 0; k < n; k++)
		e->i[at[k]].off = (int16_t)(target - at[k] - 1);
}

#define AND64_IMM(d, i) INSN(BPF_ALU64 | BPF_AND | BPF_K, d, 0, 0, i)
#define JA(o) INSN(BPF_JMP | BPF_JA, 0, 0, o, 0)

/* The record at base+off (base r10 or r9): magic, tgid, tid, ktime, zeros. */
static void put_record(struct emit *e, int base, int off, uint32_t size)
{
	uint32_t k;

	put_ld64(e, 1, 0, KBPF_MAGIC);
	put(e, STX(BPF_DW, base, 1, off));
	put(e, MOV64_REG(1, 7));
	put(e, RSH64_IMM(1, 32));
	put(e, STX(BPF_W, base, 1, off + 8));
	put(e, STX(BPF_W, base, 7, off + 12));
	put(e, CALL(BPF_FUNC_ktime_get_ns));
	put(e, STX(BPF_DW, base, 0, off + 16));
	for (k = 24; k < size; k += 8)
		put(e, ST_IMM(BPF_DW, base, off + (int)k, 0));
}

/* if (tgid != want) return 1; res = &res_map[0]; odd = res->calls++ & 1;
 * then output, or reserve + submit (or discard when odd); a failure adds
 * one to res->failed; return 1. */
static void rb_program(struct emit *e, const struct kbpf_rb *b, pid_t tgid,
		       enum kbpf_rb_mode mode)
{
	const int rec_off = -8 - (int)b->size;

	put(e, CALL(BPF_FUNC_get_current_pid_tgid));
	put(e, MOV64_REG(7, 0));
	put(e, RSH64_IMM(0, 32));
	put_jump(e, JNE_IMM(0, (int32_t)tgid, 0), 0);
	put(e, ST_IMM(BPF_W, 10, -4, 0));
	put_ld64(e, 1, BPF_PSEUDO_MAP_FD, (uint32_t)b->res_map);
	put(e, MOV64_REG(2, 10));
	put(e, ADD64_IMM(2, -4));
	put(e, CALL(BPF_FUNC_map_lookup_elem));
	put_jump(e, JEQ_IMM(0, 0, 0), 0);
	put(e, MOV64_REG(8, 0));
	put(e, MOV64_IMM(1, 1));
	put(e, INSN(BPF_STX | BPF_DW | BPF_ATOMIC, 8, 1, 8, BPF_ADD | BPF_FETCH));
	put(e, MOV64_REG(6, 1));
	put(e, AND64_IMM(6, 1));
	if (mode == KBPF_RB_OUTPUT) {
		put_record(e, 10, rec_off, b->size);
		put_ld64(e, 1, BPF_PSEUDO_MAP_FD, (uint32_t)b->map);
		put(e, MOV64_REG(2, 10));
		put(e, ADD64_IMM(2, rec_off));
		put(e, MOV64_IMM(3, (int32_t)b->size));
		put(e, MOV64_IMM(4, 0));
		put(e, CALL(BPF_FUNC_ringbuf_output));
		put_jump(e, JEQ_IMM(0, 0, 0), 0);
		put_jump(e, JA(0), 1);
	} else {
		put_ld64(e, 1, BPF_PSEUDO_MAP_FD, (uint32_t)b->map);
		put(e, MOV64_IMM(2, (int32_t)b->size));
		put(e, MOV64_IMM(3, 0));
		put(e, CALL(BPF_FUNC_ringbuf_reserve));
		put_jump(e, JEQ_IMM(0, 0, 0), 1);
		put(e, MOV64_REG(9, 0));
		put_record(e, 9, 0, b->size);
		put(e, MOV64_REG(1, 9));
		put(e, MOV64_IMM(2, 0));
		if (mode == KBPF_RB_DISCARD_ODD) {
			put(e, JNE_IMM(6, 0, 2));
			put(e, CALL(BPF_FUNC_ringbuf_submit));
			put_jump(e, JA(0), 0);
			put(e, CALL(BPF_FUNC_ringbuf_discard));
		} else {
			put(e, CALL(BPF_FUNC_ringbuf_submit));
		}
		put_jump(e, JA(0), 0);
	}
	patch(e, e->to_fail, e->nfail, e->n);
	put(e, MOV64_IMM(1, 1));
	put(e, XADD64(8, 1, 0));
	patch(e, e->to_exit, e->nexit, e->n);
	put(e, MOV64_IMM(0, 1)); /* 0 would drop the tracepoint's own samples */
	put(e, EXIT());
}

static int rb_load(struct kbpf_rb *b, pid_t tgid, enum kbpf_rb_mode mode, char *why, size_t len)
{
	static char log[65536];
	static struct emit e;
	union bpf_attr a;

	memset(&e, 0, sizeof(e));
	rb_program(&e, b, tgid, mode);
	if (e.n > (int)(sizeof(e.i) / sizeof(e.i[0])))
		return -E2BIG;
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_TRACEPOINT;
	a.insns = (uint64_t)(uintptr_t)e.i;
	a.insn_cnt = (uint32_t)e.n;
	a.license = (uint64_t)(uintptr_t)"GPL";
	a.log_buf = (uint64_t)(uintptr_t)log;
	a.log_size = sizeof(log);
	a.log_level = 1;
	log[0] = '\0';
	b->prog = (int)sys_bpf(BPF_PROG_LOAD, &a);
	if (b->prog < 0 && why)
		snprintf(why, len, "BPF_PROG_LOAD: %s: %s", strerror(errno), log);
	return b->prog < 0 ? -errno : 0;
}

int kbpf_rb_open(struct kbpf_rb *b, pid_t tgid, uint32_t ring_bytes, enum kbpf_rb_mode mode,
		 uint32_t rec_size, char *why, size_t len)
{
	struct kbpf tp = { -1, -1, -1, -1, 0 };
	union bpf_attr a;
	int err;

	*b = (struct kbpf_rb){ -1, -1, -1, -1, rec_size };
	if (rec_size < sizeof(struct kbpf_rec) || rec_size % 8 || rec_size > 256 ||
	    mode > KBPF_RB_DISCARD_ODD) {
		if (why)
			snprintf(why, len, "kbpf_rb_open: record size %u or mode %d", rec_size,
				 (int)mode);
		return -EINVAL;
	}
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_RINGBUF;
	a.max_entries = ring_bytes;
	snprintf(a.map_name, sizeof(a.map_name), "kbpf_rb");
	b->map = (int)sys_bpf(BPF_MAP_CREATE, &a);
	b->res_map = map_create(BPF_MAP_TYPE_ARRAY, 16, 1);
	if (b->map < 0 || b->res_map < 0) {
		err = -errno;
		if (why)
			snprintf(why, len, "BPF_MAP_CREATE: %s", strerror(errno));
		kbpf_rb_close(b);
		return err;
	}
	if ((err = rb_load(b, tgid, mode, why, len))) {
		kbpf_rb_close(b);
		return err;
	}
	tp.prog = b->prog;
	err = attach(&tp, why, len);
	b->tp_fd = tp.tp_fd;
	if (err)
		kbpf_rb_close(b);
	return err;
}

void kbpf_rb_close(struct kbpf_rb *b)
{
	int *fds[] = { &b->tp_fd, &b->prog, &b->res_map, &b->map };
	size_t i;

	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

static int64_t rb_result(const struct kbpf_rb *b, int i)
{
	int64_t v[2] = { 0, 0 };
	int err = elem(BPF_MAP_LOOKUP_ELEM, b->res_map, 0, v);

	return err ? err : v[i];
}

int64_t kbpf_rb_failed(const struct kbpf_rb *b)
{
	return rb_result(b, 0);
}

int64_t kbpf_rb_calls(const struct kbpf_rb *b)
{
	return rb_result(b, 1);
}

int kbpf_rb_close_gone(struct kbpf_rb *b)
{
	uint32_t ids[3] = { kbpf_id(b->prog), kbpf_id(b->map), kbpf_id(b->res_map) };

	kbpf_rb_close(b);
	return kbpf_wait_gone(ids, 3);
}
