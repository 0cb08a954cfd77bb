/* SPDX-License-Identifier: MIT */
/* CPU hotplug (opts.follow_hotplug): which of the session's possible CPUs
 * are open, the notifier, and each change (drain and close, or open and
 * watch) with the attachments and the cpu callback told. */
#ifndef PR_HOTPLUG_H
#define PR_HOTPLUG_H

#include "session.h"

/* At perfring_session_new, after the CPU set was resolved: with
 * follow_hotplug, the set becomes every possible CPU. 0 or -errno with
 * this thread's sentence (s is not returned then). */
int pr_hotplug_new(struct perfring_session *s);
void pr_hotplug_free(struct perfring_session *s);

/* Start: opens the notifier, then the CPUs online now into cpu[] (the
 * rest get an empty ring). 0, or -errno with everything closed. */
int pr_hotplug_open(struct perfring_session *s, struct pr_cpu *cpu, const struct pr_plan *p);

/* s->fds: the CPUs open now (after start and each change). */
void pr_hotplug_fds(struct perfring_session *s);

/* Entries of s->fds. */
size_t pr_session_nfds(const struct perfring_session *s);

/* Whether s->cpu[idx] is open: always, unless following hotplug. */
bool pr_session_cpu_on(const struct perfring_session *s, size_t idx);

/* The notifier's fd, or -1 (sysfs is then read at each flush). */
int pr_hotplug_fd(const struct perfring_session *s);

/* Reads the online list and makes every change it shows. Only where no
 * ring of s is being parsed (else it does nothing). Returns the samples
 * its own drains delivered; -ECANCELED: s was freed inside (R7), touch
 * nothing of it. */
int pr_hotplug_sync(struct perfring_session *s);

/* The notifier fd (the session's, or a reactor's dup of it) is readable:
 * reads it, and syncs if a CPU's uevent was among its messages, or one came
 * earlier while a parse ran (fd -1: only that). As sync. */
int pr_hotplug_notified(struct perfring_session *s, int fd);

/* For parse_all and the sleep-polling wait: at most every PR_HOTPLUG_MS,
 * the notifier is read and sysfs too. As sync. */
#define PR_HOTPLUG_MS 100
int pr_hotplug_tick(struct perfring_session *s);

#endif
