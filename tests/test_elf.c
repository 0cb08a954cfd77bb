/* SPDX-License-Identifier: MIT */
/* decode/elf.c and perfring_uprobe_offset: symbols of a real ELF file, and
 * every cut and corruption of it refused or answered inside the file; a
 * file cut short while it is read, and paths that are not regular files. */
#include <criterion/criterion.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "decode/elf.h"
#include "base/sys.h"
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

/* The Nth read of the file failing with each errno: the call fails with
 * it and names the file, or (a read it did not need) still finds the
 * symbol; never a wrong offset. */
struct read_fault {
	int nth, err, seen;
};

static int fail_nth_read(enum pr_sys_call call, void *ctx)
{
	struct read_fault *f = ctx;

	return call == PR_SYS_READ && ++f->seen == f->nth ? f->err : 0;
}

Test(elf, each_failed_read_is_an_error_naming_the_file)
{
	static const int errs[] = { EIO, ENOMEM, EINTR, EAGAIN };
	uint64_t want, off;
	int failed = 0, reads;

	cr_assert_eq(perfring_uprobe_offset("/proc/self/exe", "prtest_elf_marker", &want), 0);
	for (size_t e = 0; e < sizeof(errs) / sizeof(errs[0]); e++)
		for (int nth = 1;; nth++) {
			struct read_fault f = { nth, errs[e], 0 };
			int err;

			pr_fault_set(fail_nth_read, &f);
			err = perfring_uprobe_offset("/proc/self/exe", "prtest_elf_marker", &off);
			pr_fault_set(NULL, NULL);
			reads = f.seen;
			if (nth > reads) {
				cr_assert_eq(err, 0);
				break;
			}
			cr_assert_eq(err, -errs[e], "read %d of %d failing with %s gave %d", nth, reads,
				     strerror(errs[e]), err);
			cr_assert_not_null(strstr(perfring_session_last_error(NULL), "/proc/self/exe"),
					   "%s", perfring_session_last_error(NULL));
			failed++;
		}
	cr_assert_gt(failed, 4, "only %d reads were failed", failed);
	cr_assert_eq(off, want);
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

/* Every cut of the file behind an fd that still claims the whole size
 * (what a reader sees when the file shrinks under it) is the right offset
 * or -EAGAIN, with string tables read whole and through small windows. */
Test(elf, fd_reads_cut_short_say_so)
{
	static const uint64_t whole_max[] = { PR_ELF_STR_WHOLE, 0, 64 };
	size_t len, cut;
	uint8_t *b = slurp("/proc/self/exe", &len);
	uint64_t want, off;
	int fd = memfd_create("test_elf", MFD_CLOEXEC), err, short_reads = 0;

	cr_assert_geq(fd, 0);
	cr_assert_eq(pr_elf_symbol_offset(b, len, "prtest_elf_marker", &want), 0);
	cr_assert_eq(pwrite(fd, b, len, 0), (ssize_t)len);
	for (size_t w = 0; w < 3; w++) {
		off = 0;
		cr_assert_eq(pr_elf_symbol_offset_fd(fd, len, whole_max[w], "prtest_elf_marker", &off),
			     0);
		cr_assert_eq(off, want);
		cr_assert_eq(pr_elf_symbol_offset_fd(fd, len, whole_max[w], "prtest_no_such_symbol",
						     &off), -ENOENT);
	}
	for (cut = len; cut > 0; cut -= cut > len - 8192 ? 61 : cut > 4096 ? 4093 : cut) {
		cr_assert_eq(ftruncate(fd, (off_t)cut), 0);
		for (size_t w = 0; w < 3; w++) {
			off = 0;
			err = pr_elf_symbol_offset_fd(fd, len, whole_max[w], "prtest_elf_marker", &off);
			cr_assert(err == -EAGAIN || (err == 0 && off == want),
				  "cut at %zu of %zu: %d, offset %#llx", cut, len, err,
				  (unsigned long long)off);
			short_reads += err == -EAGAIN;
		}
	}
	cr_assert_gt(short_reads, 0);
	close(fd);
	free(b);
}

/* The read syscalls this process made so far (/proc/self/io's syscr). */
static long read_calls(void)
{
	char line[128];
	long n = -1;
	FILE *f = fopen("/proc/self/io", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "syscr: %ld", &n) == 1)
			break;
	if (f)
		fclose(f);
	return n;
}

#define MANY_SYMS 100000

/* An ELF file of MANY_SYMS functions whose names lie in the string table
 * in the reverse of the symbols' order, as no reader can stream them. */
static uint8_t *many_symbols(size_t *len)
{
	size_t symoff = sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr);
	size_t stroff = symoff + (MANY_SYMS + 1) * sizeof(Elf64_Sym), strsz = 1 + MANY_SYMS * 8;
	size_t shoff = (stroff + strsz + 7) & ~(size_t)7;
	uint8_t *b;
	Elf64_Ehdr *eh;
	Elf64_Phdr *ph;
	Elf64_Sym *sym;
	Elf64_Shdr *sh;

	*len = shoff + 3 * sizeof(Elf64_Shdr);
	cr_assert_not_null(b = calloc(1, *len));
	eh = (Elf64_Ehdr *)b;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_phoff = sizeof(*eh);
	eh->e_shoff = shoff;
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 1;
	eh->e_shentsize = sizeof(*sh);
	eh->e_shnum = 3;
	ph = (Elf64_Phdr *)(b + eh->e_phoff);
	*ph = (Elf64_Phdr){ .p_type = PT_LOAD, .p_vaddr = 0x400000, .p_filesz = *len,
			    .p_memsz = *len };
	sym = (Elf64_Sym *)(b + symoff);
	for (uint32_t i = 0; i < MANY_SYMS; i++) {
		uint32_t at = 1 + (MANY_SYMS - 1 - i) * 8;

		sym[i + 1] = (Elf64_Sym){ .st_name = at, .st_info = ELF64_ST_INFO(STB_GLOBAL,
										  STT_FUNC),
					  .st_shndx = 1, .st_value = 0x400000 + i };
		snprintf((char *)b + stroff + at, 8, "f%06u", i);
	}
	sh = (Elf64_Shdr *)(b + shoff);
	sh[1] = (Elf64_Shdr){ .sh_type = SHT_SYMTAB, .sh_offset = symoff, .sh_link = 2,
			      .sh_size = (MANY_SYMS + 1) * sizeof(Elf64_Sym),
			      .sh_entsize = sizeof(Elf64_Sym) };
	sh[2] = (Elf64_Shdr){ .sh_type = SHT_STRTAB, .sh_offset = stroff, .sh_size = strsz };
	return b;
}

/* 100k symbols take tens of reads, not one a symbol, found or not. */
Test(elf, many_symbols_take_few_reads)
{
	size_t len;
	uint8_t *b = many_symbols(&len);
	int fd = memfd_create("test_elf", MFD_CLOEXEC);
	uint64_t off = 0;
	long r0, reads;

	cr_assert_geq(fd, 0);
	cr_assert_eq(pwrite(fd, b, len, 0), (ssize_t)len);
	cr_assert_eq(pr_elf_symbol_offset(b, len, "f099999", &off), 0);
	cr_assert_eq(off, 99999);
	cr_assert_geq(r0 = read_calls(), 0, "no /proc/self/io");
	cr_assert_eq(pr_elf_symbol_offset_fd(fd, len, PR_ELF_STR_WHOLE, "f099999", &off), 0);
	cr_assert_eq(off, 99999);
	cr_assert_eq(pr_elf_symbol_offset_fd(fd, len, PR_ELF_STR_WHOLE, "g000000", &off), -ENOENT);
	reads = read_calls() - r0 - 1; /* the fopen's read of /proc/self/io */
	cr_log_info("%ld reads for two lookups of %d symbols", reads, MANY_SYMS);
	cr_assert_lt(reads, 100, "%ld reads for two lookups", reads);
	close(fd);
	free(b);
}

/* ------------------------------------------------ a file cut while read */

#define HOLE_SYMS ((1ull << 30) / sizeof(Elf64_Sym)) /* 1 GiB of empty symbols */
#define ROUNDS 16

/* The file is unlinked at once and named by its /proc/self/fd link, so
 * that it goes with the process even when a crash ends the test. */
static char big_path[64];
static int big_fd = -1;

struct big {
	uint64_t size, cut_max;   /* the file's, and where cuts fall below */
	uint64_t want;            /* prtest_elf_marker's offset */
	const uint8_t *exe;
	size_t exe_len;
	Elf64_Shdr *sh;           /* the copy's section headers */
	uint64_t shoff;
};

static void write_at(int fd, const void *p, size_t n, uint64_t off)
{
	cr_assert_eq(pwrite(fd, p, n, (off_t)off), (ssize_t)n, "%s", strerror(errno));
}

/* This test program again, with its .symtab moved past the end: a hole of
 * HOLE_SYMS empty symbols (sparse, never written) and then its symbols, its
 * string table and its section headers, so that the lookup reads a
 * gigabyte before it finds prtest_elf_marker. */
static void big_layout(struct big *g, const uint8_t *exe, size_t len)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)exe;
	uint64_t at = (len + 4095) & ~4095ull, i;
	Elf64_Shdr *sym = NULL, *str;

	cr_assert_eq(eh->e_shentsize, sizeof(Elf64_Shdr));
	g->exe = exe;
	g->exe_len = len;
	g->sh = malloc(eh->e_shnum * sizeof(Elf64_Shdr));
	cr_assert_not_null(g->sh);
	memcpy(g->sh, exe + eh->e_shoff, eh->e_shnum * sizeof(Elf64_Shdr));
	for (i = 0; i < eh->e_shnum && !sym; i++)
		if (g->sh[i].sh_type == SHT_SYMTAB)
			sym = &g->sh[i];
	cr_assert_not_null(sym, "the test is built without a .symtab");
	str = &g->sh[sym->sh_link];
	g->cut_max = at + HOLE_SYMS * sizeof(Elf64_Sym) / 2;
	sym->sh_offset = at; /* the symbols' old bytes are written at the end of the hole */
	sym->sh_size += HOLE_SYMS * sizeof(Elf64_Sym);
	at += sym->sh_size;
	str->sh_offset = at;
	at = (at + str->sh_size + 7) & ~7ull;
	g->shoff = at;
	g->size = at + eh->e_shnum * sizeof(Elf64_Shdr);
}

static void big_write(const struct big *g)
{
	const Elf64_Ehdr *eh0 = (const Elf64_Ehdr *)g->exe;
	const Elf64_Shdr *sh0 = (const Elf64_Shdr *)(g->exe + eh0->e_shoff);
	Elf64_Ehdr eh = *eh0;
	int fd = big_fd;

	cr_assert_eq(ftruncate(fd, 0), 0);
	write_at(fd, g->exe, g->exe_len, 0);
	for (size_t i = 0; i < eh.e_shnum; i++)
		if (g->sh[i].sh_type == SHT_SYMTAB) {
			write_at(fd, g->exe + sh0[i].sh_offset, sh0[i].sh_size,
				 g->sh[i].sh_offset + HOLE_SYMS * sizeof(Elf64_Sym));
			write_at(fd, g->exe + sh0[sh0[i].sh_link].sh_offset,
				 sh0[sh0[i].sh_link].sh_size, g->sh[sh0[i].sh_link].sh_offset);
		}
	write_at(fd, g->sh, eh.e_shnum * sizeof(Elf64_Shdr), g->shoff);
	eh.e_shoff = g->shoff;
	write_at(fd, &eh, sizeof(eh), 0);
}

struct call {
	int err;
	uint64_t off;
	char why[512];
	uint64_t ns;
	volatile int started;
};

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The call runs on its own thread: the sentence is that thread's. */
static void *call_main(void *arg)
{
	struct call *c = arg;
	uint64_t t0 = now_ns();

	c->started = 1;
	c->err = perfring_uprobe_offset(big_path, "prtest_elf_marker", &c->off);
	c->ns = now_ns() - t0;
	snprintf(c->why, sizeof(c->why), "%s", c->err ? perfring_session_last_error(NULL) : "");
	return NULL;
}

static void run_call(struct call *c, uint64_t cut_after_ns, uint64_t cut)
{
	pthread_t t;

	memset(c, 0, sizeof(*c));
	cr_assert_eq(pthread_create(&t, NULL, call_main, c), 0);
	if (cut_after_ns != UINT64_MAX) {
		while (!c->started)
			sched_yield();
		nanosleep(&(struct timespec){ 0, (long)cut_after_ns }, NULL);
		cr_assert_eq(ftruncate(big_fd, (off_t)cut), 0, "%s", strerror(errno));
	}
	cr_assert_eq(pthread_join(t, NULL), 0);
}

/* A linker rewriting the binary being probed: the file is cut to a random
 * size (below the middle of the hole) at a random time inside the call.
 * The caller never takes a signal (the old reader, over a mapping, died of
 * SIGBUS); each call gives the right offset or an error naming the file. */
Test(elf, a_file_cut_while_it_is_read_is_an_error_not_a_signal, .timeout = 600)
{
	size_t len;
	uint8_t *exe = slurp("/proc/self/exe", &len);
	struct big g = { 0 };
	struct call c;
	uint64_t full_ns;
	int cut_mid = 0, whole = 0;
	char tmp[64];

	/* tmpfs reads a hole without filling the page cache: rounds are quick. */
	snprintf(tmp, sizeof(tmp), "%s/test_elf.XXXXXX", access("/dev/shm", W_OK) ? "/tmp" :
		 "/dev/shm");
	big_fd = mkostemp(tmp, O_CLOEXEC);
	cr_assert_geq(big_fd, 0);
	cr_assert_eq(unlink(tmp), 0);
	snprintf(big_path, sizeof(big_path), "/proc/self/fd/%d", big_fd);
	cr_assert_eq(pr_elf_symbol_offset(exe, len, "prtest_elf_marker", &g.want), 0);
	big_layout(&g, exe, len);
	big_write(&g);
	run_call(&c, UINT64_MAX, 0);
	cr_assert_eq(c.err, 0, "%s", c.why);
	cr_assert_eq(c.off, g.want);
	full_ns = c.ns;
	srandom((unsigned)now_ns());
	for (int r = 0; r < ROUNDS; r++) {
		uint64_t after = full_ns / 20 + (uint64_t)random() % (full_ns / 2);
		uint64_t cut = (uint64_t)random() % g.cut_max;

		big_write(&g);
		run_call(&c, after, cut);
		if (c.err == 0) {
			cr_assert_eq(c.off, g.want, "round %d: offset %#llx, want %#llx", r,
				     (unsigned long long)c.off, (unsigned long long)g.want);
			whole++;
			continue;
		}
		cr_assert_lt(c.err, 0);
		cr_assert_not_null(strstr(c.why, big_path), "round %d: %d '%s'", r, c.err, c.why);
		if (c.err == -EAGAIN) {
			cr_assert_not_null(strstr(c.why, "changed while it was read"), "%s", c.why);
			cut_mid++;
		}
	}
	cr_log_info("%d of %d rounds cut mid-read, %d whole, a call takes %.0f ms", cut_mid,
		    ROUNDS, whole, full_ns / 1e6);
	cr_assert_gt(cut_mid, 0, "no round cut the file while it was read (%d whole)", whole);
	close(big_fd);
	free(g.sh);
	free(exe);
}

/* ---------------------------------------------- not a regular file */

struct refusal {
	int err;
	char why[512];
};

/* The call in a child that SIGALRM ends if it blocks, so that the parent
 * still removes what it made. */
static void refused(const char *path, int want, const char *kind)
{
	struct refusal r = { 0 };
	uint64_t off = 0;
	int p[2], status;
	pid_t pid;

	cr_assert_eq(pipe(p), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		alarm(5);
		r.err = perfring_uprobe_offset(path, "main", &off);
		snprintf(r.why, sizeof(r.why), "%s", perfring_session_last_error(NULL));
		_exit(write(p[1], &r, sizeof(r)) == (ssize_t)sizeof(r) ? 0 : 1);
	}
	close(p[1]);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: the call %s", path,
		  WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM ? "blocked for 5 s" :
		  "failed");
	cr_assert_eq(read(p[0], &r, sizeof(r)), (ssize_t)sizeof(r));
	close(p[0]);
	cr_assert_eq(r.err, want, "%s: %d '%s'", path, r.err, r.why);
	cr_assert_not_null(strstr(r.why, path), "%s", r.why);
	cr_assert_not_null(strstr(r.why, kind), "%s", r.why);
}

static char dir[64], fifo[96];

static void fifo_cleanup(void)
{
	if (fifo[0])
		unlink(fifo);
	if (dir[0])
		rmdir(dir);
}

/* A FIFO is refused at once, never waited on for a writer; a directory
 * and a device are named. */
Test(elf, paths_that_are_not_regular_files_are_named, .fini = fifo_cleanup)
{
	snprintf(dir, sizeof(dir), "/tmp/test_elf.XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	refused(fifo, -ENOEXEC, "is a FIFO");
	refused(dir, -EISDIR, "is a directory");
	refused("/dev/null", -ENOEXEC, "is a character device");
}
