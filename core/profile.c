/* SPDX-License-Identifier: MIT */
/* The profiler's session-level calls: which event owns an id, the cgroup
 * a session is scoped to, uprobes by path and ELF symbol. */
#include "session.h"
#include "base/sys.h"
#include "decode/elf.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

PERFRING_API struct perfring_event *perfring_session_event_of_id(const struct perfring_session *s,
								 int cpu, uint64_t id)
{
	const struct pr_idmap *m;
	int i;

	if (!s || (i = pr_cpu_index(s, cpu)) < 0)
		return NULL;
	m = pr_cpu_find_id(&s->cpu[i], id);
	return m ? m->ev : NULL;
}

/* ------------------------------------------------------ cgroup scope */

/* perfring_session_new's sentences go to the thread's buffer (s is freed
 * on failure), hence NULL for pr_err. */

/* Holds the cgroup directory's fd until the session is freed. */
struct cgroup_hold {
	struct pr_attachment a;
	int fd;
};

static void cgroup_release(struct pr_attachment *a)
{
	struct cgroup_hold *h = (struct cgroup_hold *)a;

	close(h->fd);
	free(h);
}

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

int pr_session_cgroup(struct perfring_session *s)
{
	char path[PATH_MAX];
	struct cgroup_hold *h;
	int err, fd;

	s->cgroup_fd = -1;
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
	if ((err = cgroup_v2_check(path, fd)) || !(h = pr_calloc(1, sizeof(*h)))) {
		close(fd);
		return err ? err : pr_err(NULL, -ENOMEM, "out of memory holding opts.cgroup");
	}
	h->a.release = cgroup_release;
	h->fd = s->cgroup_fd = fd;
	pr_attach(s, &h->a);
	s->o.cgroup = NULL; /* the caller's string is not kept */
	return 0;
}

/* ------------------------------------------------------------ uprobes */

PERFRING_API int perfring_session_add_uprobe(struct perfring_session *s, const char *path,
					     uint64_t offset, bool retprobe,
					     struct perfring_event **out)
{
	return s ? pr_add_uprobe(&s->reg, path, offset, retprobe, out) : pr_null(NULL, __func__, "s");
}

/* What a path that is not a regular file is, for the sentence. */
static const char *file_kind(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ?
	       "a character device" : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" :
	       "a special file";
}

/* Opened without blocking, so that a FIFO is refused by fstat rather than
 * waited on for a writer; only a regular file is read, and it blocks again
 * (a read's EAGAIN means the file shrank). */
static int open_elf(const char *path, int *fdp, uint64_t *size)
{
	struct stat st;
	int fd = pr_open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), err = 0;

	if (fd < 0) {
		err = -errno;
		return pr_err(NULL, err, "uprobe_offset: opening %s: %s", path, perfring_strerror(err));
	}
	if (fstat(fd, &st) < 0) {
		err = -errno;
		err = pr_err(NULL, err, "uprobe_offset: fstat %s: %s", path, perfring_strerror(err));
	} else if (!S_ISREG(st.st_mode)) {
		err = pr_err(NULL, S_ISDIR(st.st_mode) ? -EISDIR : -ENOEXEC, "uprobe_offset: %s is "
			     "%s, not an ELF file", path, file_kind(st.st_mode));
	} else if (st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		err = pr_err(NULL, -ENOEXEC, "uprobe_offset: %s is too short for an ELF file (%lld "
			     "bytes)", path, (long long)st.st_size);
	} else if (fcntl(fd, F_SETFL, 0) < 0) {
		err = -errno;
		err = pr_err(NULL, err, "uprobe_offset: fcntl %s: %s", path, perfring_strerror(err));
	}
	if (err) {
		close(fd);
		return err;
	}
	*fdp = fd;
	*size = (uint64_t)st.st_size;
	return 0;
}

PERFRING_API int perfring_uprobe_offset(const char *path, const char *symbol, uint64_t *offset)
{
	uint64_t size = 0;
	int err, fd = -1;

	if (!path || !symbol || !offset)
		return pr_null(NULL, __func__, !path ? "path" : !symbol ? "symbol" : "offset");
	if ((err = open_elf(path, &fd, &size)))
		return err;
	err = pr_elf_symbol_offset_fd(fd, size, PR_ELF_STR_WHOLE, symbol, offset);
	close(fd);
	if (!err)
		return 0;
	if (err == -ENOEXEC)
		return pr_err(NULL, err, "uprobe_offset: %s is not a well-formed 64-bit ELF file "
			      "of this machine's byte order", path);
	if (err == -ENOENT)
		return pr_err(NULL, err, "uprobe_offset: %s defines no symbol %s in .symtab or "
			      ".dynsym (or it lies in no loaded segment)", path, symbol);
	if (err == -EAGAIN)
		return pr_err(NULL, err, "uprobe_offset: %s changed while it was read (it is now "
			      "shorter than its %llu bytes): try again once it is written", path,
			      (unsigned long long)size);
	return pr_err(NULL, err, "uprobe_offset: reading %s: %s", path, perfring_strerror(err));
}
