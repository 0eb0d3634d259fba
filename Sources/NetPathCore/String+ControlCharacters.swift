// SPDX-License-Identifier: Apache-2.0

extension StringProtocol {
    /// The text with every control character (Unicode category Cc: U+0000–U+001F, U+007F,
    /// U+0080–U+009F) written as an escape: `\n`, `\r`, `\t`, or `\uXXXX` for the others.
    ///
    /// Error messages quote the values they reject, and those values come from files anyone
    /// could have written: a raw newline would split one error into two lines that look like
    /// separate errors, and an escape sequence would reach the terminal. Tables and logs that
    /// show names from outside (hook files, interfaces) use it too. Everything else, quotes and
    /// backslashes included, is kept as it is: this is for reading, not a reversible encoding
    /// (interface names have one: ``InterfaceName``).
    package var escapingControlCharacters: String {
        guard unicodeScalars.contains(where: \.isControlCharacter) else { return String(self) }
        var out = String.UnicodeScalarView()
        for scalar in unicodeScalars {
            guard scalar.isControlCharacter else {
                out.append(scalar)
                continue
            }
            switch scalar {
            case "\n": out.append(contentsOf: #"\n"#.unicodeScalars)
            case "\r": out.append(contentsOf: #"\r"#.unicodeScalars)
            case "\t": out.append(contentsOf: #"\t"#.unicodeScalars)
            default:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out.append(contentsOf: (#"\u"# + String(repeating: "0", count: 4 - hex.count) + hex).unicodeScalars)
            }
        }
        return String(out)
    }

    /// Whether the text holds a control character (C0, DEL or C1).
    package var containsControlCharacters: Bool { unicodeScalars.contains(where: \.isControlCharacter) }
}

extension String {
    /// Whether the text holds a control character (C0, DEL or C1): the same answer as
    /// `StringProtocol`'s, by a scan of the UTF-8 bytes. The generic one runs unspecialized from
    /// other modules, and the hook check asks before every run.
    package var containsControlCharacters: Bool {
        // Over the contiguous bytes, not the UTF-8 view's iterator, which costs several times
        // as much per byte.
        var text = self
        return text.withUTF8 { utf8 in
            var index = 0
            while index < utf8.count {
                let byte = utf8[index]
                if byte < 0x20 || byte == 0x7F { return true }
                // U+0080–U+009F are C2 80 – C2 9F.
                if byte == 0xC2, index + 1 < utf8.count, (0x80...0x9F).contains(utf8[index + 1]) { return true }
                index += 1
            }
            return false
        }
    }

    /// Whether the text holds U+FFFD, the replacement character (what invalid UTF-8 decodes to):
    /// EF BF BD in UTF-8, found whatever follows it in the same grapheme cluster.
    package var containsReplacementCharacter: Bool {
        var text = self
        return text.withUTF8 { utf8 in
            var matched = 0
            for byte in utf8 {
                switch (matched, byte) {
                case (_, 0xEF): matched = 1
                case (1, 0xBF): matched = 2
                case (2, 0xBD): return true
                default: matched = 0
                }
            }
            return false
        }
    }
}

extension Unicode.Scalar {
    /// C0, DEL and C1 controls.
    fileprivate var isControlCharacter: Bool {
        value < 0x20 || (0x7F...0x9F).contains(value)
    }
}

extension String {
    /// Whether the text's UTF-8 holds `byte`: a scan of the contiguous bytes, for the checks
    /// made before every hook's run (a `/` in a name), where the UTF-8 view's `contains` costs
    /// several times as much per byte.
    package func containsUTF8(_ byte: UInt8) -> Bool {
        var text = self
        return text.withUTF8 { $0.contains(byte) }
    }
}
