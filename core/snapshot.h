/* SPDX-License-Identifier: MIT */
/* The flight recorder's reading side: snapshots of overwrite rings, and the
 * refusal every other parse gives an overwrite session. */
#ifndef PR_SNAPSHOT_H
#define PR_SNAPSHOT_H

#include "session.h"

/* -EOPNOTSUPP with a sentence naming call when s is an overwrite session
 * (its rings are read only by snapshots), else 0. */
int pr_overwrite_refuse(struct perfring_session *s, const char *call);

#endif
