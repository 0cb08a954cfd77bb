/* SPDX-License-Identifier: MIT */
/* A real BPF program for tests, as raw instructions (no clang, no libbpf):
 * on syscalls:sys_enter_getpid, for the given tgid only, it writes a 24-byte
 * record (magic, tgid, tid, bpf_ktime_get_ns()) with bpf_perf_event_output
 * into a PERF_EVENT_ARRAY, and stores each output call's result. */
#ifndef KBPF_H
#define KBPF_H

#include <stdint.h>
#include <sys/types.h>

#define KBPF_MAGIC 0x70726270665f7631ull /* "1v_fpbrp" */

struct kbpf_rec {
	uint64_t magic;
	uint32_t tgid, tid;
	uint64_t ns;
};

struct kbpf {
	int out_map;   /* PERF_EVENT_ARRAY of out_entries */
	int res_map;   /* ARRAY of one { s64 last output result; u64 outputs that failed } */
	int prog;
	int tp_fd;     /* the tracepoint's perf event the program is attached to */
	uint32_t out_entries;
};

/* Creates the maps, loads the program for tgid and attaches it. entries:
 * the PERF_EVENT_ARRAY's max_entries (0 = the possible CPUs). 0 or -errno;
 * why (may be NULL) gets the verifier's log or the failed call. */
int kbpf_open(struct kbpf *b, pid_t tgid, uint32_t entries, char *why, size_t len);
/* Detaches and closes everything (safe on a half-opened b). */
void kbpf_close(struct kbpf *b);
/* i 0: the last output's result; 1: the outputs that failed. */
int64_t kbpf_result(const struct kbpf *b, uint32_t i);
/* bpf(2) on one map key: 0 or -errno. */
int kbpf_delete(int map, uint32_t key);
int kbpf_update(int map, uint32_t key, uint32_t value);
/* A map of another type (an ARRAY of 4-byte values), for error tests. */
int kbpf_array_map(uint32_t entries);
/* The id of a BPF object fd, 0 on error; whether an id still names a
 * program (prog) or map (!prog) anywhere on the system. */
uint32_t kbpf_id(int fd);
int kbpf_prog_exists(uint32_t id);
int kbpf_map_exists(uint32_t id);
/* The kernel frees a BPF object once its last reference goes, some of it
 * after an RCU grace period: waits up to 10 s for the ids to name nothing,
 * and returns how many still do. */
int kbpf_wait_gone(const uint32_t *ids, int n);
/* kbpf_close, then kbpf_wait_gone on b's program and maps. */
int kbpf_close_gone(struct kbpf *b);
int kbpf_possible_cpus(void);


/* Checks every BPF sample it is given against the program's record: the
 * magic, tgid and tid, raw_size (24 bytes arrive as 28), both times inside
 * [t0, t1] and the sample's no earlier than the program's. ctx: this. */
struct kbpf_check {
	uint32_t tgid, tid;
	uint64_t t0, t1;        /* CLOCK_MONOTONIC around the calls; t1 0 = open */
	uint64_t n, bad_size, bad_magic, bad_task, bad_time, out_of_order;
	uint64_t last_time, per_cpu[64];
	uint32_t raw_size;      /* of the last sample */
	char first_bad[160];
};
struct perfring_sample;
int kbpf_check_cb(const struct perfring_sample *s, void *ctx);
/* 0 when every sample was right; else the count of bad ones (first_bad says). */
uint64_t kbpf_check_bad(const struct kbpf_check *c);

/* Ring-buffer programs: on syscalls:sys_enter_getpid, for tgid only, each
 * call writes a rec_size-byte record (struct kbpf_rec first, zero padding
 * after; rec_size >= 24 and a multiple of 8, at most 256) to a
 * BPF_MAP_TYPE_RINGBUF of ring_bytes (a power of two multiple of the page):
 * KBPF_RB_OUTPUT with bpf_ringbuf_output, KBPF_RB_RESERVE with
 * bpf_ringbuf_reserve + bpf_ringbuf_submit, KBPF_RB_DISCARD_ODD reserve, then
 * submit the 1st, 3rd, ... call's record and discard the 2nd, 4th, ... (the
 * count is per program, across CPUs). The record's ns (offset 16) is
 * bpf_ktime_get_ns(). Failed reserves/outputs are counted in res_map. */
enum kbpf_rb_mode { KBPF_RB_OUTPUT, KBPF_RB_RESERVE, KBPF_RB_DISCARD_ODD };
struct kbpf_rb {
	int map;       /* the RINGBUF */
	int res_map;   /* ARRAY of one { u64 failed reserves/outputs; u64 calls } */
	int prog;
	int tp_fd;
	uint32_t size; /* rec_size */
};
/* 0 or -errno; why (may be NULL) gets the verifier's log or the failed call. */
int kbpf_rb_open(struct kbpf_rb *b, pid_t tgid, uint32_t ring_bytes, enum kbpf_rb_mode mode,
		 uint32_t rec_size, char *why, size_t len);
void kbpf_rb_close(struct kbpf_rb *b);          /* safe half-open */
int64_t kbpf_rb_failed(const struct kbpf_rb *b); /* failed reserves/outputs (-errno) */
int64_t kbpf_rb_calls(const struct kbpf_rb *b);  /* program runs for tgid (-errno) */
int kbpf_rb_close_gone(struct kbpf_rb *b);     /* close + wait the ids gone */

#endif
