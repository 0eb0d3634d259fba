import FoundationEssentials

/// Encodes a value as one line of compact JSON, byte for byte what `JSONEncoder` with
/// `[.sortedKeys, .withoutEscapingSlashes]` writes on Linux, several times faster.
///
/// Why not `JSONEncoder`: every event a hook or a `monitor` sees is encoded on the way from the
/// kernel to them, and Foundation's encoder spends most of its time on dynamic casts of every
/// value (is it a `Date`? `Data`? `URL`? a `String`-keyed dictionary?), which look up protocol
/// conformances at run time. Here the few types that need special treatment are recognised by
/// comparing metadata (`T.self == Data.self`), and everything else goes straight through its
/// `Encodable` conformance.
///
/// The output rules are Foundation's: object keys sorted by their UTF-8 bytes; strings escape
/// `"` and `\`, `\b \f \n \r \t`, other control characters as `\u00XX` (lowercase hex), and
/// nothing else (`/` and non-ASCII are written as they are); integers in decimal; floating-point
/// numbers by their `description`, without a trailing `.0`, and NaN or infinity is an error;
/// `Date` by its own `Encodable` conformance (seconds since 2001, as `.deferredToDate`), `Data`
/// as Base64, `URL` as its absolute string, `Decimal` by its description. A key written twice
/// keeps its last value.
struct JSONLineEncoder {
    /// Encodes `value`.
    ///
    /// - Throws: `EncodingError.invalidValue` for a non-finite floating-point number or a value
    ///   that encodes nothing.
    func encode(_ value: some Encodable) throws -> [UInt8] {
        let node = try JSONNode.encoding(value, parent: nil, key: nil)
        var output: [UInt8] = []
        output.reserveCapacity(1024)
        node.write(to: &output)
        return output
    }
}

/// A JSON value under construction. Objects and arrays are boxes, because an `Encoder` hands
/// out containers that keep writing into them after they were created.
enum JSONNode {
    /// Numbers, `true`, `false`, `null`: written as they are.
    case literal(String)
    case string(String)
    case object(ObjectBox)
    case array(ArrayBox)
    /// Whatever a super encoder ends up holding (it is filled after it is handed out); an
    /// empty object if nothing, as Foundation writes.
    case deferred(NodeEncoder)

    final class ObjectBox {
        /// A key written twice keeps its last value.
        var members: [String: JSONNode] = [:]

        func set(_ key: String, _ node: JSONNode) { members[key] = node }
    }

    final class ArrayBox {
        var elements: [JSONNode] = []
    }

    /// The node `value` encodes to, as the member `key` of the value `parent` encodes.
    static func encoding<T: Encodable>(_ value: T, parent: NodeEncoder?, key: (any CodingKey)?) throws -> JSONNode {
        // Foundation's special cases, recognised without a dynamic cast.
        if T.self == String.self { return .string(value as! String) }
        if T.self == Data.self { return .string((value as! Data).base64EncodedString()) }
        if T.self == URL.self { return .string((value as! URL).absoluteString) }
        if T.self == Decimal.self { return .literal((value as! Decimal).description) }
        let encoder = NodeEncoder(parent: parent, key: key)
        try value.encode(to: encoder)
        guard let node = encoder.node else {
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(
                    codingPath: encoder.codingPath,
                    debugDescription: "\(T.self) did not encode any value."
                )
            )
        }
        return node
    }

    static func number<F: BinaryFloatingPoint & CustomStringConvertible>(
        _ value: F,
        at codingPath: [any CodingKey]
    ) throws -> JSONNode {
        guard value.isFinite else {
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(
                    codingPath: codingPath,
                    debugDescription: "Unable to encode \(F.self).\(value) directly in JSON."
                )
            )
        }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        return .literal(text)
    }

    func write(to output: inout [UInt8]) {
        switch self {
        case .literal(let text):
            output.append(contentsOf: text.utf8)
        case .string(let text):
            Self.writeString(text, to: &output)
        case .array(let box):
            output.append(UInt8(ascii: "["))
            for (index, element) in box.elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                element.write(to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let box):
            output.append(UInt8(ascii: "{"))
            var first = true
            for (key, node) in box.members.sorted(by: { Self.compare($0.key, $1.key) < 0 }) {
                if !first { output.append(UInt8(ascii: ",")) }
                first = false
                Self.writeString(key, to: &output)
                output.append(UInt8(ascii: ":"))
                node.write(to: &output)
            }
            output.append(UInt8(ascii: "}"))
        case .deferred(let encoder):
            (encoder.node ?? .object(ObjectBox())).write(to: &output)
        }
    }

    /// Orders two keys by their UTF-8 bytes, as Foundation's `.sortedKeys` does on Linux.
    private static func compare(_ lhs: String, _ rhs: String) -> Int {
        var lhs = lhs
        var rhs = rhs
        return lhs.withUTF8 { l in
            rhs.withUTF8 { r in
                for index in 0..<min(l.count, r.count) where l[index] != r[index] {
                    return Int(l[index]) - Int(r[index])
                }
                return l.count - r.count
            }
        }
    }

    private static func writeString(_ text: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x08: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0x0A: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0xF)])
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}

/// The `Encoder` a value encodes itself into: holds the one node it produced.
///
/// Its coding path is a chain of parents, turned into an array only when asked for (errors,
/// the rare conformance that reads it): building arrays for every value would cost more than
/// the encoding itself.
final class NodeEncoder: Encoder {
    let parent: NodeEncoder?
    let key: (any CodingKey)?
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    var node: JSONNode?

    init(parent: NodeEncoder?, key: (any CodingKey)?) {
        self.parent = parent
        self.key = key
    }

    var codingPath: [any CodingKey] {
        var path: [any CodingKey] = []
        var current: NodeEncoder? = self
        while let encoder = current {
            if let key = encoder.key { path.append(key) }
            current = encoder.parent
        }
        return path.reversed()
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let box: JSONNode.ObjectBox
        if case .object(let existing) = node {
            box = existing
        } else {
            box = JSONNode.ObjectBox()
            node = .object(box)
        }
        return KeyedEncodingContainer(ObjectContainer<Key>(box: box, encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let box: JSONNode.ArrayBox
        if case .array(let existing) = node {
            box = existing
        } else {
            box = JSONNode.ArrayBox()
            node = .array(box)
        }
        return ArrayContainer(box: box, encoder: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueContainer(encoder: self)
    }

    /// A container for a new object at `key` of this encoder's value; `place` puts its node there.
    func nestedObject<Key: CodingKey>(
        at key: any CodingKey,
        place: (JSONNode) -> Void
    ) -> KeyedEncodingContainer<Key> {
        let nested = NodeEncoder(parent: self, key: key)
        let object = JSONNode.ObjectBox()
        nested.node = .object(object)
        place(.object(object))
        return KeyedEncodingContainer(ObjectContainer<Key>(box: object, encoder: nested))
    }

    /// A container for a new array at `key` of this encoder's value; `place` puts its node there.
    func nestedArray(at key: any CodingKey, place: (JSONNode) -> Void) -> any UnkeyedEncodingContainer {
        let nested = NodeEncoder(parent: self, key: key)
        let array = JSONNode.ArrayBox()
        nested.node = .array(array)
        place(.array(array))
        return ArrayContainer(box: array, encoder: nested)
    }
}

private struct ObjectContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let box: JSONNode.ObjectBox
    /// The encoder this object belongs to: its path.
    let encoder: NodeEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    private func set(_ node: JSONNode, _ key: Key) { box.set(key.stringValue, node) }
    private func path(_ key: Key) -> [any CodingKey] { codingPath + [key] }

    mutating func encodeNil(forKey key: Key) throws { set(.literal("null"), key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { set(.literal(value ? "true" : "false"), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { set(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { set(try .number(value, at: path(key)), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { set(try .number(value, at: path(key)), key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { set(.literal(String(value)), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { set(.literal(String(value)), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { set(.literal(String(value)), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { set(.literal(String(value)), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { set(.literal(String(value)), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { set(.literal(String(value)), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { set(.literal(String(value)), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { set(.literal(String(value)), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { set(.literal(String(value)), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { set(.literal(String(value)), key) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        set(try JSONNode.encoding(value, parent: encoder, key: key), key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type,
        forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        encoder.nestedObject(at: key) { set($0, key) }
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        encoder.nestedArray(at: key) { set($0, key) }
    }

    mutating func superEncoder() -> any Encoder { superEncoder(named: JSONKey("super")) }

    mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder(named: JSONKey(key.stringValue)) }

    /// An encoder whose value becomes the member `key`.
    private func superEncoder(named key: JSONKey) -> any Encoder {
        let nested = NodeEncoder(parent: encoder, key: key)
        box.set(key.stringValue, .deferred(nested))
        return nested
    }
}

private struct ArrayContainer: UnkeyedEncodingContainer {
    let box: JSONNode.ArrayBox
    /// The encoder this array belongs to: its path.
    let encoder: NodeEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }
    var count: Int { box.elements.count }

    private var nextKey: JSONKey { JSONKey(index: box.elements.count) }
    private func append(_ node: JSONNode) { box.elements.append(node) }

    mutating func encodeNil() throws { append(.literal("null")) }
    mutating func encode(_ value: Bool) throws { append(.literal(value ? "true" : "false")) }
    mutating func encode(_ value: String) throws { append(.string(value)) }
    mutating func encode(_ value: Double) throws { append(try .number(value, at: codingPath + [nextKey])) }
    mutating func encode(_ value: Float) throws { append(try .number(value, at: codingPath + [nextKey])) }
    mutating func encode(_ value: Int) throws { append(.literal(String(value))) }
    mutating func encode(_ value: Int8) throws { append(.literal(String(value))) }
    mutating func encode(_ value: Int16) throws { append(.literal(String(value))) }
    mutating func encode(_ value: Int32) throws { append(.literal(String(value))) }
    mutating func encode(_ value: Int64) throws { append(.literal(String(value))) }
    mutating func encode(_ value: UInt) throws { append(.literal(String(value))) }
    mutating func encode(_ value: UInt8) throws { append(.literal(String(value))) }
    mutating func encode(_ value: UInt16) throws { append(.literal(String(value))) }
    mutating func encode(_ value: UInt32) throws { append(.literal(String(value))) }
    mutating func encode(_ value: UInt64) throws { append(.literal(String(value))) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        append(try JSONNode.encoding(value, parent: encoder, key: nextKey))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<
        NestedKey
    > {
        encoder.nestedObject(at: nextKey) { append($0) }
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        encoder.nestedArray(at: nextKey) { append($0) }
    }

    mutating func superEncoder() -> any Encoder {
        let nested = NodeEncoder(parent: encoder, key: nextKey)
        append(.deferred(nested))
        return nested
    }
}

private struct SingleValueContainer: SingleValueEncodingContainer {
    let encoder: NodeEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    private func set(_ node: JSONNode) { encoder.node = node }

    mutating func encodeNil() throws { set(.literal("null")) }
    mutating func encode(_ value: Bool) throws { set(.literal(value ? "true" : "false")) }
    mutating func encode(_ value: String) throws { set(.string(value)) }
    mutating func encode(_ value: Double) throws { set(try .number(value, at: codingPath)) }
    mutating func encode(_ value: Float) throws { set(try .number(value, at: codingPath)) }
    mutating func encode(_ value: Int) throws { set(.literal(String(value))) }
    mutating func encode(_ value: Int8) throws { set(.literal(String(value))) }
    mutating func encode(_ value: Int16) throws { set(.literal(String(value))) }
    mutating func encode(_ value: Int32) throws { set(.literal(String(value))) }
    mutating func encode(_ value: Int64) throws { set(.literal(String(value))) }
    mutating func encode(_ value: UInt) throws { set(.literal(String(value))) }
    mutating func encode(_ value: UInt8) throws { set(.literal(String(value))) }
    mutating func encode(_ value: UInt16) throws { set(.literal(String(value))) }
    mutating func encode(_ value: UInt32) throws { set(.literal(String(value))) }
    mutating func encode(_ value: UInt64) throws { set(.literal(String(value))) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        // The value takes this encoder's place: same parent, same key.
        set(try JSONNode.encoding(value, parent: encoder.parent, key: encoder.key))
    }
}

/// A coding key for paths in errors and super encoders.
private struct JSONKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(_ string: String) {
        stringValue = string
        intValue = nil
    }

    init(index: Int) {
        stringValue = "Index \(index)"
        intValue = index
    }

    init?(stringValue: String) { self.init(stringValue) }

    init?(intValue: Int) { self.init(index: intValue) }
}
