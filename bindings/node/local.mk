# bindings/node: the Node-API addon perfring.node and its package. The core
# and the uv adapter's source are linked in statically, the adapter compiled
# against Node's own uv.h; no libuv is linked: Node provides every uv_*
# symbol (bindings/node/README.md says why).
EXTRA_DIST += bindings/node/README.md bindings/node/package.json bindings/node/index.js \
	bindings/node/exports.map bindings/node/examples/top-switch.js \
	bindings/node/bench/getpid.js bindings/node/bench/uv-getpid.c \
	bindings/node/test/helpers.js bindings/node/test/exact.test.js \
	bindings/node/test/fields.test.js bindings/node/test/errors.test.js \
	bindings/node/test/lifetime.test.js bindings/node/test/link.test.js \
	bindings/node/test/hotplug.test.js bindings/node/test/hotplug-child.js \
	bindings/node/test/misuse.test.js bindings/node/test/command.test.js \
	bindings/node/test/order.test.js bindings/node/test/samples.test.js \
	tests/test_node.sh

if BUILD_NODE
nodepkgdir = $(libdir)/node_modules/perfring
nodepkg_LTLIBRARIES = bindings/node/perfring.la
nodepkg_DATA = bindings/node/package.json bindings/node/index.js
bindings_node_perfring_la_SOURCES = bindings/node/src/pn.h bindings/node/src/addon.c \
	bindings/node/src/watch.c bindings/node/src/session.c bindings/node/src/opts.c \
	bindings/node/src/format.c bindings/node/src/buf.c bindings/node/src/js.c \
	bindings/node/src/handles.c bindings/node/src/error.c bindings/node/src/cpus.c \
	bindings/node/src/child.c bindings/common/spawn.h bindings/common/spawn.c \
	bindings/common/tpfields.h bindings/common/tpfields.c \
	adapters/uv/perfring-uv.c
# Node's headers come first, so <uv.h> is Node's, never the system libuv's.
bindings_node_perfring_la_CPPFLAGS = -I$(NODE_INCDIR) $(AM_CPPFLAGS) \
	-I$(top_srcdir)/adapters/uv/include -I$(top_srcdir)/bindings/common -DNAPI_VERSION=8
bindings_node_perfring_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
bindings_node_perfring_la_LIBADD = core/libperfring-core.la
bindings_node_perfring_la_LDFLAGS = $(AM_LDFLAGS) -module -shared -avoid-version -shrext .node \
	-Wl,--version-script=$(top_srcdir)/bindings/node/exports.map
EXTRA_bindings_node_perfring_la_DEPENDENCIES = bindings/node/exports.map

# Node loads perfring.node; libtool's perfring.la has no use there.
install-data-hook:
	rm -f '$(DESTDIR)$(nodepkgdir)/perfring.la'
uninstall-hook:
	rm -f '$(DESTDIR)$(nodepkgdir)/perfring.node'
	-rmdir '$(DESTDIR)$(nodepkgdir)' '$(DESTDIR)$(libdir)/node_modules' 2>/dev/null

TESTS += tests/test_node.sh

# The C side of bindings/node/bench/getpid.js (run by hand; see the README).
if BUILD_UV
noinst_PROGRAMS += bindings/node/bench/uv-getpid
bindings_node_bench_uv_getpid_SOURCES = bindings/node/bench/uv-getpid.c
bindings_node_bench_uv_getpid_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/adapters/uv/include
bindings_node_bench_uv_getpid_CFLAGS = $(AM_CFLAGS) $(LIBUV_CFLAGS)
bindings_node_bench_uv_getpid_LDADD = adapters/uv/libperfring-uv.la core/libperfring.la $(LIBUV_LIBS)
bindings_node_bench_uv_getpid_LDFLAGS = $(AM_LDFLAGS) -no-install
endif
endif
