// SPDX-License-Identifier: Apache-2.0

/// One TOML value and where it was written.
///
/// Strings, integers, floats and booleans are leaves; arrays and tables nest. Every value keeps
/// the location of its first character, so a later semantic check can point at it.
public struct TOMLValue: Hashable, Sendable {
    /// The value itself.
    public enum Kind: Hashable, Sendable {
        /// A basic or literal string, escapes decoded.
        case string(String)
        /// A 64-bit signed integer, from any base.
        case integer(Int64)
        /// A float, including `inf` and `nan`.
        case float(Double)
        /// `true` or `false`.
        case boolean(Bool)
        /// An array; for `[[table]]`, its tables.
        case array([TOMLValue])
        /// A table: `[header]`, inline, or implied by a dotted key.
        case table(TOMLTable)
    }

    /// The value.
    public var kind: Kind
    /// Where the value starts (for a `[table]` or `[[table]]`, the header's `[`).
    public var location: SourceLocation

    /// Creates a value at `location`.
    public init(_ kind: Kind, at location: SourceLocation) {
        self.kind = kind
        self.location = location
    }

    /// The TOML type name, as messages use it: `string`, `integer`, `float`, `boolean`, `array`, `table`.
    public var typeName: String {
        switch kind {
        case .string: return "string"
        case .integer: return "integer"
        case .float: return "float"
        case .boolean: return "boolean"
        case .array: return "array"
        case .table: return "table"
        }
    }

    /// The type and, for leaves, the value as written in TOML: `integer 30`, `string "never"`, `array`.
    public var summary: String {
        switch kind {
        case .string(let s): return "string \(TOMLValue.quoted(s))"
        case .integer(let i): return "integer \(i)"
        case .float(let d): return "float \(d)"
        case .boolean(let b): return "boolean \(b)"
        case .array(let a): return a.isEmpty ? "empty array" : "array"
        case .table: return "table"
        }
    }

    /// The string, if this is one.
    public var string: String? {
        if case .string(let s) = kind { return s }
        return nil
    }

    /// The integer, if this is one.
    public var integer: Int64? {
        if case .integer(let i) = kind { return i }
        return nil
    }

    /// The boolean, if this is one.
    public var boolean: Bool? {
        if case .boolean(let b) = kind { return b }
        return nil
    }

    /// The elements, if this is an array.
    public var array: [TOMLValue]? {
        if case .array(let a) = kind { return a }
        return nil
    }

    /// The table, if this is one.
    public var table: TOMLTable? {
        if case .table(let t) = kind { return t }
        return nil
    }

    /// `s` as a TOML basic string, with quotes and control characters escaped.
    public static func quoted(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    let hex = String(scalar.value, radix: 16, uppercase: true)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}

/// A TOML table: keys in document order, each with its location, and the table's own location.
public struct TOMLTable: Hashable, Sendable {
    /// One key and its value.
    public struct Entry: Hashable, Sendable {
        /// The key (one segment; dotted keys become nested tables).
        public var key: String
        /// Where the key was written; for a table made by a header, the header's segment.
        public var keyLocation: SourceLocation
        /// The value.
        public var value: TOMLValue

        /// Creates an entry.
        public init(key: String, keyLocation: SourceLocation, value: TOMLValue) {
            self.key = key
            self.keyLocation = keyLocation
            self.value = value
        }
    }

    /// Where the table is defined: its header, its inline `{`, or the first key that implied it.
    public var location: SourceLocation
    /// The entries, in the order they were first written.
    public private(set) var entries: [Entry]

    /// Creates a table; `entries` must have distinct keys.
    public init(location: SourceLocation, entries: [Entry] = []) {
        self.location = location
        self.entries = entries
    }

    /// The entry for `key`, if present.
    public func entry(_ key: String) -> Entry? {
        entries.first { $0.key == key }
    }

    /// The value for `key`, if present.
    public subscript(key: String) -> TOMLValue? {
        entry(key)?.value
    }

    /// The keys, in document order.
    public var keys: [String] { entries.map(\.key) }
}
