/* SPDX-License-Identifier: MIT */
/* The reactor's internal face: the session's own wait (merged mode) and the
 * tests that add and remove slots while attached. */
#ifndef PR_LOOP_REACTOR_H
#define PR_LOOP_REACTOR_H

#include "session.h"

/* As perfring_reactor_new; merged: every drain is a time-ordered pass over
 * all rings (the session's parse_for_duration), with no budget. */
int pr_reactor_make(struct perfring_session *s, const struct perfring_loop_opts *opts,
		    const struct perfring_loop_ops *ops, void *loop, bool merged,
		    struct perfring_reactor **out);

/* Stops watching slot after draining its ring to the end (on false), or
 * watches it again and drains it (on true). 0 or -errno. */
int pr_reactor_slot(struct perfring_reactor *r, size_t slot, bool on);

/* Samples delivered since the last call (and resets the count). */
uint64_t pr_reactor_take_samples(struct perfring_reactor *r);
/* A callback asked to stop (merged mode), since the last call. */
bool pr_reactor_take_stop(struct perfring_reactor *r);
/* Slots still watched. */
size_t pr_reactor_live(const struct perfring_reactor *r);

#endif
