#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Prints the test suites marked `.serialSuite` (Tests/Support/SerialSuiteTrait.swift) as one
# regular expression, `\.A/|\.B/`, for `swift test --skip` and `--filter`: a test's ID is
# `Module.Suite/test()`, so each name matches its own suite and the suites nested in it, never
# another suite whose name merely contains it. A suite's `@Suite(` may span lines: everything
# from it to the next type declaration is its attribute (comment lines are not read).
#
#   serial-suites.sh                   every serial suite
#   serial-suites.sh --in DIR...       those in the test directories named
#   serial-suites.sh --not-in DIR...   those in all the others
#
# `make test` runs the serial suites as two streams side by side, split by directory this way,
# so that a suite added anywhere is in exactly one of them.
set -eu
cd "$(dirname "$0")/.."
mode=${1:-all}
[ $# -gt 0 ] && shift
files() {
	find Tests -name '*.swift' | LC_ALL=C sort | while read -r file; do
		inside=no
		for dir in "$@"; do case $file in "${dir%/}"/*) inside=yes ;; esac; done
		case $mode in
		--in) [ $inside = yes ] && echo "$file" ;;
		--not-in) [ $inside = no ] && echo "$file" ;;
		*) echo "$file" ;;
		esac
	done
}
files "$@" | xargs awk '
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
