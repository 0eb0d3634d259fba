#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
#   build-support/timed.sh LABEL COMMAND...
#
# Runs COMMAND and then says how long it took, so that `make test` shows where its time goes.
label=$1
shift
start=$(date +%s)
"$@"
status=$?
echo "make test: $label took $(($(date +%s) - start)) s" >&2
exit $status
