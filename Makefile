# netpath — the two set-up commands are `make run` and `make test`; both install what they need.

SWIFT      ?= swift
CONFIG     ?= debug
BUILD_DIR  := .build/$(CONFIG)
PREFIX     ?= /usr/local
APT_GET    := DEBIAN_FRONTEND=noninteractive apt-get

# Debian packages: the libnl headers the CNetlink target builds against, iproute2 for the
# namespace tests, and systemd's analyzer for verifying the unit file.
BUILD_PACKAGES := libnl-3-dev libnl-route-3-dev pkg-config
TEST_PACKAGES  := iproute2 systemd

.PHONY: all deps test-deps build run test bench clean format

all: build

# Installs the C libraries only when pkg-config cannot find them (no apt on every run).
deps:
	@if ! pkg-config --exists libnl-route-3.0 2>/dev/null; then \
		echo "Installing build dependencies: $(BUILD_PACKAGES)"; \
		$(APT_GET) update -qq && $(APT_GET) install -y -qq $(BUILD_PACKAGES); \
	fi

test-deps: deps
	@missing=""; \
	command -v ip >/dev/null 2>&1 || missing="$$missing iproute2"; \
	command -v systemd-analyze >/dev/null 2>&1 || missing="$$missing systemd"; \
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
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

bench: deps
	$(SWIFT) build -c release
	./bench/run.sh

clean:
	rm -rf .build

format:
	$(SWIFT) format --in-place --recursive Sources Tests Package.swift
