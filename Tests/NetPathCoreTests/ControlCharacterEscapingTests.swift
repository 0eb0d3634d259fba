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
}
