// SPDX-License-Identifier: Apache-2.0

import CLibFuzzer

#if canImport(Glibc)
    import Glibc
#endif

/// Runs libFuzzer on a harness's check, from the harness's own `main`.
///
/// Why a harness has a `main`: SwiftPM links an executable target's `main` to the one its module
/// defines (`--defsym main=<module>_main`), so a module with only `LLVMFuzzerTestOneInput` and
/// libFuzzer's `main` does not link. The harness's `main` calls ``run(_:)``, which hands the
/// command line to libFuzzer's driver (`LLVMFuzzerRunDriver`): its flags, corpus directories
/// and inputs work as with any libFuzzer binary.
///
/// ```swift
/// @main enum TOMLHarness {
///     static func main() { Fuzzer.run(check) }
///     static func check(_ bytes: UnsafeBufferPointer<UInt8>) { /* parse, assert invariants */ }
/// }
/// ```
package enum Fuzzer {
    /// The harness's check. libFuzzer runs inputs one at a time on the thread that called
    /// ``run(_:)``, after it was set: it is never raced.
    nonisolated(unsafe) static var check: (UnsafeBufferPointer<UInt8>) -> Void = { _ in }

    /// Runs libFuzzer, which calls `check` with each input, and exits with its status.
    package static func run(_ check: @escaping (UnsafeBufferPointer<UInt8>) -> Void) -> Never {
        Self.check = check
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, testOneInput))
    }
}

/// libFuzzer's entry point for one input, given to its driver and also defined under its
/// standard name: `-sanitize=fuzzer` links libFuzzer's own `main` (whose object refers to it)
/// even though SwiftPM then points `main` at the harness's.
@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    Fuzzer.check(UnsafeBufferPointer(start: size == 0 ? nil : data, count: size))
    return 0
}
