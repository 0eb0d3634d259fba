// SPDX-License-Identifier: Apache-2.0

import FoundationEssentials

/// Appends JSON to a byte buffer exactly as `JSONCoding.lineEncoder()` writes it: Foundation's
/// `JSONEncoder` with `.sortedKeys` and `.withoutEscapingSlashes`, compact.
///
/// It is the output half of that encoder without the `Codable` half: the caller writes the
/// keys, already in Foundation's order (the keys' UTF-8 bytes compared lexicographically, which
/// is how swift-foundation sorts on Linux), and the values. ``EventJSON`` writes events with it;
/// the byte-for-byte equality with Foundation is what `EventJSONWriterTests` checks.
///
/// What it copies from swift-foundation's `JSONWriter` and `JSONEncoder`:
/// - strings: `"` and `\` are escaped, `/` is not; U+0008, U+000C, U+000A, U+000D and U+0009
///   become `\b`, `\f`, `\n`, `\r`, `\t`, the other bytes below 0x20 `\u00xx` (lower-case hex);
///   everything else (DEL, U+2028, U+2029, all non-ASCII) is written as its UTF-8;
/// - integers: their `description`;
/// - doubles: their `description` without a trailing `.0` (`2`, `-0`, `1e+16`, `5e-324`);
///   NaN and the infinities throw `EncodingError.invalidValue`, as the encoder's default
///   `nonConformingFloatEncodingStrategy` (`.throw`) does.
package struct JSONWriter {
    /// The JSON written so far.
    package var bytes: [UInt8]
    /// Whether the next key or array element needs a comma before it.
    private var needsComma = false

    /// A writer that appends to `bytes`.
    package init(appendingTo bytes: [UInt8] = []) {
        self.bytes = bytes
    }

    // MARK: Containers

    /// `{`.
    package mutating func beginObject() {
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }

    /// `}`.
    package mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    /// `[`.
    package mutating func beginArray() {
        bytes.append(UInt8(ascii: "["))
        needsComma = false
    }

    /// `]`.
    package mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// `"name":`, after a comma unless it is the object's first key.
    ///
    /// `name` is written as it is: it must be a key that needs no escaping (ASCII letters,
    /// digits, `_`, `-`), and the caller writes an object's keys in Foundation's sorted order.
    package mutating func key(_ name: StaticString) {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        append(name)
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    /// The comma before an array's element, unless it is the first.
    package mutating func element() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        needsComma = false
    }

    // MARK: Values

    /// `null`.
    package mutating func null() {
        append("null")
        needsComma = true
    }

    /// `true` or `false`.
    package mutating func bool(_ value: Bool) {
        append(value ? "true" : "false")
        needsComma = true
    }

    /// A string, escaped as Foundation escapes it (see the type's documentation).
    package mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        // Native strings are contiguous UTF-8: no copy. Bridged or foreign ones go byte by byte.
        let done: Void? = value.utf8.withContiguousStorageIfAvailable { appendEscaped($0) }
        if done == nil {
            appendEscaped(Array(value.utf8))
        }
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    /// A string, or `null`: what `encode(_:forKey:)` writes for a `String?`.
    package mutating func string(_ value: String?) {
        if let value { string(value) } else { null() }
    }

    /// An integer in decimal, as its `description` reads.
    package mutating func integer(_ value: some FixedWidthInteger) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = UInt64(value.magnitude)
        // UInt64.max has 20 digits.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = 20
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude != 0
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start..<20]))
        }
        needsComma = true
    }

    /// A double as Foundation writes it: its `description` without a trailing `.0`.
    ///
    /// - Throws: `EncodingError.invalidValue` for NaN and the infinities, with `codingPath` and
    ///   Foundation's message, as `JSONEncoder` throws: JSON has no such numbers.
    package mutating func double(_ value: Double, at codingPath: @autoclosure () -> [any CodingKey]) throws {
        guard value.isFinite else {
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(
                    codingPath: codingPath(),
                    debugDescription: "Unable to encode Double.\(value) directly in JSON."
                )
            )
        }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        bytes.append(contentsOf: text.utf8)
        needsComma = true
    }

    /// A double, or `null`: what `encode(_:forKey:)` writes for a `Double?`.
    package mutating func double(_ value: Double?, at codingPath: @autoclosure () -> [any CodingKey]) throws {
        if let value { try double(value, at: codingPath()) } else { null() }
    }

    // MARK: Bytes

    private mutating func append(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// `utf8` with the bytes JSON needs escaped replaced by their escapes; runs of bytes that
    /// need none are copied at once.
    private mutating func appendEscaped(_ utf8: some Collection<UInt8>) {
        var run = utf8.startIndex
        var index = run
        while index != utf8.endIndex {
            let byte = utf8[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else {
                utf8.formIndex(after: &index)
                continue
            }
            bytes.append(contentsOf: utf8[run..<index])
            bytes.append(UInt8(ascii: "\\"))
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
            case 0x08: bytes.append(UInt8(ascii: "b"))
            case 0x0c: bytes.append(UInt8(ascii: "f"))
            case 0x0a: bytes.append(UInt8(ascii: "n"))
            case 0x0d: bytes.append(UInt8(ascii: "r"))
            case 0x09: bytes.append(UInt8(ascii: "t"))
            default:
                append("u00")
                bytes.append(Self.hexDigit(byte >> 4))
                bytes.append(Self.hexDigit(byte & 0xf))
            }
            utf8.formIndex(after: &index)
            run = index
        }
        bytes.append(contentsOf: utf8[run..<index])
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") &+ value : UInt8(ascii: "a") &+ value &- 10
    }
}
