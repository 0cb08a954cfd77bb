/* SPDX-License-Identifier: MIT */
/* decode/elf.c and perfring_uprobe_offset: symbols of a real ELF file, and
 * every cut and corruption of it refused or answered inside the file. */
#include <criterion/criterion.h>
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode/elf.h"
#include <perfring/perfring.h>

int prtest_elf_marker(int x);

__attribute__((noinline, used)) int prtest_elf_marker(int x)
{
	return x + 7;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = NULL;
	long n;

	cr_assert_not_null(f, "%s", path);
	cr_assert_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	cr_assert_gt(n, 0);
	b = malloc((size_t)n);
	cr_assert_not_null(b);
	cr_assert_eq(fread(b, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return b;
}

/* Our own function: its offset maps back to its address through the
 * executable mapping of this file in /proc/self/maps. */
Test(elf, own_function_offset_matches_the_mapping)
{
	char line[512], path[256];
	unsigned long lo, hi, pgoff;
	uint64_t off, addr = (uint64_t)(uintptr_t)prtest_elf_marker;
	FILE *maps = fopen("/proc/self/maps", "r");
	bool checked = false;

	cr_assert_eq(perfring_uprobe_offset("/proc/self/exe", "prtest_elf_marker", &off), 0, "%s",
		     perfring_session_last_error(NULL));
	cr_assert_not_null(maps);
	while (fgets(line, sizeof(line), maps))
		if (sscanf(line, "%lx-%lx %*4s %lx %*s %*s %255s", &lo, &hi, &pgoff, path) == 4 &&
		    addr >= lo && addr < hi) {
			cr_assert_eq(off, addr - lo + pgoff, "offset %#llx, mapping says %#llx",
				     (unsigned long long)off, (unsigned long long)(addr - lo + pgoff));
			checked = true;
		}
	fclose(maps);
	cr_assert(checked);
}

Test(elf, errors_name_the_file_and_symbol)
{
	uint64_t off;

	cr_assert_eq(perfring_uprobe_offset("/proc/self/exe", "prtest_no_such_symbol", &off), -ENOENT);
	cr_assert_not_null(strstr(perfring_session_last_error(NULL), "prtest_no_such_symbol"));
	cr_assert_eq(perfring_uprobe_offset("/nonexistent/prtest", "main", &off), -ENOENT);
	cr_assert_not_null(strstr(perfring_session_last_error(NULL), "/nonexistent/prtest"));
	cr_assert_eq(perfring_uprobe_offset("/proc/self/maps", "main", &off), -ENOEXEC);
	cr_assert_eq(perfring_uprobe_offset("/etc/hostname", "main", &off), -ENOEXEC);
	cr_assert_eq(perfring_uprobe_offset(NULL, "main", &off), -EINVAL);
}

/* Every prefix of the file, and every single corrupted byte of its
 * headers, answers within the bytes it was given (ASan checks the reads). */
Test(elf, cuts_and_corruptions_stay_inside)
{
	size_t len, cut;
	uint8_t *b = slurp("/proc/self/exe", &len), *c;
	uint64_t want, off;

	cr_assert_eq(pr_elf_symbol_offset(b, len, "prtest_elf_marker", &want), 0);
	for (cut = 0; cut < len; cut += cut < 4096 ? 7 : 997) {
		c = malloc(cut ? cut : 1);
		cr_assert_not_null(c);
		memcpy(c, b, cut);
		if (pr_elf_symbol_offset(c, cut, "prtest_elf_marker", &off) == 0)
			cr_assert(off == want && off < cut);
		free(c);
	}
	for (size_t i = 0; i < sizeof(Elf64_Ehdr); i++)
		for (int v = 0; v < 256; v += 51) {
			uint8_t keep = b[i];

			b[i] = (uint8_t)v;
			if (pr_elf_symbol_offset(b, len, "prtest_elf_marker", &off) == 0)
				cr_assert_lt(off, len);
			b[i] = keep;
		}
	free(b);
}
