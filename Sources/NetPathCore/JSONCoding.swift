// SPDX-License-Identifier: Apache-2.0

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

    /// One line encoder for everything but events (replies, requests, trace records):
    /// configuring an encoder costs more than the encoding of a small value.
    private static let shared = lineEncoder()

    /// Encodes `value` as one line of UTF-8 JSON without the newline, with Foundation's encoder.
    ///
    /// An ``Event`` takes the overload below instead.
    package static func line(_ value: some Encodable) throws -> String {
        String(decoding: try shared.encode(value), as: UTF8.self)
    }

    /// ``line(_:)`` as UTF-8 bytes.
    package static func lineBytes(_ value: some Encodable) throws -> [UInt8] {
        Array(try shared.encode(value))
    }

    /// An event's line, written by ``EventJSON``: the same bytes as Foundation's encoder writes.
    ///
    /// Every event is encoded once per hook stdin, control-socket monitor and `monitor --json`
    /// line, and on the latency path of the last. A hand-written *Codable* encoder was hardly
    /// faster than Foundation's, because the cost is the Codable machinery itself; ``EventJSON``
    /// writes the bytes with none of it, several times faster
    /// (BENCHMARKS.md, "The events' JSON").
    package static func line(_ event: Event) throws -> String {
        String(decoding: try EventJSON.lineBytes(event), as: UTF8.self)
    }

    /// An event's line as UTF-8 bytes, written by ``EventJSON``.
    package static func lineBytes(_ event: Event) throws -> [UInt8] {
        try EventJSON.lineBytes(event)
    }
}
