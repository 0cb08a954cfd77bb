# bindings/python: the CPython extension perfring._perfring and its package
# perfring/. The core is linked in statically (as in the Node addon), so the
# installed package is the directory alone: PYTHON_SITEDIR/perfring.
PY_SOURCES = bindings/python/perfring/__init__.py bindings/python/perfring/_opts.py \
	bindings/python/perfring/_aio.py bindings/python/perfring/_sync.py \
	bindings/python/perfring/_order.py bindings/python/perfring/_reader.py
PY_TESTS = bindings/python/tests/conftest.py bindings/python/tests/bpfprog.py \
	bindings/python/tests/test_exact.py bindings/python/tests/test_fields.py \
	bindings/python/tests/test_errors.py bindings/python/tests/test_lifetime.py \
	bindings/python/tests/test_bpf.py bindings/python/tests/test_order.py \
	bindings/python/tests/test_hotplug.py
EXTRA_DIST += bindings/python/README.md bindings/python/exports.map $(PY_SOURCES) $(PY_TESTS) \
	bindings/python/bench/getpid.py bindings/python/test_python.sh

if BUILD_PYTHON
pyperfringdir = $(PYTHON_SITEDIR)/perfring
pyperfring_DATA = $(PY_SOURCES)
# Built as a module but installed by install-exec-local below: libtool would
# install a .la beside it that Python has no use for.
noinst_LTLIBRARIES += bindings/python/_perfring.la
bindings_python__perfring_la_SOURCES = bindings/python/src/py.h \
	bindings/python/src/module.c bindings/python/src/error.c \
	bindings/python/src/core.c bindings/python/src/add.c bindings/python/src/pull.c \
	bindings/python/src/sample.c bindings/python/src/event.c \
	bindings/python/src/format.c bindings/python/src/ringbuf.c bindings/python/src/hotplug.c \
	bindings/common/spawn.h bindings/common/spawn.c \
	bindings/common/tpfields.h bindings/common/tpfields.c
bindings_python__perfring_la_CPPFLAGS = $(PYTHON_INCLUDES) $(AM_CPPFLAGS) \
	-I$(top_srcdir)/bindings/common
bindings_python__perfring_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
bindings_python__perfring_la_LIBADD = core/libperfring-core.la
bindings_python__perfring_la_LDFLAGS = $(AM_LDFLAGS) -module -shared -avoid-version \
	-shrext $(PYTHON_EXT_SUFFIX) -rpath $(pyperfringdir) \
	-Wl,--version-script=$(top_srcdir)/bindings/python/exports.map
EXTRA_bindings_python__perfring_la_DEPENDENCIES = bindings/python/exports.map

install-exec-local:
	$(MKDIR_P) '$(DESTDIR)$(pyperfringdir)'
	$(INSTALL_PROGRAM) bindings/python/.libs/_perfring$(PYTHON_EXT_SUFFIX) \
		'$(DESTDIR)$(pyperfringdir)/_perfring$(PYTHON_EXT_SUFFIX)'
uninstall-local:
	rm -f '$(DESTDIR)$(pyperfringdir)/_perfring$(PYTHON_EXT_SUFFIX)'
	-rmdir '$(DESTDIR)$(pyperfringdir)' 2>/dev/null

TESTS += bindings/python/test_python.sh
endif
