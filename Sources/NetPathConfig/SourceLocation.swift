// SPDX-License-Identifier: Apache-2.0

/// A position in a source file: 1-based line and column.
///
/// Columns count Unicode scalars, not bytes, so they match what an editor shows for
/// non-ASCII text.
public struct SourceLocation: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The line, starting at 1.
    public var line: Int
    /// The column, starting at 1.
    public var column: Int

    /// Creates a location from a 1-based line and column.
    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    /// `LINE:COL`.
    public var description: String { "\(line):\(column)" }

    /// File order: by line, then column.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.line, lhs.column) < (rhs.line, rhs.column)
    }
}
