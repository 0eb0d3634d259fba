// SPDX-License-Identifier: Apache-2.0

import FoundationEssentials
import NetPathCore
import Testing

@Suite("RFC3339")
struct RFC3339Tests {
    @Test(arguments: [
        (0.0, "1970-01-01T00:00:00.000000Z"),
        (1_795_319_100, "2026-11-22T03:45:00.000000Z"),
        (951_782_400, "2000-02-29T00:00:00.000000Z"),
        (1_709_164_800, "2024-02-29T00:00:00.000000Z"),
        (253_402_300_799, "9999-12-31T23:59:59.000000Z"),
        (-62_167_219_200, "0000-01-01T00:00:00.000000Z"),
        (-1, "1969-12-31T23:59:59.000000Z"),
        (-0.5, "1969-12-31T23:59:59.500000Z"),
        (1_700_000_000.5, "2023-11-14T22:13:20.500000Z"),
        (1_700_000_000.25, "2023-11-14T22:13:20.250000Z"),
    ])
    func formatsUTCWithSixFractionDigits(_ seconds: Double, _ expected: String) {
        #expect(RFC3339.format(Date(timeIntervalSince1970: seconds)) == expected)
        #expect(RFC3339.parse(expected) == Date(timeIntervalSince1970: seconds))
    }

    @Test("a year past 9999 is written with all its digits")
    func yearPastFourDigits() {
        #expect(RFC3339.format(Date(timeIntervalSince1970: 253_402_300_800.5)) == "10000-01-01T00:00:00.500000Z")
    }

    @Test func formatMatchesTheEventTimeShape() throws {
        let text = RFC3339.format(Date(timeIntervalSince1970: 1_795_319_100.654321))
        #expect(text.wholeMatch(of: #/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z/#) != nil)
    }

    /// Times travel as text (hook stdin, control socket, recorded traces) and are re-encoded by
    /// whoever relays them, so the text must survive a parse/format round trip to the microsecond.
    @Test(arguments: [
        "2026-11-22T03:45:00.123456Z",
        "2026-11-22T03:45:00.000001Z",
        "2026-11-22T03:45:00.999999Z",
        "2026-11-22T03:45:59.100000Z",
        "2024-02-29T23:59:59.654321Z",
        "2038-01-19T03:14:07.999999Z",
        "2001-01-01T00:00:00.000001Z",
        "1970-01-01T00:00:00.000007Z",
        "1969-12-31T23:59:59.999999Z",
        "2106-02-07T06:28:15.424242Z",
    ])
    func microsecondTextSurvivesParseAndFormat(_ text: String) throws {
        let date = try #require(RFC3339.parse(text))
        #expect(RFC3339.format(date) == text)
    }

    @Test func everyMicrosecondOfASecondSurvivesParseAndFormat() throws {
        var failures: [String] = []
        for micros in stride(from: 0, to: 1_000_000, by: 997) {
            let digits = String(micros)
            let text = "2026-11-22T03:45:00." + String(repeating: "0", count: 6 - digits.count) + digits + "Z"
            if RFC3339.parse(text).map(RFC3339.format) != text { failures.append(text) }
        }
        #expect(failures.isEmpty, "\(failures.count) texts changed, e.g. \(failures.prefix(3))")
    }

    /// Found by Fuzz/control-reply: a Date counts from 2001 in a Double, so the one parsed from a
    /// time of 1970 (a machine whose clock was not set yet) was often a hair below the microsecond
    /// written, and format rounded down: the text lost a microsecond at every relay.
    @Test("a microsecond survives parse and format wherever a Date holds microseconds", arguments: [1900, 1970, 2200])
    func everyMicrosecondOfASecondSurvivesInAnyYearADateHolds(_ year: Int) throws {
        var failures: [String] = []
        for micros in stride(from: 1, to: 1_000_000, by: 997) {
            let digits = String(micros)
            let text = "\(year)-11-22T03:45:17." + String(repeating: "0", count: 6 - digits.count) + digits + "Z"
            if RFC3339.parse(text).map(RFC3339.format) != text { failures.append(text) }
        }
        #expect(failures.isEmpty, "\(failures.count) texts changed, e.g. \(failures.prefix(3))")
    }

    @Test(arguments: [
        ("2026-11-22T05:45:00+02:00", "2026-11-22T03:45:00.000000Z"),
        ("2026-11-21T22:15:00-05:30", "2026-11-22T03:45:00.000000Z"),
        ("2026-11-22t03:45:00z", "2026-11-22T03:45:00.000000Z"),
        ("2026-11-22 03:45:00Z", "2026-11-22T03:45:00.000000Z"),
        ("2026-11-22T03:45:00.5Z", "2026-11-22T03:45:00.500000Z"),
        ("2026-11-22T03:45:00.1234567Z", "2026-11-22T03:45:00.123456Z"),
        ("2026-11-22T03:45:00.123456+00:00", "2026-11-22T03:45:00.123456Z"),
    ])
    func parsesOffsetsAndFractionsToUTC(_ text: String, _ utc: String) throws {
        let date = try #require(RFC3339.parse(text))
        #expect(RFC3339.format(date) == utc)
    }

    @Test(arguments: [
        "", "2026-11-22", "2026-11-22T03:45:00", "2026-11-22T03:45Z", "2026-11-22T03:45:00.Z",
        "2026-13-01T00:00:00Z", "2026-00-01T00:00:00Z", "2026-11-32T00:00:00Z", "2026-11-22T24:00:00Z",
        "2026-11-22T03:60:00Z", "2026-11-22T03:45:00+0200", "2026-11-22T03:45:00+02", "2026-11-22T03:45:00ZZ",
        "2026/11/22T03:45:00Z", "2026-11-22T03:45:00.123456", "20a6-11-22T03:45:00Z", "2026-11-22T03:45:00 Z",
    ])
    func malformedTimeIsRejected(_ text: String) {
        #expect(RFC3339.parse(text) == nil)
    }
}
