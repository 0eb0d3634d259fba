// SPDX-License-Identifier: Apache-2.0

/// Everything wrong with a configuration file, found in one pass.
///
/// Validation does not stop at the first problem: an administrator fixing a file sees every
/// error at once. A syntax error is the exception: the parser cannot go on after it, so it is
/// reported alone.
public struct ConfigurationErrors: Error, Hashable, Sendable, CustomStringConvertible {
    /// The errors, in file order; never empty.
    public var errors: [Diagnostic]
    /// Warnings found alongside the errors.
    public var warnings: [Diagnostic]

    /// Creates the error from diagnostics; `errors` must not be empty.
    public init(errors: [Diagnostic], warnings: [Diagnostic] = []) {
        self.errors = errors
        self.warnings = warnings
    }

    /// One `FILE:LINE:COL: error: MESSAGE` line per problem, errors and warnings in file order.
    public var description: String {
        (errors + warnings).sorted { ($0.line, $0.column) < ($1.line, $1.column) }
            .map(\.description).joined(separator: "\n")
    }
}
