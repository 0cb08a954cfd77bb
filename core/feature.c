/* SPDX-License-Identifier: MIT */
/* The features a session runs, a row each: adding one is a row here and a
 * file in features/, never a call in the session. */
#include "feature.h"

#include <stddef.h>

/* The cgroup first: the plan every later open uses carries its fd. */
const struct pr_feature *const pr_features[] = {
	&pr_feature_cgroup,
	&pr_feature_hotplug,
	&pr_feature_bpf_output,
	&pr_feature_bpf_ringbuf,
	NULL,
};
