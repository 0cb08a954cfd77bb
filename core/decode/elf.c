/* SPDX-License-Identifier: MIT */
/* ELF symbol tables read from untrusted bytes: headers, sections, symbols
 * and segments, each bounds-checked before it is read. The bytes come from
 * memory or from a file by pread into bounded buffers, never from a mapping:
 * a file cut short while it is read gives a short read, not a SIGBUS. */
#include "decode/elf.h"
#include "base/sys.h"

#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Entries a read brings of each table: a binary of 100k symbols takes
 * tens of reads, not 100k. A string table up to whole_max bytes is read
 * whole (a linker does not write it in symbol order); a bigger one, only
 * in hostile or giant files, through a window loaded at each miss. */
#define SHDR_CHUNK 64
#define SYM_CHUNK 4096
#define PHDR_CHUNK 64
#define STR_WINDOW (64u << 10)

struct src {
	const uint8_t *mem; /* NULL: the file fd */
	int fd;
	uint64_t size, whole_max;
};

/* Entries [first, first + have) of count at off are in buf. */
struct table {
	uint64_t off, count, first, have;
	size_t esz, cap;
	uint8_t *buf;
};

/* Bytes [first, first + have) of the string table at off are in buf. */
struct strwin {
	uint64_t off, size, first, have;
	size_t cap;
	uint8_t *buf;
};

struct elf {
	struct src src;
	Elf64_Ehdr eh;
	uint64_t shnum;
	struct table sh, sym, ph;
	struct strwin str;
};

/* Whether [off, off + n) lies in the image, without overflow. */
static bool in_image(const struct elf *e, uint64_t off, uint64_t n)
{
	return off <= e->src.size && n <= e->src.size - off;
}

/* n bytes at off of a file that held size bytes: fewer is -EAGAIN, the
 * file was cut while it was read. */
static int file_read(int fd, uint64_t off, void *dst, size_t n)
{
	size_t got = 0;
	ssize_t r;

	while (got < n) {
		r = pr_pread(fd, (uint8_t *)dst + got, n - got, (off_t)(off + got));
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EAGAIN;
		got += (size_t)r;
	}
	return 0;
}

/* Copies n bytes at off: -ENOEXEC outside the image, else the source's. */
static int copy_at(const struct elf *e, uint64_t off, void *dst, size_t n)
{
	if (!in_image(e, off, n))
		return -ENOEXEC;
	if (!e->src.mem)
		return file_read(e->src.fd, off, dst, n);
	memcpy(dst, e->src.mem + off, n);
	return 0;
}

static void table_set(struct table *t, uint64_t off, uint64_t count, size_t esz)
{
	t->off = off;
	t->count = count;
	t->esz = esz;
	t->first = t->have = 0;
}

/* Entry i (< count, the table in the image), a chunk read when not held. */
static int table_get(const struct elf *e, struct table *t, uint64_t i, void *out)
{
	uint64_t n;
	int err;

	if (i < t->first || i - t->first >= t->have) {
		n = t->count - i < t->cap ? t->count - i : t->cap;
		t->have = 0;
		if ((err = copy_at(e, t->off + i * t->esz, t->buf, n * t->esz)))
			return err;
		t->first = i;
		t->have = n;
	}
	memcpy(out, t->buf + (i - t->first) * t->esz, t->esz);
	return 0;
}

static int section(struct elf *e, uint64_t i, Elf64_Shdr *sh)
{
	return i < e->shnum ? table_get(e, &e->sh, i, sh) : -ENOEXEC;
}

static int elf_open(struct elf *e)
{
	Elf64_Shdr first;
	int err = copy_at(e, 0, &e->eh, sizeof(e->eh));

	if (err)
		return err;
	if (memcmp(e->eh.e_ident, ELFMAG, SELFMAG) || e->eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    e->eh.e_ident[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB :
				       ELFDATA2MSB))
		return -ENOEXEC;
	if (e->eh.e_shentsize != sizeof(Elf64_Shdr) || e->eh.e_phentsize != sizeof(Elf64_Phdr))
		return -ENOEXEC;
	e->shnum = e->eh.e_shnum;
	/* 0 with sections: the real count is section 0's sh_size. */
	if (!e->shnum && e->eh.e_shoff) {
		if ((err = copy_at(e, e->eh.e_shoff, &first, sizeof(first))))
			return err;
		e->shnum = first.sh_size;
	}
	if (e->shnum > e->src.size / sizeof(Elf64_Shdr) ||
	    !in_image(e, e->eh.e_shoff, e->shnum * sizeof(Elf64_Shdr)))
		return -ENOEXEC;
	table_set(&e->sh, e->eh.e_shoff, e->shnum, sizeof(Elf64_Shdr));
	return 0;
}

/* 1 when the NUL-terminated string at off of the string table is `name`,
 * 0 when not, or the source's error. The window holds the table, or at
 * least nlen + 1 bytes. */
static int name_is(const struct elf *e, struct strwin *w, uint64_t off, const char *name,
		   size_t nlen)
{
	uint64_t n, at;
	const uint8_t *p;
	int err;

	if (off >= w->size || nlen >= w->size - off)
		return 0;
	if (off < w->first || off - w->first + nlen >= w->have) {
		at = w->cap >= w->size ? 0 : off; /* a whole table is read once */
		n = w->size - at < w->cap ? w->size - at : w->cap;
		w->have = 0;
		if ((err = copy_at(e, w->off + at, w->buf, n)))
			return err;
		w->first = at;
		w->have = n;
	}
	p = w->buf + (off - w->first);
	return !memcmp(p, name, nlen) && p[nlen] == 0;
}

static bool candidate(const Elf64_Sym *sym)
{
	return sym->st_shndx != SHN_UNDEF && sym->st_value &&
	       ELF64_ST_TYPE(sym->st_info) != STT_SECTION && ELF64_ST_TYPE(sym->st_info) != STT_FILE;
}

static int scan(struct elf *e, const char *name, size_t nlen, uint64_t *addr)
{
	Elf64_Sym sym;
	uint64_t i;
	int err;

	for (i = 0; i < e->sym.count; i++) {
		if ((err = table_get(e, &e->sym, i, &sym)))
			return err;
		if (!candidate(&sym))
			continue;
		if ((err = name_is(e, &e->str, sym.st_name, name, nlen)) < 0)
			return err;
		if (err) {
			*addr = sym.st_value;
			return 0;
		}
	}
	return -ENOENT;
}

/* The address of defined symbol name in symbol table sh: 0, -ENOENT when
 * it is not there (or the table is malformed), or the source's error. */
static int find_in(struct elf *e, const Elf64_Shdr *sh, const char *name, uint64_t *addr)
{
	size_t nlen = strlen(name);
	Elf64_Shdr strtab;
	int err;

	if (sh->sh_entsize != sizeof(Elf64_Sym) || !in_image(e, sh->sh_offset, sh->sh_size))
		return -ENOENT;
	if ((err = section(e, sh->sh_link, &strtab)))
		return err == -ENOEXEC ? -ENOENT : err;
	if (strtab.sh_type != SHT_STRTAB || !in_image(e, strtab.sh_offset, strtab.sh_size))
		return -ENOENT;
	table_set(&e->sym, sh->sh_offset, sh->sh_size / sizeof(Elf64_Sym), sizeof(Elf64_Sym));
	e->str = (struct strwin){ .off = strtab.sh_offset, .size = strtab.sh_size };
	if (nlen >= e->str.size)
		return -ENOENT; /* no string of the table is that long */
	if (e->str.size <= e->src.whole_max)
		e->str.cap = e->str.size;
	else
		e->str.cap = e->src.whole_max < STR_WINDOW ? e->src.whole_max : STR_WINDOW;
	if (e->str.cap <= nlen)
		e->str.cap = nlen + 1;
	if (!(e->str.buf = pr_malloc(e->str.cap)))
		return -ENOMEM;
	err = scan(e, name, nlen, addr);
	free(e->str.buf);
	e->str.buf = NULL;
	return err;
}

/* The file offset of addr through the PT_LOAD segment whose file bytes
 * hold it: 0, -ENOENT, or the source's error. Headers past the image end
 * the search. */
static int to_offset(struct elf *e, uint64_t addr, uint64_t *off)
{
	uint64_t i, n = e->eh.e_phnum;
	Elf64_Phdr ph;
	int err;

	if (e->eh.e_phoff > e->src.size)
		n = 0;
	else if (n > (e->src.size - e->eh.e_phoff) / sizeof(ph))
		n = (e->src.size - e->eh.e_phoff) / sizeof(ph);
	table_set(&e->ph, e->eh.e_phoff, n, sizeof(ph));
	for (i = 0; i < n; i++) {
		if ((err = table_get(e, &e->ph, i, &ph)))
			return err;
		if (ph.p_type != PT_LOAD || addr < ph.p_vaddr || addr - ph.p_vaddr >= ph.p_filesz ||
		    !in_image(e, ph.p_offset, ph.p_filesz))
			continue;
		*off = addr - ph.p_vaddr + ph.p_offset;
		return 0;
	}
	return -ENOENT;
}

static int lookup(struct elf *e, const char *name, uint64_t *offset)
{
	static const uint32_t order[2] = { SHT_SYMTAB, SHT_DYNSYM };
	Elf64_Shdr sh;
	uint64_t addr, i;
	int err = elf_open(e);

	if (err)
		return err;
	/* A file has one of each: only the first is read, so that section
	 * headers pointing at one big table cannot make the scan quadratic. */
	for (size_t t = 0; t < 2; t++)
		for (i = 0; i < e->shnum; i++) {
			if ((err = section(e, i, &sh)))
				return err;
			if (sh.sh_type != order[t])
				continue;
			err = find_in(e, &sh, name, &addr);
			if (!err)
				err = to_offset(e, addr, offset);
			if (err != -ENOENT)
				return err;
			break;
		}
	return -ENOENT;
}

/* The tables' buffers, in one allocation (the string table's is its own). */
static int symbol_offset(struct src src, const char *name, uint64_t *offset)
{
	struct elf e = { .src = src };
	uint8_t *mem;
	int err;

	e.sh.cap = SHDR_CHUNK;
	e.sym.cap = SYM_CHUNK;
	e.ph.cap = PHDR_CHUNK;
	mem = pr_malloc(SHDR_CHUNK * sizeof(Elf64_Shdr) + SYM_CHUNK * sizeof(Elf64_Sym) +
			PHDR_CHUNK * sizeof(Elf64_Phdr));
	if (!mem)
		return -ENOMEM;
	e.sh.buf = mem;
	e.sym.buf = e.sh.buf + SHDR_CHUNK * sizeof(Elf64_Shdr);
	e.ph.buf = e.sym.buf + SYM_CHUNK * sizeof(Elf64_Sym);
	err = lookup(&e, name, offset);
	free(mem);
	return err;
}

int pr_elf_symbol_offset(const uint8_t *data, size_t len, const char *name, uint64_t *offset)
{
	static const uint8_t none;

	return symbol_offset((struct src){ .mem = data ? data : &none, .fd = -1,
					   .size = data ? len : 0, .whole_max = PR_ELF_STR_WHOLE },
			     name, offset);
}

int pr_elf_symbol_offset_fd(int fd, uint64_t size, uint64_t whole_max, const char *name,
			    uint64_t *offset)
{
	return symbol_offset((struct src){ .fd = fd, .size = size, .whole_max = whole_max }, name,
			     offset);
}
