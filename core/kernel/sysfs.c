/* SPDX-License-Identifier: MIT */
/* Reading sysfs's CPU lists, under the test root when one is set. */
#include "kernel/sysfs.h"
#include "kernel/cpulist.h"
#include "base/sys.h"

#include <perfring/perfring.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* secure_getenv: a set-uid program never takes its CPUs from the caller. */
static const char *root(void)
{
	const char *r = secure_getenv(PR_ENV_TEST_SYSFS);

	return r && *r ? r : "/sys";
}

bool pr_sysfs_test_root(void)
{
	const char *r = secure_getenv(PR_ENV_TEST_SYSFS);

	return r && *r;
}

int pr_sysfs_cpus(struct pr_errbuf *e, const char *which, int **cpus, size_t *n)
{
	char path[4096], *text = NULL;
	size_t len = 0;
	int err;

	if (snprintf(path, sizeof(path), "%s/devices/system/cpu/%s", root(), which) >=
	    (int)sizeof(path))
		return pr_err(e, -ENAMETOOLONG, "%s: the path of sysfs's %s list is too long",
			      PR_ENV_TEST_SYSFS, which);
	if ((err = pr_read_file(path, 4096, &text, &len)))
		return pr_err(e, err, "reading %s: %s", path, perfring_strerror(err));
	err = pr_cpulist_parse(text, len, cpus, n);
	free(text);
	if (err)
		return pr_err(e, err, "parsing %s: %s", path, perfring_strerror(err));
	/* Linux always has a CPU online: an empty list is a guess, not a fact. */
	if (!*n)
		return pr_err(e, -ENODEV, "%s lists no CPUs (there is always one): it is not "
			      "believed", path);
	return 0;
}
