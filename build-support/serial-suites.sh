#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Prints the test suites marked `.serialSuite` (Tests/Support/SerialSuiteTrait.swift) as one
# regular expression, `\.A/|\.B/`, for `swift test --skip` and `--filter`: a test's ID is
# `Module.Suite/test()`, so each name matches its own suite and the suites nested in it, never
# another suite whose name merely contains it. A suite's `@Suite(` may span lines: everything
# from it to the next type declaration is its attribute (comment lines are not read).
set -eu
cd "$(dirname "$0")/.."
find Tests -name '*.swift' | LC_ALL=C sort | xargs awk '
    FNR == 1 { attribute = ""; reading = 0 }
    /^[ \t]*\/\// { next }
    /@Suite[(]/ { attribute = "" ; reading = 1 }
    reading { attribute = attribute " " $0 }
    reading && match($0, /(struct|class|enum|actor)[ \t]+[A-Za-z_][A-Za-z0-9_]*/) {
        declaration = substr($0, RSTART, RLENGTH)
        sub(/^(struct|class|enum|actor)[ \t]+/, "", declaration)
        if (attribute ~ /[.]serialSuite([^A-Za-z0-9_]|$)/) names = names (names == "" ? "" : "|") "\\." declaration "/"
        reading = 0
    }
    END { print names }
'
