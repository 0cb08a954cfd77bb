/* SPDX-License-Identifier: MIT */
/* What a session can do beyond rings of events (BPF output, BPF ring
 * buffers, CPU hotplug, cgroup scope) is a feature: a row of optional hooks
 * the session calls at fixed points of its lifecycle. A feature never calls
 * another: hotplug tells the session that a CPU changed
 * (pr_session_cpu_up/_down), and the session runs every feature's
 * cpu_up/cpu_down. */
#ifndef PR_FEATURE_H
#define PR_FEATURE_H

struct perfring_session;
struct pr_cpu;
struct pr_plan;

#define PR_FEATURE_PASS 1

struct pr_feature {
	const char *name;
	/* perfring_session_new, once the CPU set is known (it may replace
	 * it); a sentence for this thread (s is not returned on failure). */
	int  (*init)(struct perfring_session *s);
	/* perfring_session_start, before anything is opened. */
	int  (*check)(struct perfring_session *s);
	/* Opens the rings of cpu[0..s->ncpu) in place of the plain open
	 * (hotplug: only the online CPUs): 0 or -errno; PR_FEATURE_PASS when
	 * this session's rings are not its to open. */
	int  (*open)(struct perfring_session *s, struct pr_cpu *cpu, const struct pr_plan *p);
	/* The rings are open and mapped, not yet enabled. On failure the
	 * feature has undone its own work. */
	int  (*started)(struct perfring_session *s);
	/* With enable_on_exec: enables what the kernel's exec will not. */
	int  (*exec_enable)(struct perfring_session *s);
	/* A CPU of a running session was opened again / is about to close. */
	int  (*cpu_up)(struct perfring_session *s, struct pr_cpu *c);
	void (*cpu_down)(struct perfring_session *s, struct pr_cpu *c);
	/* Before the rings close: lets go of what refers to them. */
	void (*unmap)(struct perfring_session *s);
	/* parse_all and each pass of the sleep-polling wait: samples its own
	 * drains delivered, or -ECANCELED when s was freed inside (R7). */
	int  (*tick)(struct perfring_session *s);
	/* The session is freed (or its new failed after init). */
	void (*fini)(struct perfring_session *s);
};

/* Each row of s's list, in order (f: const struct pr_feature *const *). */
#define PR_EACH_FEATURE(s, f) \
	for (const struct pr_feature *const *f = (s)->features; f && *f; f++)

/* The rows, NULL-terminated, in the order their hooks run; defined in
 * feature.c, reached by the session through s->features. */
extern const struct pr_feature *const pr_features[];

extern const struct pr_feature pr_feature_cgroup;
extern const struct pr_feature pr_feature_hotplug;
extern const struct pr_feature pr_feature_bpf_output;
extern const struct pr_feature pr_feature_bpf_ringbuf;

#endif
