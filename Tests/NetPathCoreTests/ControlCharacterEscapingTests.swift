// SPDX-License-Identifier: Apache-2.0

import NetPathCore
import Testing

/// `escapingControlCharacters`: what error messages pass every value from a file through.
@Suite("Control character escaping")
struct ControlCharacterEscapingTests {
    @Test(
        "control characters become escapes; nothing else changes",
        arguments: [
            ("a\nb", #"a\nb"#), ("a\r\nb", #"a\r\nb"#), ("\tx", #"\tx"#), ("\u{1B}[31mred", #"\u001B[31mred"#),
            ("nul\u{0}", #"nul\u0000"#), ("del\u{7F}", #"del\u007F"#), ("c1\u{85}", #"c1\u0085"#),
            (#"quote " and \ stay"#, #"quote " and \ stay"#), ("eth0 é ✓", "eth0 é ✓"), ("", ""),
        ]
    )
    func escapes(_ text: String, _ expected: String) {
        #expect(text.escapingControlCharacters == expected)
    }

    @Test("the result never contains a control character")
    func noControlCharacterSurvives() {
        let every = String(String.UnicodeScalarView((0..<0xA0).compactMap(Unicode.Scalar.init)))
        let escaped = every.escapingControlCharacters
        #expect(!escaped.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
    }

    @Test(
        "String's byte scans answer as the scalar definitions do: a control character (C0, DEL, C1), and U+FFFD wherever it sits"
    )
    func byteScansMatchScalars() {
        // Every scalar below U+0800 and a few above, alone, between others, and combined.
        var scalars = (0..<0x800).compactMap(Unicode.Scalar.init)
        scalars += ["\u{FFFD}", "\u{FFFC}", "\u{FEFF}", "\u{EFBF}", "\u{1F600}", "\u{301}"]
        var texts: [String] = []
        for scalar in scalars {
            let alone = String(Character(scalar))
            texts += [alone, "eth" + alone + "0", alone + "\u{301}", "\u{FFFD}\u{301}" + alone, "\u{EF}" + alone]
        }
        for text in texts {
            let control = text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
            let replacement = text.unicodeScalars.contains("\u{FFFD}")
            #expect(text.containsControlCharacters == control, "\(Array(text.unicodeScalars))")
            #expect(text.containsReplacementCharacter == replacement, "\(Array(text.unicodeScalars))")
            // The generic one, through a Substring, agrees.
            #expect(text[...].containsControlCharacters == control)
        }
    }
}
