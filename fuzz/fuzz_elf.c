/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the ELF reader behind perfring_uprobe_offset
 * (decode/elf.c): the input is the file, read from memory and, as
 * perfring_uprobe_offset reads it, by pread from a memfd holding it, there
 * with string tables read whole and through windows of the name's size and
 * of 16 bytes. A few names are looked up; every way must agree, and a found
 * symbol's offset must lie inside the input (its segment's file bytes).
 *
 * fuzz-sources: core/decode/elf.c core/base/sys.c
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "decode/elf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One memfd for the run, rewritten with each input. */
static int input_fd(const uint8_t *data, size_t size)
{
	static int fd = -1;

	if (fd < 0 && (fd = memfd_create("fuzz_elf", MFD_CLOEXEC)) < 0)
		abort();
	if (ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		abort();
	return fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = { "main", "prtest_uprobe_fn", "f", "" };
	static const uint64_t whole_max[] = { PR_ELF_STR_WHOLE, 0, 16 };
	int fd = input_fd(data, size), a, b;
	uint64_t off, off_fd;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		a = pr_elf_symbol_offset(data, size, names[i], &off);
		if (a == 0 && off >= size)
			abort();
		for (size_t w = 0; w < sizeof(whole_max) / sizeof(whole_max[0]); w++) {
			b = pr_elf_symbol_offset_fd(fd, size, whole_max[w], names[i], &off_fd);
			if (a != b || (a == 0 && off != off_fd))
				abort();
		}
	}
	return 0;
}
