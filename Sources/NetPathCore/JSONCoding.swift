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

    /// Encodes `value` as one line of UTF-8 JSON without the newline.
    ///
    /// The bytes ``lineEncoder()`` writes, produced by a leaner encoder (``JSONLineEncoder``):
    /// this runs for every event on its way to hooks and monitors.
    package static func line(_ value: some Encodable) throws -> String {
        String(decoding: try JSONLineEncoder().encode(value), as: UTF8.self)
    }

    /// ``line(_:)`` as UTF-8 bytes.
    package static func lineBytes(_ value: some Encodable) throws -> [UInt8] {
        try JSONLineEncoder().encode(value)
    }
}
