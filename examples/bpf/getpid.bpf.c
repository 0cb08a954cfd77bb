// SPDX-License-Identifier: MIT
/* examples/bpf-uv's BPF program: on each getpid() of the tgid in map
 * `target`, one 24-byte record (magic, tgid, tid, bpf_ktime_get_ns()) goes to
 * the PERF_EVENT_ARRAY `events`, on the CPU it runs on. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct getpid_rec {
	__u64 magic;
	__u32 tgid, tid;
	__u64 ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} target SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} events SEC(".maps");

SEC("tracepoint/syscalls/sys_enter_getpid")
int on_getpid(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 key = 0, *want = bpf_map_lookup_elem(&target, &key);
	struct getpid_rec rec;

	if (!want || (__u32)(id >> 32) != *want)
		return 0;
	rec.magic = 0x70726270665f7631ull; /* tests/kbpf.h's KBPF_MAGIC */
	rec.tgid = (__u32)(id >> 32);
	rec.tid = (__u32)id;
	rec.ns = bpf_ktime_get_ns();
	bpf_perf_event_output(ctx, &events, BPF_F_CURRENT_CPU, &rec, sizeof(rec));
	return 0;
}

/* bpf_perf_event_output is a GPL-only helper: the program must say it is GPL-compatible. */
char LICENSE[] SEC("license") = "Dual MIT/GPL";
