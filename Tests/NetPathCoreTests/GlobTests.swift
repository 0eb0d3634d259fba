// SPDX-License-Identifier: Apache-2.0

import FoundationEssentials
import NetPathCore
import Testing

@Suite("Glob")
struct GlobTests {
    /// (pattern, name, matches): each row behaves as `fnmatch(pattern, name, 0)` does.
    static let cases: [(String, String, Bool)] = [
        // Literals match whole names only, case-sensitively.
        ("eth0", "eth0", true),
        ("eth0", "eth01", false),
        ("eth0", "eth", false),
        ("ETH0", "eth0", false),
        ("", "", true),
        ("", "eth0", false),
        // Star: any run, including none.
        ("*", "", true),
        ("*", "wlp0s20f3", true),
        ("eth*", "eth", true),
        ("eth*", "eth0", true),
        ("eth*", "veth0", false),
        ("*0", "eth0", true),
        ("*0", "eth01", false),
        ("e*h*0", "eth0", true),
        ("*.100", "eth0.100", true),
        ("*.100", "eth0.1000", false),
        ("a**b", "ab", true),
        ("*a*b", "xaxxbxb", true),
        ("*ab", "aab", true),
        ("*a*a*a*a*b", String(repeating: "a", count: 40), false),
        // Question mark: exactly one character.
        ("wl?", "wlx", true),
        ("wl?", "wl", false),
        ("wl?", "wlxy", false),
        ("?", "", false),
        ("??*", "ab", true),
        // Sets, ranges and negation.
        ("[ew]*", "wlan0", true),
        ("[ew]*", "veth0", false),
        ("eth[0-3]", "eth2", true),
        ("eth[0-3]", "eth4", false),
        ("eth[0-3]", "eth", false),
        ("[!e]*", "eth0", false),
        ("[!e]*", "wlan0", true),
        ("[^e]*", "wlan0", true),
        ("[a-cx-z]", "y", true),
        ("[a-cx-z]", "d", false),
        ("[]]", "]", true),
        ("[]a]", "a", true),
        ("[!]]", "]", false),
        ("[!]]", "a", true),
        ("[a-]", "-", true),
        ("[-a]", "-", true),
        ("[*]", "*", true),
        ("[*]", "x", false),
        ("[?]", "?", true),
        // Backslash takes the next character literally.
        ("\\*", "*", true),
        ("\\*", "a", false),
        ("eth\\?", "eth?", true),
        ("eth\\?", "eth0", false),
        ("\\[x]", "[x]", true),
        // Names with the characters udev and users put in them.
        ("veth*", "veth-a1b2", true),
        ("br-*", "br-5f3e2c", true),
        ("wg_*", "wg_office", true),
        ("enp0s20f0u*", "enp0s20f0u1c4i2", true),
    ]

    @Test(arguments: cases)
    func patternMatchesLikeFnmatch(_ pattern: String, _ name: String, _ expected: Bool) throws {
        #expect(try Glob(pattern).matches(name) == expected)
    }

    @Test(arguments: ["[abc", "[", "[!", "[]", "eth[0-", "eth\\", "\\", "[z-a]"])
    func malformedPatternIsRejectedWithItsText(_ pattern: String) {
        #expect {
            _ = try Glob(pattern)
        } throws: { error in
            guard let error = error as? Glob.SyntaxError else { return false }
            return error.pattern == pattern && error.description.contains(pattern) && !error.message.isEmpty
        }
    }

    @Test func describesItselfAsThePatternWritten() throws {
        #expect(try Glob("wwan[0-9]*").description == "wwan[0-9]*")
    }

    @Test func codesAsItsPatternText() throws {
        let data = try JSONEncoder().encode([try Glob("wl*")])
        #expect(String(decoding: data, as: UTF8.self) == #"["wl*"]"#)
        let decoded = try JSONDecoder().decode([Glob].self, from: data)
        #expect(decoded.first?.matches("wlan0") == true)
    }

    @Test func decodingAMalformedPatternFailsAsDataCorruption() {
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([Glob].self, from: Data(#"["[eth"]"#.utf8)) }
    }

    @Test func equalPatternsAreEqualGlobs() throws {
        #expect(try Glob("eth*") == Glob("eth*"))
        #expect(try Glob("eth*") != Glob("eth?"))
    }
}
