// SPDX-License-Identifier: Apache-2.0

/// How a kernel interface name, which is bytes, becomes a Swift `String` and back.
///
/// Linux allows any bytes in an interface name but `/`, `:`, NUL and white space, so a name need
/// not be UTF-8 (`ip link add $'eth\xff' …`) and may hold control characters. netpath keeps names
/// as strings everywhere (the model, config globs, JSON, `status`), written so that no byte is lost:
///
/// - a name that is valid UTF-8 with no backslash and no control character is itself (every
///   name in practice);
/// - otherwise a backslash is written `\\`, and each byte that is a control character or not
///   part of valid UTF-8 is written `\xNN` (two lower-case hex digits).
///
/// So the JSON of `status`, events and hook stdin shows `"a\\xffb"` for the kernel's bytes
/// `61 ff 62`, and ``kernelBytes(_:)`` turns that back into the bytes exactly: hooks get the
/// kernel's bytes in argv and in `NETPATH_INTERFACE`. In Python,
/// `codecs.escape_decode(name.encode())[0]` gives the bytes of such a string back.
package enum InterfaceName {
    /// The string form of the kernel's name `bytes` (up to the first NUL).
    package static func string(fromKernel bytes: some Collection<UInt8>) -> String {
        Array(bytes).withUnsafeBytes { string(fromKernel: $0) }
    }

    /// The string form of the kernel's name in `raw` (up to the first NUL): the engine's case,
    /// a name in a netlink message. Not generic, so that the common name — printable ASCII
    /// without a backslash — costs one scan and one copy wherever it is called from.
    package static func string(fromKernel raw: UnsafeRawBufferPointer) -> String {
        let bytes = UnsafeRawBufferPointer(rebasing: raw[..<(raw.firstIndex(of: 0) ?? raw.count)])
        if bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7f && $0 != UInt8(ascii: "\\") }) {
            return String(decoding: bytes, as: UTF8.self)
        }
        return escaped(bytes)
    }

    /// Names with a backslash, a control character or bytes that are not UTF-8.
    private static func escaped(_ bytes: UnsafeRawBufferPointer) -> String {
        if let plain = String(validating: bytes, as: UTF8.self), !needsEscaping(plain) { return plain }
        var result = ""
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let length = validSequenceLength(bytes, at: index)
            let end = bytes.index(index, offsetBy: max(length, 1))
            if length > 0, let scalar = String(validating: bytes[index..<end], as: UTF8.self)?.unicodeScalars.first,
                scalar != "\\", scalar.properties.generalCategory != .control
            {
                result.unicodeScalars.append(scalar)
            } else if length == 1, bytes[index] == UInt8(ascii: "\\") {
                result += "\\\\"
            } else {
                for byte in bytes[index..<end] { result += hex(byte) }
            }
            index = end
        }
        return result
    }

    /// Whether `name`'s UTF-8 is the kernel's bytes as they are: it holds no escape (no
    /// backslash), as nearly every name does; ``kernelBytes(_:)`` is then its UTF-8.
    package static func isVerbatim(_ name: String) -> Bool {
        !name.containsUTF8(UInt8(ascii: "\\"))
    }

    /// The kernel's bytes for a name in string form: the inverse of ``string(fromKernel:)``.
    ///
    /// A string that holds no escape is its UTF-8. A backslash that starts neither `\\` nor
    /// `\xNN` (a name typed by hand, say) stands for itself.
    package static func kernelBytes(_ name: String) -> [UInt8] {
        let utf8 = Array(name.utf8)
        guard utf8.contains(UInt8(ascii: "\\")) else { return utf8 }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var i = 0
        while i < utf8.count {
            if utf8[i] == UInt8(ascii: "\\"), i + 1 < utf8.count {
                if utf8[i + 1] == UInt8(ascii: "\\") {
                    bytes.append(UInt8(ascii: "\\"))
                    i += 2
                    continue
                }
                if utf8[i + 1] == UInt8(ascii: "x"), i + 3 < utf8.count,
                    let high = hexValue(utf8[i + 2]), let low = hexValue(utf8[i + 3])
                {
                    bytes.append(high << 4 | low)
                    i += 4
                    continue
                }
            }
            bytes.append(utf8[i])
            i += 1
        }
        return bytes
    }

    private static func needsEscaping(_ name: String) -> Bool {
        name.unicodeScalars.contains { $0 == "\\" || $0.properties.generalCategory == .control }
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return "\\x" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 0xf)])
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// The length of the well-formed UTF-8 sequence at `index` (1…4), or 0 when the byte there
    /// does not start one: a stray continuation byte, an overlong form, a surrogate, a truncation.
    private static func validSequenceLength<C: Collection<UInt8>>(_ bytes: C, at index: C.Index) -> Int {
        let lead = bytes[index]
        let length: Int
        switch lead {
        case 0x00...0x7f: return 1
        case 0xc2...0xdf: length = 2
        case 0xe0...0xef: length = 3
        case 0xf0...0xf4: length = 4
        default: return 0
        }
        guard bytes.distance(from: index, to: bytes.endIndex) >= length else { return 0 }
        let sequence = bytes[index..<bytes.index(index, offsetBy: length)]
        return String(validating: sequence, as: UTF8.self) == nil ? 0 : length
    }
}
