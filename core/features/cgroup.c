/* SPDX-License-Identifier: MIT */
/* Cgroup scope (opts.cgroup, a feature): the cgroup v2 directory every
 * event is opened on, checked and held from perfring_session_new to free.
 * perfring_session_new's sentences go to the thread's buffer (s is freed
 * on failure), hence NULL for pr_err. */
#include "feature.h"
#include "session.h"
#include "base/sys.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

/* The cgroup2 mount point from /proc/self/mounts ("dev dir type ..."). */
static int cgroup2_mount(struct pr_errbuf *e, const char *rel, char *dir, size_t len)
{
	char *text, *line, *save = NULL;
	size_t n;
	int err = pr_read_file("/proc/self/mounts", 1 << 20, &text, &n), found = 0;

	if (err)
		return pr_err(e, err, "opts.cgroup: reading /proc/self/mounts: %s",
			      perfring_strerror(err));
	for (line = strtok_r(text, "\n", &save); line && !found; line = strtok_r(NULL, "\n", &save)) {
		char mdir[PATH_MAX], type[32];

		if (sscanf(line, "%*s %4095s %31s", mdir, type) == 2 && !strcmp(type, "cgroup2") &&
		    strlen(mdir) < len) {
			strcpy(dir, mdir);
			found = 1;
		}
	}
	free(text);
	return found ? 0 : pr_err(e, -ENODEV, "opts.cgroup: %s is relative to the cgroup v2 mount, "
				  "and no cgroup v2 hierarchy is mounted (mount -t cgroup2 none "
				  "/sys/fs/cgroup)", rel);
}

static int cgroup_path(struct perfring_session *s, char *path, size_t len)
{
	const char *c = s->o.cgroup;
	char mnt[PATH_MAX];
	int err;

	if (c[0] == '/') {
		if (strlen(c) >= len)
			return pr_err(NULL, -ENAMETOOLONG, "opts.cgroup: the path is too long");
		strcpy(path, c);
		return 0;
	}
	if ((err = cgroup2_mount(NULL, c, mnt, sizeof(mnt))))
		return err;
	if ((size_t)snprintf(path, len, "%s/%s", mnt, c) >= len)
		return pr_err(NULL, -ENAMETOOLONG, "opts.cgroup: the path is too long");
	return 0;
}

static int cgroup_open_err(struct perfring_session *s, const char *path, int err)
{
	return pr_err(NULL, -err, "opts.cgroup: opening %s: %s%s", path, perfring_strerror(-err),
		      err == ENOENT ? "; make the cgroup first (mkdir under the cgroup v2 mount)" :
		      err == EACCES || err == EPERM ? "; run as root, or be given the directory" :
		      err == ENOTDIR ? "; it must be a cgroup directory" : "");
}

/* The filesystem decides: a directory elsewhere that holds a file named
 * cgroup.controllers is no cgroup, and perf_event_open would refuse its fd
 * only at start. */
static int cgroup_v2_check(const char *path, int fd)
{
	struct statfs sf;
	int err;

	if (fstatfs(fd, &sf) < 0) {
		err = -errno;
		return pr_err(NULL, err, "opts.cgroup: fstatfs %s: %s", path, perfring_strerror(err));
	}
	if (sf.f_type == CGROUP2_SUPER_MAGIC)
		return 0;
	if (sf.f_type == CGROUP_SUPER_MAGIC)
		return pr_err(NULL, -EINVAL, "opts.cgroup: %s is not a cgroup v2 directory (it is in "
			      "a cgroup v1 hierarchy, which is not supported)", path);
	return pr_err(NULL, -EINVAL, "opts.cgroup: %s is not a cgroup v2 directory (its "
		      "filesystem, of type %#llx, is not cgroup2)", path,
		      (unsigned long long)sf.f_type);
}

/* At perfring_session_new: opts.cgroup's directory into s->cgroup_fd,
 * held until s is freed; the sentence names the path. */
static int init(struct perfring_session *s)
{
	char path[PATH_MAX];
	int err, fd;

	if (!s->o.cgroup)
		return 0;
	if (!s->o.cgroup[0])
		return pr_err(NULL, -EINVAL, "opts.cgroup is empty: give a cgroup v2 directory");
	if (s->o.pid)
		return pr_err(NULL, -EINVAL, "opts.cgroup and opts.pid exclude each other: "
			      "watch a cgroup or a process");
	if ((err = cgroup_path(s, path, sizeof(path))))
		return err;
	fd = pr_open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return cgroup_open_err(s, path, errno);
	if ((err = cgroup_v2_check(path, fd))) {
		close(fd);
		return err;
	}
	s->cgroup_fd = fd;
	s->o.cgroup = NULL; /* the caller's string is not kept */
	return 0;
}

static void fini(struct perfring_session *s)
{
	if (s->cgroup_fd >= 0)
		close(s->cgroup_fd);
	s->cgroup_fd = -1;
}

const struct pr_feature pr_feature_cgroup = {
	.name = "cgroup",
	.init = init,
	.fini = fini,
};
