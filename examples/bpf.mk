# examples/bpf-uv: a libbpf tool read on libuv through libperfring-uv. Its
# BPF program is compiled by clang -target bpf (configure checks for it and
# for libbpf); libbpf is the example's, never the core's.
EXTRA_DIST += examples/bpf-uv.c examples/bpf/getpid.bpf.c tests/test_bpf_example.sh
if BUILD_BPF_EXAMPLE
noinst_PROGRAMS += examples/bpf-uv
examples_bpf_uv_SOURCES = examples/bpf-uv.c
examples_bpf_uv_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/adapters/uv/include \
	-DBPF_UV_OBJECT='"$(abs_top_builddir)/examples/bpf/getpid.bpf.o"'
examples_bpf_uv_CFLAGS = $(AM_CFLAGS) $(LIBUV_CFLAGS) $(LIBBPF_CFLAGS)
examples_bpf_uv_LDADD = adapters/uv/libperfring-uv.la core/libperfring.la $(LIBUV_LIBS) \
	$(LIBBPF_LIBS)
EXTRA_examples_bpf_uv_DEPENDENCIES = examples/bpf/getpid.bpf.o
examples/bpf/getpid.bpf.o: $(srcdir)/examples/bpf/getpid.bpf.c
	@mkdir -p examples/bpf
	$(AM_V_CC)$(BPF_CLANG) -O2 -g -target bpf $(BPF_CPPFLAGS) -c $(srcdir)/examples/bpf/getpid.bpf.c -o $@
CLEANFILES += examples/bpf/getpid.bpf.o
TESTS += tests/test_bpf_example.sh
endif

# examples/getpidsnoop: a ring-buffer tool on libuv in the style of
# libbpf-tools, its program as raw instructions (no clang, no libbpf), and
# its end-to-end test.
if BUILD_UV
noinst_PROGRAMS += examples/getpidsnoop
examples_getpidsnoop_SOURCES = examples/getpidsnoop.c
examples_getpidsnoop_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/adapters/uv/include
examples_getpidsnoop_CFLAGS = $(AM_CFLAGS) $(LIBUV_CFLAGS)
examples_getpidsnoop_LDADD = adapters/uv/libperfring-uv.la core/libperfring.la $(LIBUV_LIBS)
TESTS += examples/test_getpidsnoop.sh
endif
EXTRA_DIST += examples/test_getpidsnoop.sh
