# netpath — the two set-up commands are `make run` and `make test`; both install what they need.

SWIFT      ?= swift
CONFIG     ?= debug
BUILD_DIR  := .build/$(CONFIG)
PREFIX     ?= /usr/local
APT_GET    := DEBIAN_FRONTEND=noninteractive apt-get

# Debian packages: the libnl headers the CNetlink target builds against, libcurl's and
# libseccomp's for netpath-probe (the connectivity probe helper), iproute2 for the
# namespace tests, systemd's analyzer for verifying the unit file, and for the tests of
# `make deb`: dpkg-dev, lintian, mandoc (manual pages) and the three shells whose completions
# the package ships; python3 for the tests' HTTP endpoints, util-linux's setpriv for the tests
# run as nobody.
BUILD_PACKAGES := libnl-3-dev libnl-route-3-dev libcurl4-openssl-dev libseccomp-dev pkg-config
TEST_PACKAGES  := iproute2 systemd dpkg-dev lintian mandoc bash-completion zsh fish python3 util-linux

# The suites `make test` runs after the rest, one test at a time, are those marked
# `@Suite(.serialSuite)` (Tests/Support/SerialSuiteTrait.swift), read from the sources as one
# regex that --skip and --filter both get, so that each test runs exactly once.
SERIAL_SUITES = $(shell build-support/serial-suites.sh)
# The serial suites run as two streams side by side, split by test directory (each stream one
# test at a time): the kernel-and-agent suites, and all the others.
SERIAL_STREAM_A_DIRS := Tests/NetPathAgentTests Tests/NetPathLinuxTests Tests/CLITests
SERIAL_STREAM_A = $(shell build-support/serial-suites.sh --in $(SERIAL_STREAM_A_DIRS))
SERIAL_STREAM_B = $(shell build-support/serial-suites.sh --not-in $(SERIAL_STREAM_A_DIRS))
# The test bundle, run directly for the serial streams: two `swift test` at once would wait for
# each other's lock on .build.
TEST_BUNDLE = $(shell $(SWIFT) build --show-bin-path)/netpathPackageTests.xctest
SERIAL_RUN = $(TEST_BUNDLE) --testing-library swift-testing --no-parallel --filter

.PHONY: all deps test-deps build run test test-as-nobody test-host host-deps bench bench-build docs clean format install install-build order uninstall \
	deb deb-deps deb-build version fuzz fuzz-build fuzz-smoke

# `make install` layout. DESTDIR stages the whole tree under another root (packaging, tests).
# netpathd goes to SBINDIR (the Debian package: /usr/sbin), netpathctl to BINDIR, the probe
# helper netpath-probe to LIBEXECDIR (netpathd looks for it there: docs/probe-helper.md); the unit's
# ExecStart is rewritten to $(SBINDIR)/netpathd. NO_BUILD=1 installs what is
# already in INSTALL_BUILD_DIR without running swift build (used by the tests, and by
# `make install-build && sudo make install NO_BUILD=1` so root never writes in .build).
# The probe helper's system user is declared in SYSUSERSDIR/netpath.conf (systemd-sysusers reads
# /usr/lib/sysusers.d): running systemd-sysusers creates it. Nothing does so by itself after a
# `make install` (at boot, systemd-sysusers.service runs only after /usr was updated).
# netpathd always reads /etc/netpath: change SYSCONFDIR, UNITDIR and SYSUSERSDIR only to stage
# elsewhere.
DESTDIR           ?=
BINDIR            ?= $(PREFIX)/bin
SBINDIR           ?= $(BINDIR)
LIBEXECDIR        ?= $(PREFIX)/libexec/netpath
DATADIR           ?= $(PREFIX)/share/netpath
SYSCONFDIR        ?= /etc
UNITDIR           ?= /lib/systemd/system
SYSUSERSDIR       ?= /usr/lib/sysusers.d
INSTALL_CONFIG    ?= release
# How the installed binaries are linked, and why. Idle RSS has a target (12 MB for
# `netpathctl monitor --local`; BENCHMARKS.md), and at idle most of it is file-backed pages that
# start-up touched, so each flag removes something every start read:
# - --static-swift-stdlib: the Swift runtime is linked in, so the installed binaries need only
#   glibc, libgcc_s and libnl at run time, not the toolchain in /opt/swift (whose RUNPATH a plain
#   build records).
# - -L build-support/static-libstdc++: the Swift runtime's C++ library is linked in too. That
#   directory's libstdc++.so is a linker script that names libstdc++.a, because -static-stdlib
#   passes a plain -lstdc++; loading libstdc++.so.6 cost ~0.75 MiB resident (its symbol tables
#   and relocations, which the dynamic loader reads and applies at every start).
# - -use-ld=lld, -z pack-relative-relocs: lld packs the executable's ~1 MB of relative
#   relocations, which the dynamic loader reads at every start, into a few KB (DT_RELR: needs
#   glibc 2.36, Debian 12; older glibc refuses to load the binary, naming GLIBC_ABI_DT_RELR).
#   ~0.9 MiB.
# - --no-export-dynamic: -static-stdlib exports every Swift symbol of ours in .dynsym (~0.5 MB
#   with its strings), which nothing looks up: nothing dlopens these executables or resolves
#   their symbols at run time. ~0.6 MiB. Crash backtraces still name our functions (the Swift
#   backtracer, gdb and coredumpctl read .symtab and DWARF, which stay); dladdr() no longer does.
# - -cross-module-optimization: the agent's modules call each other's code on every event (Event's
#   accessors, the standard library's and the dependencies' generics); compiled without the
#   callee's body, each call goes through unspecialized code that looks up generic metadata at
#   run time. With the bodies available the compiler specializes and inlines them. It serializes
#   public declarations only: `package` generics (IdleWaiters) stay unspecialized in the modules
#   that use them, which is why SubjectQueues is public, in NetPathQueues, a module of its own
#   (Sources/NetPathQueues/SubjectQueues.swift says why). It shortens the agent's way from a
#   link change to its hook's spawn without growing idle RSS
#   (BENCHMARKS.md, "built with `-cross-module-optimization`"). It applies to the dependencies'
#   modules too, and only to these builds: `make build` and `make test` build for debugging.
# - --symbol-ordering-file build-support/netpath.order: the functions start-up, an event's path,
#   a hook's spawn and probing call, in the order of their first call (`make order` records them:
#   build-support/order.sh), are laid out together, so a start makes only their part of the code
#   resident, not most of it (the kernel maps code in 64 KiB blocks around each page touched);
#   it keeps idle RSS under its 12 MB targets (BENCHMARKS.md). Names the file does not know
#   (code or toolchain changed since) keep the linker's order: a stale file costs memory, never
#   correctness, and DebianPackageTests then warn. SwiftPM does not know the file, so
#   install-build relinks when it changes.
# - -function-sections (a frontend flag): each Swift function in a section of its own, so that
#   the order places functions, not whole source files. The driver does not count -Xfrontend
#   flags among those that make a module stale: after changing it, remove the scratch
#   directory's objects (rm -rf $(INSTALL_SCRATCH)/x86_64-unknown-linux-gnu/release).
INSTALL_SWIFT_FLAGS ?= --static-swift-stdlib -Xswiftc -L$(CURDIR)/build-support/static-libstdc++ \
	-Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs -Xlinker --no-export-dynamic \
	-Xswiftc -cross-module-optimization -Xswiftc -Xfrontend -Xswiftc -function-sections \
	-Xlinker --symbol-ordering-file=$(CURDIR)/build-support/netpath.order -Xlinker --no-warn-symbol-ordering
# Its own scratch directory: these flags change every compile command, so sharing .build with
# `swift build -c release` would rebuild everything each time one follows the other.
INSTALL_SCRATCH   ?= .build/install
INSTALL_BUILD_DIR ?= $(INSTALL_SCRATCH)/$(INSTALL_CONFIG)
NO_BUILD          ?=
INSTALL           ?= install

all: build

# Installs the C libraries only when pkg-config cannot find them (no apt on every run).
deps:
	@if ! pkg-config --exists libnl-route-3.0 libcurl libseccomp 2>/dev/null; then \
		echo "Installing build dependencies: $(BUILD_PACKAGES)"; \
		$(APT_GET) update -qq && $(APT_GET) install -y -qq $(BUILD_PACKAGES); \
	fi

test-deps: deps
	@missing=""; \
	command -v ip >/dev/null 2>&1 || missing="$$missing iproute2"; \
	command -v systemd-analyze >/dev/null 2>&1 || missing="$$missing systemd"; \
	command -v dpkg-shlibdeps >/dev/null 2>&1 || missing="$$missing dpkg-dev"; \
	command -v python3 >/dev/null 2>&1 || missing="$$missing python3"; \
	command -v setpriv >/dev/null 2>&1 || missing="$$missing util-linux"; \
	for tool in lintian mandoc zsh fish; do command -v $$tool >/dev/null 2>&1 || missing="$$missing $$tool"; done; \
	test -f /usr/share/bash-completion/bash_completion || missing="$$missing bash-completion"; \
	if [ -n "$$missing" ]; then \
		echo "Installing test dependencies:$$missing"; \
		$(APT_GET) update -qq && $(APT_GET) install -y -qq $$missing; \
	fi

build: deps
	$(SWIFT) build -c $(CONFIG)

# Runs the agent in the foreground on the embedded default configuration.
run: build
	$(BUILD_DIR)/netpathd

# Builds everything and runs every test. Namespace tests need root; under CI=true they fail
# rather than skip when root is missing.
test: test-deps
	@# A test that crashed in an earlier run skipped its cleanup: remove what it left.
	@for ns in $$(ip netns list 2>/dev/null | awk '/^nptest-/ {print $$1}'); do \
		echo "removing stale test namespace $$ns"; ip netns del "$$ns"; \
	done
	@# The house style (.swift-format), as `make format` writes it.
	$(TIMED) format-lint $(SWIFT) format lint --strict --recursive $(FORMAT_PATHS)
	$(TIMED) debug-build $(SWIFT) build --build-tests
	@# The library's documentation must build with DocC, without a warning.
	@$(TIMED) docs $(MAKE) --no-print-directory docs
	@test -n '$(SERIAL_SUITES)' || { echo "build-support/serial-suites.sh found no serial suite" >&2; exit 1; }
	@# The package tests build `make deb` from the release binaries: they build while the parallel
	@# tests run (those tests share two cores with 300 others anyway; the ones that measure time
	@# are the serial suites below, which run after the build has ended).
	$(TIMED) parallel-tests build-support/alongside.sh release-build '$(MAKE) --no-print-directory deb-build' \
		env NETPATH_TEST_PHASE=parallel $(SWIFT) test --skip-build --skip '$(SERIAL_SUITES)'
	@# These suites measure time (hook timeouts, "no overrun with the default buffer" in a
	@# 100,000-route storm): not against 300 others for two cores, but in two streams of one test
	@# at a time, so that a timed test shares the cores with one other at most.
	$(TIMED) serial-tests build-support/alongside.sh serial-tests-b '$(SERIAL_RUN) "$(SERIAL_STREAM_B)"' \
		$(SERIAL_RUN) '$(SERIAL_STREAM_A)'
	@# Each libFuzzer harness over its committed corpus, then a few seconds of fuzzing (docs/fuzzing.md).
	$(TIMED) fuzz-smoke $(MAKE) --no-print-directory fuzz-smoke
	@$(TIMED) tests-as-nobody $(MAKE) --no-print-directory test-as-nobody
	@# The host phase: the .deb on a real Debian 12 guest under qemu (Tests/Host/README.md).
	@$(if $(filter 0 no false,$(HOST_PHASE)),echo "host phase skipped (HOST_PHASE=$(HOST_PHASE))",$(MAKE) --no-print-directory test-host)

# The host phase alone: builds (once, cached in .build/host) a Debian 12 guest from Debian's
# packages, boots it under qemu, installs the .deb this tree builds and runs Tests/Host/scenarios
# in it: systemd as PID 1, Debian's kernel, real Wi-Fi, systemd-networkd and NetworkManager.
# NETPATH_HOST_ONLY=PART runs only the scenarios whose name contains PART.
HOST_PHASE ?= 1
# Each step of `make test` says how long it took.
TIMED := build-support/timed.sh
# What `make format` formats and `make test` lints.
FORMAT_PATHS := Sources Tests Plugins Examples Fuzz Package.swift
HOST_DIR := .build/host
DEB_ARCH = $(shell dpkg --print-architecture)
test-host: host-deps deb-deps deb-build
	@$(MAKE) --no-print-directory deb NO_BUILD=1 DEB_DIR=$(HOST_DIR)/deb
	@$(MAKE) --no-print-directory deb NO_BUILD=1 DEB_DIR=$(HOST_DIR)/deb-upgrade DEB_VERSION=$(VERSION)+hostupgrade
	Tests/Host/run.sh $(HOST_DIR)/deb/netpath_$(VERSION)_$(DEB_ARCH).deb \
		$(HOST_DIR)/deb-upgrade/netpath_$(VERSION)+hostupgrade_$(DEB_ARCH).deb

host-deps:
	@missing=""; \
	command -v debootstrap >/dev/null 2>&1 || missing="$$missing debootstrap"; \
	command -v qemu-system-x86_64 >/dev/null 2>&1 || missing="$$missing qemu-system-x86"; \
	command -v qemu-img >/dev/null 2>&1 || missing="$$missing qemu-utils"; \
	command -v mkfs.ext4 >/dev/null 2>&1 || missing="$$missing e2fsprogs"; \
	if [ -n "$$missing" ]; then \
		echo "Installing host-phase dependencies:$$missing"; \
		$(APT_GET) install -y -qq --no-install-recommends $$missing || \
			{ $(APT_GET) update -qq && $(APT_GET) install -y -qq --no-install-recommends $$missing; }; \
	fi


# The hook tests need no root (the trust rules accept the agent's own user): as root, `make test`
# runs them once more as nobody, with a home of its own under /run, so they keep working without
# it (only where nobody can read the checkout: a clone inside a private directory cannot be).
test-as-nobody:
	@bin="$$($(SWIFT) build --show-bin-path)/netpathPackageTests.xctest"; \
	nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"; \
	if [ "$$(id -u)" != 0 ] || ! command -v setpriv >/dev/null 2>&1; then exit 0; fi; \
	if ! $$nobody test -x "$$bin" -a -r "$(CURDIR)/Package.swift"; then \
		echo "not running NetPathDispatchTests as nobody: $(CURDIR) is not readable by nobody"; exit 0; \
	fi; \
	home=$$(mktemp -d /run/netpath-nobody-XXXXXX) && chown 65534:65534 "$$home" && chmod 0755 "$$home" || exit 1; \
	echo "running NetPathDispatchTests as nobody"; \
	$$nobody env -i PATH=/usr/bin:/bin HOME="$$home" "$$bin" --testing-library swift-testing \
		--no-parallel --filter NetPathDispatchTests; \
	status=$$?; rm -rf "$$home"; exit $$status

# Measures what `make install` installs: the same flags, plus NETPATH_BENCH (netpathctl's hidden
# --bench-snapshots, which bench/latency.py and bench/storm.py read, and the engine's publish time
# it prints: no release build has either), in a scratch directory of its own so that the
# installed build never gets it.
# bench-build only builds them (another tree's, say, for BENCH_COMPARE_BUILD: bench/run.sh's header).
BENCH_SCRATCH ?= .build/bench
bench-build:
	$(MAKE) --no-print-directory install-build INSTALL_SCRATCH="$(BENCH_SCRATCH)" \
		INSTALL_SWIFT_FLAGS='$(INSTALL_SWIFT_FLAGS) -Xswiftc -DNETPATH_BENCH'
bench: bench-build
	BUILD_DIR="$(BENCH_SCRATCH)/$(INSTALL_CONFIG)" ./bench/run.sh

# The libFuzzer harnesses (Fuzz/NAME, docs/fuzzing.md): one executable per parser of outside
# input, built only here (NETPATH_FUZZ=1 adds them to the package) with libFuzzer and
# AddressSanitizer, optimized (a debug build runs several times fewer inputs a second), in a
# scratch directory of their own. `make fuzz` runs each for FUZZ_SECONDS, keeping what it finds
# in FUZZ_WORK (the committed corpora are only read); `make fuzz-smoke`, which `make test` runs,
# runs each over its committed corpus and then for FUZZ_SMOKE_SECONDS.
FUZZ_HARNESSES     := toml config trace control-request control-reply netlink probe-wire http-verdict
FUZZ_SECONDS       ?= 60
FUZZ_SMOKE_SECONDS ?= 3
FUZZ_SCRATCH       ?= .build/fuzz
FUZZ_WORK          ?= $(FUZZ_SCRATCH)/work
FUZZ_BIN            = $(FUZZ_SCRATCH)/release
fuzz-build: deps
	@for harness in $(FUZZ_HARNESSES); do \
		NETPATH_FUZZ=1 $(SWIFT) build -c release --scratch-path "$(FUZZ_SCRATCH)" \
			-Xswiftc -sanitize=fuzzer,address --product "fuzz-$$harness" || exit 1; \
	done
fuzz: fuzz-build
	build-support/fuzz.sh run $(FUZZ_SECONDS) "$(FUZZ_BIN)" "$(FUZZ_WORK)" $(FUZZ_HARNESSES)
fuzz-smoke: fuzz-build
	build-support/fuzz.sh smoke $(FUZZ_SMOKE_SECONDS) "$(FUZZ_BIN)" "$(FUZZ_WORK)" $(FUZZ_HARNESSES)

# The library's documentation as `import NetPath` shows it (and the Network product's), built by
# DocC from the debug build's symbol graphs into .build/docs/*.doccarchive; any DocC warning fails.
docs: deps
	$(SWIFT) build --target Network  # and NetPath, which it depends on
	./build-support/docs.sh

clean:
	rm -rf .build

format:
	$(SWIFT) format --in-place --recursive $(FORMAT_PATHS)

install-build: deps $(INSTALL_SCRATCH)/order-linked-$(INSTALL_CONFIG)
	$(SWIFT) build -c $(INSTALL_CONFIG) --scratch-path "$(INSTALL_SCRATCH)" $(INSTALL_SWIFT_FLAGS)

# The binaries are linked in build-support/netpath.order's order, which SwiftPM does not track:
# when the file is newer than the last link, the binaries go, and install-build links them again.
$(INSTALL_SCRATCH)/order-linked-$(INSTALL_CONFIG): build-support/netpath.order
	rm -f "$(INSTALL_BUILD_DIR)/netpathd" "$(INSTALL_BUILD_DIR)/netpathctl" "$(INSTALL_BUILD_DIR)/netpath-probe"
	mkdir -p "$(INSTALL_SCRATCH)" && touch "$@"

# Records build-support/netpath.order anew from install-build's binaries, then links them in that
# order. Root: it runs netpathd in network namespaces of its own. With NO_BUILD=1 it neither builds
# nor links (`make install-build && sudo make order NO_BUILD=1 && make install-build`, so that root
# never writes in .build).
order: $(if $(filter 1 yes true,$(NO_BUILD)),,install-build)
	BUILD_DIR="$(INSTALL_BUILD_DIR)" ./build-support/order.sh
	$(if $(filter 1 yes true,$(NO_BUILD)),,$(MAKE) install-build)

# Binaries and the unit are replaced on every install; /etc/netpath/netpath.toml never is: when
# one exists, the shipped default goes beside it as netpath.toml.default. hooks.d is created
# empty (root-owned, 0755, as the agent's hook checks require) and an existing one is left as
# it is. The example hooks go to $(DATADIR)/examples, not enabled.
install: $(if $(filter 1 yes true,$(NO_BUILD)),,install-build)
	@set -eu; \
	for bin in netpathd netpathctl netpath-probe; do \
		test -x "$(INSTALL_BUILD_DIR)/$$bin" || { echo "make install: $(INSTALL_BUILD_DIR)/$$bin is missing (build first, or drop NO_BUILD)" >&2; exit 1; }; \
	done; \
	$(INSTALL) -d -m 0755 "$(DESTDIR)$(BINDIR)" "$(DESTDIR)$(SBINDIR)" "$(DESTDIR)$(LIBEXECDIR)" "$(DESTDIR)$(UNITDIR)"; \
	$(INSTALL) -m 0755 "$(INSTALL_BUILD_DIR)/netpathd" "$(DESTDIR)$(SBINDIR)/"; \
	$(INSTALL) -m 0755 "$(INSTALL_BUILD_DIR)/netpathctl" "$(DESTDIR)$(BINDIR)/"; \
	$(INSTALL) -m 0755 "$(INSTALL_BUILD_DIR)/netpath-probe" "$(DESTDIR)$(LIBEXECDIR)/"; \
	unit="$(DESTDIR)$(UNITDIR)/netpathd.service"; \
	sed -e 's|^ExecStart=/usr/local/bin/netpathd|ExecStart=$(SBINDIR)/netpathd|' \
		-e 's|^ExecReload=/usr/local/bin/netpathctl |ExecReload=$(BINDIR)/netpathctl |' config/netpathd.service > "$$unit.tmp"; \
	chmod 0644 "$$unit.tmp"; mv -f "$$unit.tmp" "$$unit"; \
	grep -qxF 'ExecStart=$(SBINDIR)/netpathd' "$$unit" || { echo "make install: ExecStart not rewritten in $$unit" >&2; exit 1; }; \
	grep -qxF 'ExecReload=$(BINDIR)/netpathctl reload' "$$unit" || { echo "make install: ExecReload not rewritten in $$unit" >&2; exit 1; }; \
	wait_unit="$(DESTDIR)$(UNITDIR)/netpath-wait-online.service"; \
	sed -e 's|/usr/local/bin/netpathctl wait-online|$(BINDIR)/netpathctl wait-online|' config/netpath-wait-online.service > "$$wait_unit.tmp"; \
	chmod 0644 "$$wait_unit.tmp"; mv -f "$$wait_unit.tmp" "$$wait_unit"; \
	grep -qxF 'ExecStart=$(BINDIR)/netpathctl wait-online' "$$wait_unit" || { echo "make install: ExecStart not rewritten in $$wait_unit" >&2; exit 1; }; \
	$(INSTALL) -d -m 0755 "$(DESTDIR)$(SYSUSERSDIR)"; \
	$(INSTALL) -m 0644 packaging/debian/netpath.sysusers "$(DESTDIR)$(SYSUSERSDIR)/netpath.conf"; \
	etc="$(DESTDIR)$(SYSCONFDIR)/netpath"; \
	test -d "$$etc" || $(INSTALL) -d -m 0755 "$$etc"; \
	if [ -e "$$etc/netpath.toml" ]; then \
		$(INSTALL) -m 0644 config/netpath.toml "$$etc/netpath.toml.default"; \
		echo "make install: kept the existing $$etc/netpath.toml; the shipped default is $$etc/netpath.toml.default"; \
	else \
		$(INSTALL) -m 0644 config/netpath.toml "$$etc/netpath.toml"; \
	fi; \
	test -d "$$etc/hooks.d" || $(INSTALL) -d -m 0755 "$$etc/hooks.d"; \
	if [ -d config/hooks.d ]; then \
		examples="$(DESTDIR)$(DATADIR)/examples/hooks.d"; \
		for hook in config/hooks.d/*; do \
			[ -f "$$hook" ] || continue; \
			if [ -x "$$hook" ]; then mode=0755; else mode=0644; fi; \
			$(INSTALL) -d -m 0755 "$(DESTDIR)$(DATADIR)" "$(DESTDIR)$(DATADIR)/examples" "$$examples"; \
			$(INSTALL) -m $$mode "$$hook" "$$examples/"; \
		done; \
	fi; \
	echo "make install: installed netpathd in $(DESTDIR)$(SBINDIR), netpathctl in $(DESTDIR)$(BINDIR), netpath-probe in $(DESTDIR)$(LIBEXECDIR), the units in $(DESTDIR)$(UNITDIR) (netpath-wait-online.service not enabled: docs/wait-online.md)"; \
	echo "make install: the probe helper's user netpath-probe is declared in $(DESTDIR)$(SYSUSERSDIR)/netpath.conf: run 'systemd-sysusers $(SYSUSERSDIR)/netpath.conf' to create it (until then the helper runs as nobody)"

# Removes what install put outside /etc; the configuration and hooks in /etc/netpath stay.
uninstall:
	rm -f "$(DESTDIR)$(SBINDIR)/netpathd" "$(DESTDIR)$(BINDIR)/netpathctl" "$(DESTDIR)$(UNITDIR)/netpathd.service"
	rm -f "$(DESTDIR)$(UNITDIR)/netpath-wait-online.service"
	rm -f "$(DESTDIR)$(LIBEXECDIR)/netpath-probe" "$(DESTDIR)$(SYSUSERSDIR)/netpath.conf"
	rmdir "$(DESTDIR)$(LIBEXECDIR)" 2>/dev/null || true
	rm -rf "$(DESTDIR)$(DATADIR)/examples"
	rmdir "$(DESTDIR)$(DATADIR)" 2>/dev/null || true
	@echo "make uninstall: left $(DESTDIR)$(SYSCONFDIR)/netpath and the user netpath-probe in place; run 'systemctl daemon-reload' if the unit was loaded"

# The Debian package: `make deb` writes $(DEB_DIR)/netpath_$(DEB_VERSION)_ARCH.deb. It stages
# `make install` (the same binaries, linked the same way: no Swift toolchain needed where it is
# installed) with Debian's layout, then adds manual pages and completions generated from the
# binaries themselves, the docs and the control files of packaging/debian, and builds with
# dpkg-deb (packaging/build-deb.sh). VERSION is read from its one place, NetPathVersion.swift;
# DEB_VERSION overrides only the package's Version (the tests build a higher one to upgrade to).
VERSION     := $(shell sed -n 's/^ *public static let current = "\([^"]*\)"$$/\1/p' Sources/NetPathCore/NetPathVersion.swift)
DEB_VERSION ?= $(VERSION)
DEB_DIR     ?= .build/deb
version:
	@echo $(VERSION)

# swift-argument-parser's generate-manual writes netpathd(8) and netpathctl(8) from the
# commands' definitions, the ones --help prints.
MANUAL_TOOL ?= $(INSTALL_BUILD_DIR)/generate-manual

# dpkg-shlibdeps and dpkg-gencontrol (dpkg-dev, which brings binutils' strip).
deb-deps:
	@if ! command -v dpkg-shlibdeps >/dev/null 2>&1 || ! command -v strip >/dev/null 2>&1; then \
		echo "Installing packaging dependencies: dpkg-dev"; \
		$(APT_GET) update -qq && $(APT_GET) install -y -qq dpkg-dev; \
	fi

deb-build: install-build
	$(SWIFT) build -c $(INSTALL_CONFIG) --scratch-path "$(INSTALL_SCRATCH)" $(INSTALL_SWIFT_FLAGS) --product generate-manual

deb: deb-deps $(if $(filter 1 yes true,$(NO_BUILD)),,deb-build)
	@test -n "$(VERSION)" || { echo "make deb: no version in Sources/NetPathCore/NetPathVersion.swift" >&2; exit 1; }
	@rm -rf "$(abspath $(DEB_DIR))/work"
	@$(MAKE) --no-print-directory install NO_BUILD=1 DESTDIR="$(abspath $(DEB_DIR))/work/debian/netpath" \
		PREFIX=/usr SBINDIR=/usr/sbin LIBEXECDIR=/usr/libexec/netpath DATADIR=/usr/share/doc/netpath SYSCONFDIR=/etc UNITDIR=/lib/systemd/system \
		SYSUSERSDIR=/usr/lib/sysusers.d >/dev/null
	@VERSION="$(VERSION)" DEB_VERSION="$(DEB_VERSION)" MANUAL_TOOL="$(abspath $(MANUAL_TOOL))" \
		sh packaging/build-deb.sh "$(abspath $(DEB_DIR))"
