import Foundation
import NetPathCore
import Testing

/// `JSONCoding.line` / `lineBytes` use netpath's own encoder; these tests hold it to the bytes
/// Foundation's `JSONEncoder` (`JSONCoding.lineEncoder()`) writes for the same value.
@Suite("JSON line encoder")
struct JSONLineEncoderTests {
    private func foundation(_ value: some Encodable) throws -> [UInt8] {
        Array(try JSONCoding.lineEncoder().encode(value))
    }

    private func expectSameBytes(_ value: some Encodable, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let ours = try JSONCoding.lineBytes(value)
        let theirs = try foundation(value)
        #expect(
            String(decoding: ours, as: UTF8.self) == String(decoding: theirs, as: UTF8.self),
            sourceLocation: sourceLocation
        )
        #expect(try JSONCoding.line(value) == String(decoding: theirs, as: UTF8.self), sourceLocation: sourceLocation)
    }

    @Test(arguments: EventJSONTests.events)
    func everyEventKindEncodesAsFoundationDoes(_ event: Event) throws {
        try expectSameBytes(event)
    }

    @Test func aWholeStateAndATraceRecordEncodeAsFoundationDoes() throws {
        var wlan0 = Sample.wlan0()
        wlan0.classifiedBy = ["sysfs wireless/", "DEVTYPE=wlan"]
        let state = SystemState(interfaces: [Sample.loopback, Sample.eth0(), wlan0, Sample.wwan0()])
        try expectSameBytes(state)
        try expectSameBytes(Trace.Record(time: Sample.time, state: state))
    }

    /// Every character class the writer treats differently: quotes, backslash, the named
    /// control escapes, other control characters (lower-case hex), slash (not escaped),
    /// non-ASCII (raw UTF-8), and DEL (not a control character to JSON).
    @Test(arguments: [
        "", "plain", "quote \" and backslash \\", "\u{8}\u{c}\n\r\t", "\u{0}\u{1}\u{1f}\u{b}", "a/b//c",
        "naïve 日本 🛰", "\u{7f}", "tab\tin the middle\u{1e}",
    ])
    func stringsAreEscapedAsFoundationEscapesThem(_ text: String) throws {
        try expectSameBytes(["key": text])
        try expectSameBytes([text])
    }

    /// Keys sorted by UTF-8 bytes, not numerically or case-insensitively: `eth10` < `eth9`,
    /// `Z` < `_` < `a`.
    @Test func keysAreSortedByTheirBytes() throws {
        let value = ["eth9": 1, "eth10": 2, "a": 3, "_a": 4, "Z": 5, "é": 6, "ab": 7, "a_b": 8]
        try expectSameBytes(value)
        #expect(try JSONCoding.line(value) == #"{"Z":5,"_a":4,"a":3,"a_b":8,"ab":7,"eth10":2,"eth9":1,"é":6}"#)
    }

    private struct Numbers: Encodable {
        var int = Int.min
        var int8 = Int8.max
        var uint64 = UInt64.max
        var double = 2.0
        var fraction = 0.1
        var tiny = 1e-300
        var huge = 1.5e300
        var negativeZero = -0.0
        var float: Float = 3.25
        var flag = true
        var nothing: Int? = nil
        var present: Int? = 7
        var explicitNull: Int?

        enum CodingKeys: String, CodingKey {
            case int, int8, uint64, double, fraction, tiny, huge, negativeZero, float, flag, nothing, present,
                explicitNull
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(int, forKey: .int)
            try c.encode(int8, forKey: .int8)
            try c.encode(uint64, forKey: .uint64)
            try c.encode(double, forKey: .double)
            try c.encode(fraction, forKey: .fraction)
            try c.encode(tiny, forKey: .tiny)
            try c.encode(huge, forKey: .huge)
            try c.encode(negativeZero, forKey: .negativeZero)
            try c.encode(float, forKey: .float)
            try c.encode(flag, forKey: .flag)
            try c.encodeIfPresent(nothing, forKey: .nothing)
            try c.encodeIfPresent(present, forKey: .present)
            try c.encodeNil(forKey: .explicitNull)
        }
    }

    @Test func numbersBooleansAndNullsEncodeAsFoundationDoes() throws {
        try expectSameBytes(Numbers())
        try expectSameBytes([1.0, 2.5, -3.0])
        try expectSameBytes([Int?.none, 1])
    }

    @Test func nonFiniteNumbersAreRejectedLikeFoundationRejectsThem() throws {
        for value in [Double.nan, .infinity, -.infinity] {
            #expect(throws: EncodingError.self) { try JSONCoding.lineBytes(["x": value]) }
            #expect(throws: EncodingError.self) { try foundation(["x": value]) }
        }
    }

    private struct Nested: Encodable {
        enum Outer: String, CodingKey { case inner, list, base, again }
        enum Inner: String, CodingKey { case x, y }

        func encode(to encoder: any Encoder) throws {
            var outer = encoder.container(keyedBy: Outer.self)
            var inner = outer.nestedContainer(keyedBy: Inner.self, forKey: .inner)
            try inner.encode(1, forKey: .y)
            try inner.encode("one", forKey: .x)
            var list = outer.nestedUnkeyedContainer(forKey: .list)
            try list.encode(true)
            var element = list.nestedContainer(keyedBy: Inner.self)
            try element.encode(2, forKey: .x)
            var deeper = list.nestedUnkeyedContainer()
            try deeper.encodeNil()
            _ = list.superEncoder()
            let base = outer.superEncoder(forKey: .base)
            var single = base.singleValueContainer()
            try single.encode("super")
            // A key written twice keeps its last value.
            try outer.encode(1, forKey: .again)
            try outer.encode(2, forKey: .again)
        }
    }

    @Test func nestedContainersAndSuperEncodersEncodeAsFoundationDoes() throws {
        try expectSameBytes(Nested())
        try expectSameBytes([[String: [Int]]]())
        try expectSameBytes(["empty": [String: Int](), "list": [:]])
    }

    @Test func foundationSpecialTypesKeepTheirJSONForm() throws {
        try expectSameBytes(["data": Data([0, 1, 2, 250, 251, 252])])
        try expectSameBytes(["url": URL(string: "https://example.invalid/a?b=c")!])
        try expectSameBytes(["date": Date(timeIntervalSinceReferenceDate: 12.5)])
        try expectSameBytes([Decimal(string: "12.340")!])
        try expectSameBytes([1: "int keys", 2: "two"])
    }
}
