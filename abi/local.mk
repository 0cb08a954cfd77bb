# Each shared library exports through its version script (abi/*.map): every
# symbol carries a version node, and the script, not only the visibility,
# decides what leaves the library (tests/check-exports.sh checks both).
# abi/*.abi are the abidw baselines scripts/dev abi-check compares a fresh
# build with, abi/VERSION the library versions they were recorded for.
core_libperfring_la_LDFLAGS += -Wl,--version-script=$(top_srcdir)/abi/libperfring.map
EXTRA_core_libperfring_la_DEPENDENCIES = $(top_srcdir)/abi/libperfring.map
if BUILD_UV
adapters_uv_libperfring_uv_la_LDFLAGS += \
	-Wl,--version-script=$(top_srcdir)/abi/libperfring-uv.map
EXTRA_adapters_uv_libperfring_uv_la_DEPENDENCIES = $(top_srcdir)/abi/libperfring-uv.map
endif
if BUILD_EVENT
adapters_event_libperfring_event_la_LDFLAGS += \
	-Wl,--version-script=$(top_srcdir)/abi/libperfring-event.map
EXTRA_adapters_event_libperfring_event_la_DEPENDENCIES = \
	$(top_srcdir)/abi/libperfring-event.map
endif
if BUILD_EV
adapters_ev_libperfring_ev_la_LDFLAGS += \
	-Wl,--version-script=$(top_srcdir)/abi/libperfring-ev.map
EXTRA_adapters_ev_libperfring_ev_la_DEPENDENCIES = $(top_srcdir)/abi/libperfring-ev.map
endif
EXTRA_DIST += abi/libperfring.map abi/libperfring-uv.map abi/libperfring-event.map \
	abi/libperfring-ev.map abi/abi.sh abi/suppressions abi/VERSION abi/libperfring.abi \
	abi/libperfring-uv.abi abi/libperfring-event.abi abi/libperfring-ev.abi
# The Debian packaging (scripts/dev package builds it from a copy of the tree).
EXTRA_DIST += debian/changelog debian/control debian/copyright debian/rules \
	debian/source/format debian/clean debian/libperfring0.install \
	debian/libperfring-uv0.install debian/libperfring-event0.install \
	debian/libperfring-ev0.install debian/libperfring-dev.install \
	debian/perfring-tools.install debian/python3-perfring.install \
	debian/libperfring0.symbols debian/libperfring-uv0.symbols \
	debian/libperfring-event0.symbols debian/libperfring-ev0.symbols \
	debian/tests/control debian/tests/watch debian/tests/readme-uv debian/tests/python
