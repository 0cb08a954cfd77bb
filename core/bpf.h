/* SPDX-License-Identifier: MIT */
/* BPF output events at start and free: the map entries the session writes
 * and deletes (the public add call is in bpf.c too). */
#ifndef PR_BPF_H
#define PR_BPF_H

#include "session.h"

/* -E2BIG with a sentence when a BPF output's map has no key for the
 * highest watched CPU; before anything is opened. */
int pr_bpf_check(struct perfring_session *s);

/* Opens every BPF output event on each of cpu[0..s->ncpu) (the rings are
 * open) and writes its map entry. On failure the entries written are
 * deleted; the fds opened are in cpu[] for pr_close_cpus. */
int pr_bpf_start(struct perfring_session *s, struct pr_cpu *cpu);

/* PERF_EVENT_IOC_ENABLE on every BPF output fd: with enable_on_exec the
 * kernel enables the other events at the execve, but never a CPU-wide one. */
int pr_bpf_enable(struct perfring_session *s);

/* Deletes every map entry the session wrote (an entry already gone is fine). */
void pr_bpf_unmap(struct perfring_session *s);

/* CPU hotplug: c, open again, gets every BPF output event and its map
 * entry (on failure its entries are deleted; the fds are in c); and cpu's
 * entries are deleted before its fds close, so no entry holds its events. */
int pr_bpf_cpu_up(struct perfring_session *s, struct pr_cpu *c);
void pr_bpf_cpu_down(struct perfring_session *s, int cpu);

#endif
