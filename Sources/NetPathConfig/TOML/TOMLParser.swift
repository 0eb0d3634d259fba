// SPDX-License-Identifier: Apache-2.0

/// A TOML 1.0 parser that keeps the line and column of every table, key and value.
///
/// netpath parses its own TOML because every semantic error in a config file must point at
/// `FILE:LINE:COL`, and the usual Swift TOML libraries keep positions only for syntax errors.
///
/// ```swift
/// let table = try TOMLParser.parse("[agent]\nsettle = \"2s\"\n")
/// table["agent"]?.table?["settle"]?.location   // 2:10
/// ```
///
/// Supported: comments, bare/quoted/dotted keys, basic and literal strings (single- and
/// multi-line, all escapes), integers (decimal, `0x`, `0o`, `0b`, underscores), floats
/// (`inf`, `nan`), booleans, arrays, inline tables, `[table]` and `[[array of tables]]`.
/// Dates and times are rejected with a "not supported" error: no netpath setting uses them.
///
/// - Important: The parser never traps and always terminates; nesting deeper than
///   ``maximumDepth`` is a syntax error rather than a stack overflow.
public struct TOMLParser {
    /// How deeply arrays, inline tables and dotted keys may nest.
    public static let maximumDepth = 64

    /// Parses `text` into its root table.
    public static func parse(_ text: String) throws(TOMLSyntaxError) -> TOMLTable {
        var parser = TOMLParser(text)
        return try parser.parseDocument()
    }

    // MARK: - State

    /// A table under construction. Tables live in an arena and refer to each other by index,
    /// so that headers can reopen a table that was created earlier without reference types.
    struct Node {
        enum Origin {
            /// Created as the parent of a header (`[a]` for `[a.b]`); a later `[a]` may define it.
            case implicit
            /// Defined by its own `[header]` or as an element of `[[header]]`.
            case header
            /// Created by a dotted key (`a.b = 1`); no header may define it later.
            case dotted
            /// An inline table `{ … }`: closed once written.
            case inline
        }

        enum Child {
            case value(TOMLValue, key: SourceLocation)
            case table(Int, key: SourceLocation)
            case tables([Int], key: SourceLocation)

            var keyLocation: SourceLocation {
                switch self {
                case .value(_, let key), .table(_, let key), .tables(_, let key): return key
                }
            }
        }

        var origin: Origin
        var location: SourceLocation
        var depth: Int
        var order: [String] = []
        var children: [String: Child] = [:]
    }

    let bytes: [UInt8]
    var position = 0
    private let lineStarts: [Int]
    var nodes: [Node] = []
    private var lastLocation = (offset: 0, column: 1)

    init(_ text: String) {
        bytes = Array(text.utf8)
        var starts = [0]
        for (i, b) in bytes.enumerated() where b == UInt8(ascii: "\n") { starts.append(i + 1) }
        lineStarts = starts
    }

    // MARK: - Document

    mutating func parseDocument() throws(TOMLSyntaxError) -> TOMLTable {
        nodes = [Node(origin: .header, location: SourceLocation(line: 1, column: 1), depth: 0)]
        var current = 0
        while true {
            skipSpaces()
            guard let c = peek() else { break }
            switch c {
            case UInt8(ascii: "#"):
                try skipComment()
                try expectLineEnd(after: "a comment")
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                try consumeNewline()
            case UInt8(ascii: "["):
                current = try parseHeader()
                try expectLineEnd(after: "a table header")
            default:
                try parseKeyValue(into: current)
                try expectLineEnd(after: "a value")
            }
        }
        return table(0)
    }

    /// Converts the arena node `index` (and everything under it) into the public model.
    private func table(_ index: Int) -> TOMLTable {
        let node = nodes[index]
        var entries: [TOMLTable.Entry] = []
        for key in node.order {
            guard let child = node.children[key] else { continue }
            switch child {
            case .value(let value, let at):
                entries.append(.init(key: key, keyLocation: at, value: value))
            case .table(let sub, let at):
                let t = table(sub)
                entries.append(.init(key: key, keyLocation: at, value: TOMLValue(.table(t), at: t.location)))
            case .tables(let subs, let at):
                let elements = subs.map { sub -> TOMLValue in
                    let t = table(sub)
                    return TOMLValue(.table(t), at: t.location)
                }
                let start = elements.first?.location ?? at
                entries.append(.init(key: key, keyLocation: at, value: TOMLValue(.array(elements), at: start)))
            }
        }
        return TOMLTable(location: node.location, entries: entries)
    }

    // MARK: - Headers

    /// Parses `[a.b]` or `[[a.b]]` and returns the node that following keys go into.
    private mutating func parseHeader() throws(TOMLSyntaxError) -> Int {
        let start = location()
        position += 1
        let isArray = peek() == UInt8(ascii: "[")
        if isArray { position += 1 }
        let keys = try parseKey()
        skipSpaces()
        let close = isArray ? "]]" : "]"
        for _ in 0..<(isArray ? 2 : 1) {
            guard peek() == UInt8(ascii: "]") else {
                throw error("expected \"\(close)\" to close the table header, found \(found())")
            }
            position += 1
        }
        let name = Self.dotted(keys.map(\.0))
        let shown = isArray ? "[[\(name)]]" : "[\(name)]"

        var parent = 0
        for (i, (segment, at)) in keys.dropLast().enumerated() {
            switch nodes[parent].children[segment] {
            case nil:
                parent = try addTable(segment, at: at, origin: .implicit, location: at, to: parent)
            case .table(let sub, _)?:
                parent = sub
            case .tables(let subs, _)?:
                parent = subs[subs.count - 1]
            case .value(let value, let key)?:
                let prefix = Self.dotted(keys.prefix(i + 1).map(\.0))
                throw TOMLSyntaxError(
                    "cannot define table \(shown): \"\(prefix)\" is already \(Self.article(value)) (defined at \(key))",
                    at: at
                )
            }
        }
        guard let (segment, at) = keys.last else { return parent }
        switch nodes[parent].children[segment] {
        case nil:
            if isArray {
                let node = try newNode(origin: .header, location: start, under: parent)
                nodes[parent].order.append(segment)
                nodes[parent].children[segment] = .tables([node], key: at)
                return node
            }
            return try addTable(segment, at: at, origin: .header, location: start, to: parent)
        case .table(let sub, _)?:
            if isArray {
                throw TOMLSyntaxError(
                    "cannot define array of tables \(shown): [\(name)] is already a table (defined at \(nodes[sub].location))",
                    at: start
                )
            }
            switch nodes[sub].origin {
            case .implicit:
                nodes[sub].origin = .header
                nodes[sub].location = start
                return sub
            case .dotted:
                throw TOMLSyntaxError(
                    "table \(shown) is already defined by a dotted key at \(nodes[sub].location)",
                    at: start
                )
            case .header, .inline:
                throw TOMLSyntaxError(
                    "table \(shown) is defined twice; first definition at \(nodes[sub].location)",
                    at: start
                )
            }
        case .tables(let subs, let key)?:
            guard isArray else {
                throw TOMLSyntaxError(
                    "table \(shown) is already an array of tables (defined at \(key)); use [[\(name)]] to add an element",
                    at: start
                )
            }
            let node = try newNode(origin: .header, location: start, under: parent)
            // Release the stored array first so that appending does not copy it: a file with
            // thousands of [[rule]] tables stays linear.
            var elements = subs
            nodes[parent].children[segment] = nil
            elements.append(node)
            nodes[parent].children[segment] = .tables(elements, key: key)
            return node
        case .value(let value, let key)?:
            throw TOMLSyntaxError(
                "cannot define table \(shown): \"\(name)\" is already \(Self.article(value)) (defined at \(key))",
                at: start
            )
        }
    }

    private mutating func newNode(origin: Node.Origin, location: SourceLocation, under parent: Int)
        throws(TOMLSyntaxError) -> Int
    {
        let depth = nodes[parent].depth + 1
        guard depth <= Self.maximumDepth else {
            throw TOMLSyntaxError("tables are nested more than \(Self.maximumDepth) levels deep", at: location)
        }
        nodes.append(Node(origin: origin, location: location, depth: depth))
        return nodes.count - 1
    }

    private mutating func addTable(
        _ key: String,
        at keyLocation: SourceLocation,
        origin: Node.Origin,
        location: SourceLocation,
        to parent: Int
    ) throws(TOMLSyntaxError) -> Int {
        let node = try newNode(origin: origin, location: location, under: parent)
        nodes[parent].order.append(key)
        nodes[parent].children[key] = .table(node, key: keyLocation)
        return node
    }

    // MARK: - Keys and values

    /// Parses `key = value` and stores it in the node `table`, creating tables for dotted keys.
    mutating func parseKeyValue(into table: Int, depth: Int = 0) throws(TOMLSyntaxError) {
        let keys = try parseKey()
        skipSpaces()
        guard peek() == UInt8(ascii: "=") else {
            let name = Self.dotted(keys.map(\.0))
            throw error("expected \"=\" after key \"\(name)\", found \(found())")
        }
        position += 1
        skipSpaces()
        let value = try parseValue(depth: depth)

        var parent = table
        for (i, (segment, at)) in keys.dropLast().enumerated() {
            let prefix = Self.dotted(keys.prefix(i + 1).map(\.0))
            switch nodes[parent].children[segment] {
            case nil:
                parent = try addTable(segment, at: at, origin: .dotted, location: at, to: parent)
            case .table(let sub, _)? where nodes[sub].origin == .dotted:
                parent = sub
            case .table(let sub, _)?:
                throw TOMLSyntaxError(
                    "cannot add to table \"\(prefix)\" with a dotted key: it is defined at \(nodes[sub].location)",
                    at: at
                )
            case .tables(_, let key)?:
                throw TOMLSyntaxError(
                    "cannot add to \"\(prefix)\" with a dotted key: it is an array of tables (defined at \(key))",
                    at: at
                )
            case .value(let existing, let key)?:
                throw TOMLSyntaxError(
                    "cannot use \"\(prefix)\" as a table: it is already \(Self.article(existing)) (defined at \(key))",
                    at: at
                )
            }
        }
        guard let (segment, at) = keys.last else { return }
        if let existing = nodes[parent].children[segment] {
            throw TOMLSyntaxError(
                "duplicate key \"\(Self.dotted(keys.map(\.0)))\"; first definition at \(existing.keyLocation)",
                at: at
            )
        }
        nodes[parent].order.append(segment)
        nodes[parent].children[segment] = .value(value, key: at)
    }

    /// Parses a possibly dotted key into its segments and their locations.
    mutating func parseKey() throws(TOMLSyntaxError) -> [(String, SourceLocation)] {
        var segments: [(String, SourceLocation)] = []
        while true {
            skipSpaces()
            let at = location()
            let segment: String
            switch peek() {
            case UInt8(ascii: "\"")?:
                if peek(1) == UInt8(ascii: "\"") && peek(2) == UInt8(ascii: "\"") {
                    throw error("a key cannot be a multi-line string")
                }
                segment = try parseBasicString()
            case UInt8(ascii: "'")?:
                if peek(1) == UInt8(ascii: "'") && peek(2) == UInt8(ascii: "'") {
                    throw error("a key cannot be a multi-line string")
                }
                segment = try parseLiteralString()
            case let c? where Self.isBareKey(c):
                let start = position
                while let c = peek(), Self.isBareKey(c) { position += 1 }
                segment = String(decoding: bytes[start..<position], as: UTF8.self)
            default:
                throw error("expected a key, found \(found())")
            }
            segments.append((segment, at))
            guard segments.count <= Self.maximumDepth else {
                throw TOMLSyntaxError("a key has more than \(Self.maximumDepth) dotted parts", at: at)
            }
            skipSpaces()
            guard peek() == UInt8(ascii: ".") else { return segments }
            position += 1
        }
    }

    static func isBareKey(_ c: UInt8) -> Bool {
        (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
            || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: "_") || c == UInt8(ascii: "-")
    }

    /// Joins key segments for messages, quoting the ones that are not bare.
    static func dotted(_ segments: [String]) -> String {
        segments.map { s in
            !s.isEmpty && s.utf8.allSatisfy(isBareKey) ? s : TOMLValue.quoted(s)
        }.joined(separator: ".")
    }

    static func article(_ value: TOMLValue) -> String {
        switch value.kind {
        case .array, .integer: return "an \(value.typeName)"
        case .table: return "an inline table"
        default: return "a \(value.typeName)"
        }
    }

    // MARK: - Scanning

    func peek(_ offset: Int = 0) -> UInt8? {
        let i = position + offset
        return i < bytes.count ? bytes[i] : nil
    }

    /// The location of byte offset `offset` (default: the current position).
    mutating func location(_ offset: Int? = nil) -> SourceLocation {
        let offset = min(offset ?? position, bytes.count)
        var low = 0
        var high = lineStarts.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if lineStarts[mid] <= offset { low = mid } else { high = mid - 1 }
        }
        // Count scalars, not bytes: skip UTF-8 continuation bytes. Locations are asked for in
        // increasing order, so continue from the last one on the same line: a long line with
        // many values stays linear instead of quadratic.
        var from = lineStarts[low]
        var column = 1
        if lastLocation.offset >= from && lastLocation.offset <= offset {
            from = lastLocation.offset
            column = lastLocation.column
        }
        for b in bytes[from..<offset] where b & 0xC0 != 0x80 { column += 1 }
        lastLocation = (offset, column)
        return SourceLocation(line: low + 1, column: column)
    }

    mutating func error(_ message: String) -> TOMLSyntaxError {
        TOMLSyntaxError(message, at: location())
    }

    /// What is at the current position, for "found …" messages.
    func found() -> String {
        guard let c = peek() else { return "end of file" }
        if c == UInt8(ascii: "\n") || (c == UInt8(ascii: "\r") && peek(1) == UInt8(ascii: "\n")) {
            return "end of line"
        }
        var length = 1
        if c >= 0xF0 { length = 4 } else if c >= 0xE0 { length = 3 } else if c >= 0xC0 { length = 2 }
        let end = min(position + length, bytes.count)
        let text = String(decoding: bytes[position..<end], as: UTF8.self)
        return TOMLValue.quoted(text)
    }

    mutating func skipSpaces() {
        while let c = peek(), c == UInt8(ascii: " ") || c == UInt8(ascii: "\t") { position += 1 }
    }

    mutating func skipComment() throws(TOMLSyntaxError) {
        position += 1
        while let c = peek(), c != UInt8(ascii: "\n") {
            if c == UInt8(ascii: "\r") && peek(1) == UInt8(ascii: "\n") { return }
            if Self.isForbiddenControl(c) {
                throw error("control character U+\(Self.hex(c)) is not allowed in a comment")
            }
            position += 1
        }
    }

    /// After a value, a header or a comment: optional spaces and a comment, then a newline or the end.
    mutating func expectLineEnd(after what: String) throws(TOMLSyntaxError) {
        skipSpaces()
        if peek() == UInt8(ascii: "#") { try skipComment() }
        guard peek() != nil else { return }
        guard peek() == UInt8(ascii: "\n") || peek() == UInt8(ascii: "\r") else {
            throw error("expected a newline after \(what), found \(found())")
        }
        try consumeNewline()
    }

    mutating func consumeNewline() throws(TOMLSyntaxError) {
        if peek() == UInt8(ascii: "\r") {
            guard peek(1) == UInt8(ascii: "\n") else {
                throw error("a carriage return must be followed by a line feed")
            }
            position += 1
        }
        position += 1
    }

    /// Skips spaces, newlines and comments, as allowed between array elements.
    mutating func skipBlank() throws(TOMLSyntaxError) {
        while true {
            skipSpaces()
            switch peek() {
            case UInt8(ascii: "#")?: try skipComment()
            case UInt8(ascii: "\n")?, UInt8(ascii: "\r")?: try consumeNewline()
            default: return
            }
        }
    }

    /// Control characters other than tab, which TOML forbids in comments and strings.
    static func isForbiddenControl(_ c: UInt8) -> Bool {
        (c < 0x20 && c != UInt8(ascii: "\t")) || c == 0x7F
    }

    static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    static func hex(_ value: UInt8) -> String { hex(UInt32(value)) }
}
