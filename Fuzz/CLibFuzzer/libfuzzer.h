// SPDX-License-Identifier: Apache-2.0
// libFuzzer's driver as a function, for harnesses that have a main of their own.
#ifndef NETPATH_CLIBFUZZER_H
#define NETPATH_CLIBFUZZER_H

#include <stddef.h>
#include <stdint.h>

/// Runs libFuzzer with the command line `argc`/`argv` (its flags, corpus directories or
/// inputs), calling `callback` with each input; returns its exit status. Part of libFuzzer
/// since LLVM 12, linked in by `-sanitize=fuzzer` (compiler-rt's FuzzerDriver.cpp).
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
