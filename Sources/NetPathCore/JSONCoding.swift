import FoundationEssentials

/// The one JSON encoding netpath uses everywhere: sorted keys (stable output that diffs and
/// golden files can rely on), no escaped slashes.
package enum JSONCoding {
    /// A compact encoder: one object per line for streams.
    package static func lineEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// A pretty encoder for human-facing `--json` output.
    package static func prettyEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
        return encoder
    }

    /// One line encoder for every event on its way to hooks and monitors: configuring an
    /// encoder costs more than the encoding of a small event.
    private static let shared = lineEncoder()

    /// Encodes `value` as one line of UTF-8 JSON without the newline.
    ///
    /// Foundation's encoder: a hand-written one was 10 % faster (about 3 µs of an event's ~30;
    /// BENCHMARKS.md, 2026-11-24), which no measured target needs.
    package static func line(_ value: some Encodable) throws -> String {
        String(decoding: try shared.encode(value), as: UTF8.self)
    }

    /// ``line(_:)`` as UTF-8 bytes.
    package static func lineBytes(_ value: some Encodable) throws -> [UInt8] {
        Array(try shared.encode(value))
    }
}
