// SPDX-License-Identifier: Apache-2.0

import FuzzSupport
import NetPathConfig

/// Fuzzes ``ConfigurationLoader``, the TOML parser and the validator behind `netpathctl
/// check-config` and every (re)load: any bytes give a configuration or a list of errors.
///
/// - Every diagnostic, error or warning, points at a line and column inside the file.
/// - Every diagnostic is one line (`FILE:LINE:COL: error: …`, as its documentation says).
/// - A failure has at least one error.
/// - Loading is a function of the bytes: a second load gives the same result.
@main
enum ConfigurationHarness {
    static func main() { Fuzzer.run(check) }

    static func check(_ bytes: UnsafeBufferPointer<UInt8>) {
        let result = load(bytes)
        let diagnostics: [Diagnostic]
        switch result {
        case .success(let configuration): diagnostics = configuration.warnings
        case .failure(let errors):
            invariant(!errors.errors.isEmpty, "a failure without an error")
            diagnostics = errors.errors + errors.warnings
        }
        let positions = TextPositions(bytes)
        for diagnostic in diagnostics {
            invariant(
                positions.contains(line: diagnostic.line, column: diagnostic.column),
                "diagnostic outside the file: \(diagnostic)"
            )
            invariant(!diagnostic.description.contains("\n"), "a diagnostic of more than one line: \(diagnostic)")
        }
        invariant(load(bytes) == result, "a second load of the same bytes differs")
    }
}

/// Loads as netpathd does, with its plugins known and one group that exists, so that the
/// checks that need them run too.
private func load(_ bytes: UnsafeBufferPointer<UInt8>) -> Result<Configuration, ConfigurationErrors> {
    ConfigurationLoader.load(
        bytes: bytes,
        file: "fuzz.toml",
        knownPlugins: ["route-metrics", "event-log"],
        groupExists: { $0 == "netpath" }
    )
}
