/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the ELF reader behind perfring_uprobe_offset
 * (decode/elf.c): the input is the file. A few names are looked up; a found
 * symbol's offset must lie inside the input (its segment's file bytes).
 *
 * fuzz-sources: core/decode/elf.c
 */
#include <stdint.h>
#include <stdlib.h>

#include "decode/elf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = { "main", "prtest_uprobe_fn", "f", "" };
	uint64_t off;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (pr_elf_symbol_offset(data, size, names[i], &off) == 0 && off >= size)
			abort();
	return 0;
}
