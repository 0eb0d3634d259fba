// SPDX-License-Identifier: Apache-2.0

import NetPathCore

/// One problem found in a configuration file, pointing at the place to fix.
///
/// Rendered like a compiler's: `FILE:LINE:COL: error: MESSAGE`, where the message says what was
/// found and what was expected.
public struct Diagnostic: Hashable, Sendable, CustomStringConvertible {
    /// How serious a problem is.
    ///
    /// Complete: a problem rejects the configuration or does not, so this enum will not grow.
    public enum Severity: String, Hashable, Sendable {
        /// The configuration is rejected.
        case error
        /// The configuration is accepted, but probably does not do what was meant.
        case warning
    }

    /// The file, as the caller named it.
    public var file: String
    /// The 1-based line.
    public var line: Int
    /// The 1-based column.
    public var column: Int
    /// How serious it is.
    public var severity: Severity
    /// What was found and what was expected.
    public var message: String

    /// Creates a diagnostic.
    public init(file: String, line: Int, column: Int, severity: Severity = .error, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.severity = severity
        self.message = message
    }

    /// Creates a diagnostic at `location`.
    public init(file: String, at location: SourceLocation, severity: Severity = .error, message: String) {
        self.init(file: file, line: location.line, column: location.column, severity: severity, message: message)
    }

    /// The line and column.
    public var location: SourceLocation { SourceLocation(line: line, column: column) }

    /// `FILE:LINE:COL: error: MESSAGE`, always one line: control characters that came from the
    /// file (in a quoted value, or the file's name) are escaped.
    public var description: String {
        "\(file):\(line):\(column): \(severity.rawValue): \(message)".escapingControlCharacters
    }
}
