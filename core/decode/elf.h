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
 * malformed; -ENOENT for no such defined symbol (or one in no segment);
 * -ENOMEM. */
int pr_elf_symbol_offset(const uint8_t *data, size_t len, const char *name, uint64_t *offset);

/* A string table up to this many bytes is read whole; a bigger one through
 * a window of 64 KiB (or of whole_max bytes, if fewer, or of the name). */
#define PR_ELF_STR_WHOLE (32u << 20)

/* The same for the file fd, whose size (fstat's) the checks use. Its
 * bytes are read with pread, in chunks into bounded buffers, never mapped:
 * a read that comes short (the file was cut while it was read) is -EAGAIN,
 * a failed one its -errno. whole_max: PR_ELF_STR_WHOLE, or less for tests
 * and the fuzz target, which take the window's path on small files. */
int pr_elf_symbol_offset_fd(int fd, uint64_t size, uint64_t whole_max, const char *name,
			    uint64_t *offset);

#endif
