// SPDX-License-Identifier: Apache-2.0

/// Durations as netpath's configuration writes them: `"250ms"`, `"30s"`, `"2m"`, `"1h"`, `"1m30s"`.
extension Duration {
    /// Why a duration string was rejected.
    public struct ConfigurationSyntaxError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The text as written.
        public var text: String
        /// What is wrong with it.
        public var reason: String

        /// `invalid duration "30x": unknown unit "x" (use ms, s, m or h)`.
        public var description: String { "invalid duration \(TOMLValue.quoted(text)): \(reason)" }
    }

    private static let units: [(String, Int64)] = [("h", 3_600_000), ("m", 60_000), ("s", 1_000), ("ms", 1)]

    /// Parses a configuration duration.
    ///
    /// The text is one or more `NUMBER UNIT` parts with units from largest to smallest, each at
    /// most once: `ms`, `s`, `m`, `h`. `"0"` alone means zero. Negative values, fractions, a
    /// number without a unit and unknown units are rejected: a hook timeout written `"30"` is
    /// ambiguous, and guessing seconds would hide the mistake.
    public init(configuration text: String) throws(ConfigurationSyntaxError) {
        func fail(_ reason: String) -> ConfigurationSyntaxError {
            ConfigurationSyntaxError(text: text, reason: reason)
        }
        let chars = Array(text.unicodeScalars)
        guard !chars.isEmpty else { throw fail("it is empty; write e.g. \"30s\"") }
        if text == "0" {
            self = .zero
            return
        }
        if chars[0] == "-" { throw fail("durations cannot be negative") }
        var total: Int64 = 0
        var lastUnitIndex = -1
        var i = 0
        while i < chars.count {
            var value: Int64 = 0
            let start = i
            while i < chars.count, ("0"..."9").contains(chars[i]) {
                let digit = Int64(chars[i].value - 48)
                let (times, o1) = value.multipliedReportingOverflow(by: 10)
                let (sum, o2) = times.addingReportingOverflow(digit)
                guard !o1 && !o2 else { throw fail("it is too long") }
                value = sum
                i += 1
            }
            guard i > start else {
                throw fail("expected a number at \(TOMLValue.quoted(String(String.UnicodeScalarView(chars[i...]))))")
            }
            if i < chars.count, chars[i] == "." {
                throw fail("fractions are not supported; use a smaller unit such as \"1500ms\"")
            }
            let unitStart = i
            while i < chars.count, chars[i].properties.isAlphabetic { i += 1 }
            let unit = String(String.UnicodeScalarView(chars[unitStart..<i]))
            guard !unit.isEmpty else {
                throw fail("a number needs a unit (ms, s, m or h), e.g. \"\(value)s\"")
            }
            guard let index = Self.units.firstIndex(where: { $0.0 == unit }) else {
                throw fail("unknown unit \(TOMLValue.quoted(unit)) (use ms, s, m or h)")
            }
            guard index > lastUnitIndex else { throw fail("units must go from largest to smallest, each at most once") }
            lastUnitIndex = index
            let (part, o1) = value.multipliedReportingOverflow(by: Self.units[index].1)
            let (sum, o2) = total.addingReportingOverflow(part)
            guard !o1 && !o2 else { throw fail("it is too long") }
            total = sum
        }
        self = .milliseconds(total)
    }

    /// The duration in configuration syntax, largest units first: `"1m30s"`, `"250ms"`, `"0s"`.
    ///
    /// Sub-millisecond parts are dropped; configuration durations never have them.
    public var configurationText: String {
        let (seconds, attoseconds) = components
        var ms = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        guard ms > 0 else { return "0s" }
        var out = ""
        for (unit, size) in Self.units where ms >= size {
            out += "\(ms / size)\(unit)"
            ms %= size
        }
        return out
    }
}
