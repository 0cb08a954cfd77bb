# libFuzzer targets are built by fuzz/run.sh with clang, apart from the main
# build (which may use gcc). `make fuzz FUZZ_SECONDS=60` builds and runs them.
FUZZ_SECONDS ?= 60
EXTRA_DIST += fuzz/run.sh fuzz/README fuzz/corpus fuzz/fuzz_ring.c fuzz/fuzz_tracefs.c \
	fuzz/fuzz_cpulist.c fuzz/gen_ring_corpus.c fuzz/fuzz_parse.c fuzz/gen_parse_corpus.c \
	fuzz/fuzz_backward.c fuzz/fuzz_elf.c fuzz/fuzz_uevent.c fuzz/fuzz_ringbuf.c
fuzz:
	FUZZ_BUILD='$(abs_builddir)/fuzz/build' $(SHELL) $(top_srcdir)/fuzz/run.sh $(FUZZ_SECONDS)
.PHONY: fuzz
