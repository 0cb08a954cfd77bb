/* SPDX-License-Identifier: MIT */
/* CPU hotplug (opts.follow_hotplug, features/hotplug.c): what the loops
 * and parses call of the hotplug feature, the notifier and the syncs. The
 * session reaches the rest through the feature's row. */
#ifndef PR_HOTPLUG_H
#define PR_HOTPLUG_H

#include "session.h"

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

#endif
