/* SPDX-License-Identifier: MIT */
/* ELF symbol tables read from untrusted bytes: headers, sections, symbols
 * and segments, each bounds-checked before it is read. */
#include "decode/elf.h"

#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

struct elf {
	const uint8_t *d;
	size_t len;
	Elf64_Ehdr eh;
	uint64_t shnum;
};

/* Whether [off, off + n) lies in the image, without overflow. */
static bool in_image(const struct elf *e, uint64_t off, uint64_t n)
{
	return off <= e->len && n <= e->len - off;
}

/* Copies n bytes at off (unaligned reads are fine through memcpy). */
static bool copy_at(const struct elf *e, uint64_t off, void *dst, size_t n)
{
	if (!in_image(e, off, n))
		return false;
	memcpy(dst, e->d + off, n);
	return true;
}

static bool section(const struct elf *e, uint64_t i, Elf64_Shdr *sh)
{
	return i < e->shnum && copy_at(e, e->eh.e_shoff + i * sizeof(*sh), sh, sizeof(*sh));
}

static int elf_open(struct elf *e, const uint8_t *d, size_t len)
{
	Elf64_Shdr first;

	e->d = d;
	e->len = len;
	if (!copy_at(e, 0, &e->eh, sizeof(e->eh)) || memcmp(e->eh.e_ident, ELFMAG, SELFMAG) ||
	    e->eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    e->eh.e_ident[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB :
				       ELFDATA2MSB))
		return -ENOEXEC;
	if (e->eh.e_shentsize != sizeof(Elf64_Shdr) || e->eh.e_phentsize != sizeof(Elf64_Phdr))
		return -ENOEXEC;
	e->shnum = e->eh.e_shnum;
	/* 0 with sections: the real count is section 0's sh_size. */
	if (!e->shnum && e->eh.e_shoff) {
		e->shnum = 1;
		if (!section(e, 0, &first))
			return -ENOEXEC;
		e->shnum = first.sh_size;
	}
	if (e->shnum > e->len / sizeof(Elf64_Shdr) ||
	    !in_image(e, e->eh.e_shoff, e->shnum * sizeof(Elf64_Shdr)))
		return -ENOEXEC;
	return 0;
}

/* Whether the NUL-terminated string at strtab + off is `name`. */
static bool name_is(const struct elf *e, const Elf64_Shdr *strtab, uint32_t off, const char *name,
		    size_t nlen)
{
	if (off >= strtab->sh_size || nlen >= strtab->sh_size - off ||
	    !in_image(e, strtab->sh_offset + off, nlen + 1))
		return false;
	return !memcmp(e->d + strtab->sh_offset + off, name, nlen) &&
	       e->d[strtab->sh_offset + off + nlen] == 0;
}

/* The address of defined symbol name in symbol table sh, if there. */
static bool find_in(const struct elf *e, const Elf64_Shdr *sh, const char *name, uint64_t *addr)
{
	size_t nlen = strlen(name);
	Elf64_Shdr strtab;
	Elf64_Sym sym;
	uint64_t i, n;

	if (sh->sh_entsize != sizeof(sym) || !in_image(e, sh->sh_offset, sh->sh_size) ||
	    !section(e, sh->sh_link, &strtab) || strtab.sh_type != SHT_STRTAB ||
	    !in_image(e, strtab.sh_offset, strtab.sh_size))
		return false;
	n = sh->sh_size / sizeof(sym);
	for (i = 0; i < n; i++) {
		memcpy(&sym, e->d + sh->sh_offset + i * sizeof(sym), sizeof(sym));
		if (sym.st_shndx != SHN_UNDEF && sym.st_value &&
		    ELF64_ST_TYPE(sym.st_info) != STT_SECTION &&
		    ELF64_ST_TYPE(sym.st_info) != STT_FILE && name_is(e, &strtab, sym.st_name, name, nlen)) {
			*addr = sym.st_value;
			return true;
		}
	}
	return false;
}

/* The file offset of addr through the PT_LOAD segment whose file bytes hold it. */
static bool to_offset(const struct elf *e, uint64_t addr, uint64_t *off)
{
	Elf64_Phdr ph;
	uint64_t i;

	for (i = 0; i < e->eh.e_phnum; i++) {
		if (!copy_at(e, e->eh.e_phoff + i * sizeof(ph), &ph, sizeof(ph)))
			return false;
		if (ph.p_type != PT_LOAD || addr < ph.p_vaddr || addr - ph.p_vaddr >= ph.p_filesz ||
		    !in_image(e, ph.p_offset, ph.p_filesz))
			continue;
		*off = addr - ph.p_vaddr + ph.p_offset;
		return true;
	}
	return false;
}

int pr_elf_symbol_offset(const uint8_t *data, size_t len, const char *name, uint64_t *offset)
{
	static const uint32_t order[2] = { SHT_SYMTAB, SHT_DYNSYM };
	struct elf e;
	Elf64_Shdr sh;
	uint64_t addr, i;
	int err = elf_open(&e, data, len);

	if (err)
		return err;
	/* A file has one of each: only the first is read, so that section
	 * headers pointing at one big table cannot make the scan quadratic. */
	for (size_t t = 0; t < 2; t++)
		for (i = 0; i < e.shnum; i++) {
			if (!section(&e, i, &sh) || sh.sh_type != order[t])
				continue;
			if (find_in(&e, &sh, name, &addr) && to_offset(&e, addr, offset))
				return 0;
			break;
		}
	return -ENOENT;
}
