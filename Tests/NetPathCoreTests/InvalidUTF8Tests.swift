// SPDX-License-Identifier: Apache-2.0

import NetPathCore
import Testing

/// Finding the first byte that is not UTF-8, as a line and column an editor would show.
@Suite("InvalidUTF8")
struct InvalidUTF8Tests {
    @Test("valid UTF-8, ASCII or not, has no invalid byte")
    func validText() {
        #expect(InvalidUTF8.first(in: Array("".utf8)) == nil)
        #expect(InvalidUTF8.first(in: Array("name = \"é✓😀\"\nx\r\n".utf8)) == nil)
    }

    @Test("the position counts lines by line feed and columns by Unicode scalar")
    func position() {
        // "é" is two bytes but one column; the bad byte is on line 3.
        let bytes = Array("a\nb\nxé = ".utf8) + [0xFF] + Array("\n".utf8)
        #expect(InvalidUTF8.first(in: bytes) == InvalidUTF8(line: 3, column: 6, offset: 10, byte: 0xFF))
    }

    @Test(
        "a stray continuation byte, a truncated sequence and an overlong encoding are each found at their first byte",
        arguments: [
            ([0x61, 0x80, 0x62], 1, 2, 0x80),  // continuation byte with no lead
            ([0x61, 0xE2, 0x9C], 1, 2, 0xE2),  // "✓" cut after two of its three bytes
            ([0x0A, 0xC0, 0xAF], 2, 1, 0xC0),  // overlong "/"
        ] as [([UInt8], Int, Int, UInt8)]
    )
    func invalidSequences(_ bytes: [UInt8], _ line: Int, _ column: Int, _ byte: UInt8) {
        let found = InvalidUTF8.first(in: bytes)
        #expect(found?.line == line)
        #expect(found?.column == column)
        #expect(found?.byte == byte)
    }

    @Test("the description names the byte in hex and its offset")
    func description() {
        let found = InvalidUTF8(line: 2, column: 4, offset: 9, byte: 0x0F)
        #expect(found.description == "byte 0x0F (offset 9) is not valid UTF-8; the file must be UTF-8 text")
    }
}
