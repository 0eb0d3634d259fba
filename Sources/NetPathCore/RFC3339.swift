// SPDX-License-Identifier: Apache-2.0

import FoundationEssentials

/// RFC 3339 timestamps in UTC with microseconds (`2026-11-22T03:45:00.123456Z`).
///
/// Done by hand because the core avoids the locale and calendar machinery of full Foundation.
package enum RFC3339 {
    /// Formats `date` in UTC with six fractional digits.
    package static func format(_ date: Date) -> String {
        // To the nearest microsecond, not down: a Date counts from 2001 in a Double, so the one
        // parse(_:) makes of a time of 1970 (or after 2200) can be a hair below the microsecond it
        // was written with, and rounding down wrote the microsecond before: every relay of an event
        // or a trace lost one (found by Fuzz/control-reply; RFC3339Tests has the cases).
        let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
        let seconds = micros >= 0 ? micros / 1_000_000 : (micros - 999_999) / 1_000_000
        let fraction = micros - seconds * 1_000_000
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (y, m, d) = civil(fromDays: days)
        guard (0...9999).contains(y) else { return format(y, m, d, secondOfDay, fraction) }
        // Every event's time goes through here (its JSON, monitor's line): written digit by digit
        // into the string's own storage, it is one allocation, where padding each field as a
        // string of its own was a dozen, on every change's way to monitor --json's line.
        return String(unsafeUninitializedCapacity: 27) { text in
            func put(_ value: Int64, _ width: Int, at offset: Int) {
                var rest = value
                for index in (offset..<offset + width).reversed() {
                    text[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
            }
            put(y, 4, at: 0)
            text[4] = UInt8(ascii: "-")
            put(m, 2, at: 5)
            text[7] = UInt8(ascii: "-")
            put(d, 2, at: 8)
            text[10] = UInt8(ascii: "T")
            put(secondOfDay / 3600, 2, at: 11)
            text[13] = UInt8(ascii: ":")
            put(secondOfDay / 60 % 60, 2, at: 14)
            text[16] = UInt8(ascii: ":")
            put(secondOfDay % 60, 2, at: 17)
            text[19] = UInt8(ascii: ".")
            put(fraction, 6, at: 20)
            text[26] = UInt8(ascii: "Z")
            return 27
        }
    }

    /// The general form, for a year outside 0...9999 (as many digits as the year has).
    private static func format(_ y: Int64, _ m: Int64, _ d: Int64, _ secondOfDay: Int64, _ fraction: Int64) -> String {
        func pad(_ v: Int64, _ width: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2))"
            + ":\(pad(secondOfDay % 60, 2)).\(pad(fraction, 6))Z"
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`.
    package static func parse(_ text: String) -> Date? {
        let chars = Array(text.utf8)
        func number(_ from: Int, _ count: Int) -> Int64? {
            guard from + count <= chars.count else { return nil }
            var v: Int64 = 0
            for c in chars[from..<from + count] {
                guard c >= 48 && c <= 57 else { return nil }
                v = v * 10 + Int64(c - 48)
            }
            return v
        }
        guard chars.count >= 20, chars[4] == UInt8(ascii: "-"), chars[7] == UInt8(ascii: "-"),
            chars[10] == UInt8(ascii: "T") || chars[10] == UInt8(ascii: "t") || chars[10] == UInt8(ascii: " "),
            chars[13] == UInt8(ascii: ":"), chars[16] == UInt8(ascii: ":"),
            let y = number(0, 4), let mo = number(5, 2), let d = number(8, 2),
            let h = number(11, 2), let mi = number(14, 2), let s = number(17, 2),
            (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, s < 61
        else { return nil }
        var i = 19
        // Microseconds, as an integer: digits past the sixth are dropped, not rounded.
        var micros: Int64 = 0
        if i < chars.count, chars[i] == UInt8(ascii: ".") {
            i += 1
            let start = i
            while i < chars.count, chars[i] >= 48, chars[i] <= 57 {
                if i - start < 6 { micros = micros * 10 + Int64(chars[i] - 48) }
                i += 1
            }
            if i == start { return nil }
            for _ in min(i - start, 6)..<6 { micros *= 10 }
        }
        guard i < chars.count else { return nil }
        var offset: Int64 = 0
        if chars[i] == UInt8(ascii: "Z") || chars[i] == UInt8(ascii: "z") {
            i += 1
        } else if chars[i] == UInt8(ascii: "+") || chars[i] == UInt8(ascii: "-") {
            guard let oh = number(i + 1, 2), chars.count > i + 3, chars[i + 3] == UInt8(ascii: ":"),
                let om = number(i + 4, 2)
            else { return nil }
            offset = (oh * 3600 + om * 60) * (chars[i] == UInt8(ascii: "+") ? 1 : -1)
            i += 6
        } else {
            return nil
        }
        guard i == chars.count else { return nil }
        let days = days(fromCivil: y, mo, d)
        let seconds = days * 86_400 + h * 3600 + mi * 60 + s - offset
        return Date(timeIntervalSince1970: Double(seconds) + Double(micros) / 1_000_000)
    }

    // Howard Hinnant's days_from_civil / civil_from_days.
    static func days(fromCivil y0: Int64, _ m: Int64, _ d: Int64) -> Int64 {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? y + 1 : y, m, d)
    }
}

extension KeyedDecodingContainer {
    /// The RFC 3339 time at `key`, as events and trace records write it.
    ///
    /// - Throws: `DecodingError.dataCorrupted` naming the text when it is not an RFC 3339 time.
    package func decodeRFC3339(forKey key: Key) throws -> Date {
        let text = try decode(String.self, forKey: key)
        guard let time = RFC3339.parse(text) else {
            throw DecodingError.dataCorruptedError(
                forKey: key,
                in: self,
                debugDescription: "not an RFC 3339 time: \"\(text.escapingControlCharacters)\""
            )
        }
        return time
    }
}
