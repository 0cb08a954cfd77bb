/* SPDX-License-Identifier: MIT */
/* Uprobes by path (a feature with no hook: the probe is an event of the
 * registry), and an ELF symbol's file offset for them. */
#include "session.h"
#include "base/sys.h"
#include "decode/elf.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

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
