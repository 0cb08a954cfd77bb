/* SPDX-License-Identifier: MIT */
/* Finding a symbol's file offset in untrusted ELF bytes (for uprobes). */
#ifndef PR_ELF_H
#define PR_ELF_H

#include <stddef.h>
#include <stdint.h>

/* The file offset of the defined symbol `name` in the ELF image
 * data[0..len): looked up in .symtab, then .dynsym, its address mapped to
 * the file through the PT_LOAD segment that holds it. Every offset, count
 * and string is checked against len. 0; -ENOEXEC for bytes that are not a
 * 64-bit little-endian ELF file of this machine's byte order or are
 * malformed; -ENOENT for no such defined symbol (or one in no segment). */
int pr_elf_symbol_offset(const uint8_t *data, size_t len, const char *name, uint64_t *offset);

#endif
