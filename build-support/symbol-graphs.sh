#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Extracts the symbol graphs of what a program reaches through `import NetPath` — NetPath and
# every module Sources/NetPath/Exports.swift re-exports from — and of any further MODULE named,
# from the debug build, into OUT/MODULE/. Prints the export list ("NetPath", then "Module" or
# "Module.Name" per `@_exported import` line) for the caller to filter scoped re-exports.
# Used by build-support/docs.sh and build-support/public-surface.sh.
#   build-support/symbol-graphs.sh OUT [FLAG...] [-- MODULE...]
set -eu
out=$1
shift
flags=
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    flags="$flags $1"
    shift
done
[ $# -gt 0 ] && shift
# BIN_PATH: the debug build's directory, for callers (the tests) that must not run SwiftPM
# while it holds the build directory's lock.
bin=${BIN_PATH:-$(swift build --show-bin-path)}
exports="NetPath $(sed -nE 's/^@_exported import (class |struct |enum |protocol |typealias |func |var )?([A-Za-z.]+).*/\2/p' Sources/NetPath/Exports.swift)"
for module in $(printf '%s\n' $exports "$@" | cut -d. -f1 | sort -u); do
    mkdir -p "$out/$module"
    # shellcheck disable=SC2086 # $flags are separate words
    swift-symbolgraph-extract -module-name "$module" -target "$(uname -m)-unknown-linux-gnu" \
        -I "$bin/Modules" -I Sources/CNetlink -I "$bin/CLinux.build" -I .build/checkouts/swift-system/Sources/CSystem/include \
        $(pkg-config --cflags-only-I libnl-route-3.0 | sed 's/-I/-Xcc -I/g') \
        -minimum-access-level public $flags -output-dir "$out/$module" >/dev/null
done
echo $exports
