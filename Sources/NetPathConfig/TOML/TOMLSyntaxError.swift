// SPDX-License-Identifier: Apache-2.0

/// Why a TOML document could not be parsed: where, and what was expected and found.
///
/// The parser stops at the first syntax error, so a document has at most one.
public struct TOMLSyntaxError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Where the problem is.
    public var location: SourceLocation
    /// What was expected and what was found, e.g. `expected "=" after key "name", found "x"`.
    public var message: String

    /// Creates an error at `location`.
    public init(_ message: String, at location: SourceLocation) {
        self.location = location
        self.message = message
    }

    /// `LINE:COL: error: MESSAGE`; ``Diagnostic`` adds the file name.
    public var description: String { "\(location): error: \(message)" }
}
