// SPDX-License-Identifier: Apache-2.0

/// The lines of an input, to check that an error's line and column point inside it.
///
/// Lines end at `\n` and are numbered from 1; columns count Unicode scalars from 1 (a UTF-8
/// continuation byte adds none), as netpath's diagnostics do. A column may be one past the
/// line's last scalar: that is where "found end of line" or "end of file" points.
package struct TextPositions {
    /// Each line's length in scalars, without its `\n`.
    package let lineLengths: [Int]

    /// The positions of `bytes`, read as UTF-8.
    package init(_ bytes: some Sequence<UInt8>) {
        var lengths: [Int] = []
        var length = 0
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                lengths.append(length)
                length = 0
            } else if byte & 0xC0 != 0x80 {
                length += 1
            }
        }
        lengths.append(length)
        lineLengths = lengths
    }

    /// Whether `line` (and `column`, when given) is a position in the input.
    package func contains(line: Int, column: Int? = nil) -> Bool {
        guard (1...lineLengths.count).contains(line) else { return false }
        guard let column else { return true }
        return (1...lineLengths[line - 1] + 1).contains(column)
    }
}
