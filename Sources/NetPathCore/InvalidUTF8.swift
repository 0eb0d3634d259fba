// SPDX-License-Identifier: Apache-2.0

/// Where a file stops being UTF-8: the first byte that does not start a valid sequence.
///
/// Configuration files and traces are UTF-8 text; when one is not, the reader says where, the
/// way it reports any other mistake, instead of refusing the whole file with no position.
///
/// ```swift
/// InvalidUTF8.first(in: Array("ok\nb".utf8) + [0xFF, 0x21])
/// // line 2, column 2, offset 4, byte 0xFF
/// ```
package struct InvalidUTF8: Hashable, Sendable, CustomStringConvertible {
    /// The 1-based line, counting line feeds before the byte.
    package var line: Int
    /// The 1-based column, in Unicode scalars like an editor's (and ``SourceLocation``'s).
    package var column: Int
    /// The byte's 0-based offset from the start of the bytes searched.
    package var offset: Int
    /// The byte itself.
    package var byte: UInt8

    /// Creates a position.
    package init(line: Int, column: Int, offset: Int, byte: UInt8) {
        self.line = line
        self.column = column
        self.offset = offset
        self.byte = byte
    }

    /// The first invalid byte in `bytes`, or `nil` when they are all valid UTF-8.
    ///
    /// A sequence cut off by the end of `bytes` counts as invalid at its first byte.
    package static func first(in bytes: some Collection<UInt8>) -> InvalidUTF8? {
        // The common case, valid text, takes the standard library's fast check.
        if String(validating: bytes, as: UTF8.self) != nil { return nil }
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var line = 1
        var column = 1
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                if encoded.count == 1 && encoded.first == UInt8(ascii: "\n") {
                    line += 1
                    column = 1
                } else {
                    column += 1
                }
                offset += encoded.count
            case .error:
                let byte = bytes[bytes.index(bytes.startIndex, offsetBy: offset)]
                return InvalidUTF8(line: line, column: column, offset: offset, byte: byte)
            case .emptyInput:
                return nil
            }
        }
    }

    /// What is wrong, without the position's line and column (messages put those in front):
    /// `byte 0xFF (offset 27) is not valid UTF-8; the file must be UTF-8 text`.
    package var description: String {
        let hex = String(byte, radix: 16, uppercase: true)
        return
            "byte 0x\(hex.count == 1 ? "0" + hex : hex) (offset \(offset)) is not valid UTF-8; the file must be UTF-8 text"
    }
}
