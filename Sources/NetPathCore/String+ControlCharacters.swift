extension String {
    /// The string with every control character written as an escape, so that a value from
    /// outside (a file name, an interface name, a bad config value) stays on one line of a log,
    /// a table or an error message and cannot forge another.
    ///
    /// `\n`, `\r` and `\t` keep their usual escapes, and every other C0 or C1 control character
    /// and DEL becomes `\u{XX}`. Everything else is unchanged, backslashes too: this is for
    /// reading, not a reversible encoding (interface names have one: ``InterfaceName``).
    package var escapingControlCharacters: String {
        guard containsControlCharacters else { return self }
        var escaped = ""
        escaped.reserveCapacity(utf8.count + 8)
        for scalar in unicodeScalars {
            switch scalar {
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            case _ where scalar.properties.generalCategory == .control:
                escaped += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// Whether the string holds a control character (C0, DEL or C1).
    package var containsControlCharacters: Bool {
        unicodeScalars.contains { $0.properties.generalCategory == .control }
    }
}
