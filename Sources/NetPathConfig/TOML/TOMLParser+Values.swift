// SPDX-License-Identifier: Apache-2.0
// Values: strings, numbers, booleans, arrays and inline tables.
extension TOMLParser {
    mutating func parseValue(depth: Int) throws(TOMLSyntaxError) -> TOMLValue {
        let at = location()
        guard depth < Self.maximumDepth else {
            throw error("values are nested more than \(Self.maximumDepth) levels deep")
        }
        switch peek() {
        case UInt8(ascii: "\"")?:
            if peek(1) == UInt8(ascii: "\"") && peek(2) == UInt8(ascii: "\"") {
                return TOMLValue(.string(try parseMultilineString(literal: false)), at: at)
            }
            return TOMLValue(.string(try parseBasicString()), at: at)
        case UInt8(ascii: "'")?:
            if peek(1) == UInt8(ascii: "'") && peek(2) == UInt8(ascii: "'") {
                return TOMLValue(.string(try parseMultilineString(literal: true)), at: at)
            }
            return TOMLValue(.string(try parseLiteralString()), at: at)
        case UInt8(ascii: "[")?:
            return TOMLValue(.array(try parseArray(depth: depth)), at: at)
        case UInt8(ascii: "{")?:
            return TOMLValue(.table(try parseInlineTable(depth: depth)), at: at)
        case let c? where Self.isScalarStart(c):
            return TOMLValue(try parseScalar(), at: at)
        default:
            throw error("expected a value, found \(found())")
        }
    }

    private static func isScalarStart(_ c: UInt8) -> Bool {
        (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: "+") || c == UInt8(ascii: "-")
            || (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
    }

    // MARK: - Strings

    /// Parses `"…"` with escapes; the cursor is on the opening quote.
    mutating func parseBasicString() throws(TOMLSyntaxError) -> String {
        position += 1
        var out: [UInt8] = []
        while true {
            guard let c = peek(), c != UInt8(ascii: "\n"), c != UInt8(ascii: "\r") else {
                throw error("expected \"\\\"\" to close the string, found \(found())")
            }
            switch c {
            case UInt8(ascii: "\""):
                position += 1
                return String(decoding: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                try parseEscape(into: &out)
            default:
                if Self.isForbiddenControl(c) {
                    throw error(
                        "control character U+\(Self.hex(c)) is not allowed in a string; write it as \\u\(Self.hex(c))"
                    )
                }
                out.append(c)
                position += 1
            }
        }
    }

    /// Parses `'…'`, taken verbatim; the cursor is on the opening quote.
    mutating func parseLiteralString() throws(TOMLSyntaxError) -> String {
        position += 1
        let start = position
        while true {
            guard let c = peek(), c != UInt8(ascii: "\n"), c != UInt8(ascii: "\r") else {
                throw error("expected \"'\" to close the string, found \(found())")
            }
            if c == UInt8(ascii: "'") {
                let text = String(decoding: bytes[start..<position], as: UTF8.self)
                position += 1
                return text
            }
            if Self.isForbiddenControl(c) {
                throw error("control character U+\(Self.hex(c)) is not allowed in a string")
            }
            position += 1
        }
    }

    /// Parses `"""…"""` or `'''…'''`; the cursor is on the first of the three quotes.
    mutating func parseMultilineString(literal: Bool) throws(TOMLSyntaxError) -> String {
        let quote = literal ? UInt8(ascii: "'") : UInt8(ascii: "\"")
        position += 3
        // A newline right after the opening delimiter is trimmed.
        if peek() == UInt8(ascii: "\n") {
            position += 1
        } else if peek() == UInt8(ascii: "\r") && peek(1) == UInt8(ascii: "\n") {
            position += 2
        }
        var out: [UInt8] = []
        while true {
            guard let c = peek() else {
                let delimiter = literal ? "'''" : "\"\"\""
                throw error("expected \(delimiter) to close the multi-line string, found end of file")
            }
            if c == quote {
                var count = 0
                while peek(count) == quote { count += 1 }
                if count >= 3 {
                    // Up to two quotes may sit right before the closing delimiter.
                    guard count <= 5 else { throw error("too many quotes at the end of a multi-line string") }
                    out.append(contentsOf: repeatElement(quote, count: count - 3))
                    position += count
                    return String(decoding: out, as: UTF8.self)
                }
                out.append(contentsOf: repeatElement(quote, count: count))
                position += count
                continue
            }
            switch c {
            case UInt8(ascii: "\n"):
                out.append(c)
                position += 1
            case UInt8(ascii: "\r"):
                guard peek(1) == UInt8(ascii: "\n") else {
                    throw error("a carriage return must be followed by a line feed")
                }
                out.append(UInt8(ascii: "\n"))
                position += 2
            case UInt8(ascii: "\\") where !literal:
                if try skipLineEndingBackslash() { continue }
                try parseEscape(into: &out)
            default:
                if Self.isForbiddenControl(c) {
                    throw error("control character U+\(Self.hex(c)) is not allowed in a string")
                }
                out.append(c)
                position += 1
            }
        }
    }

    /// A backslash that ends a line in a multi-line basic string removes all whitespace up to the
    /// next non-blank character. Returns `false` (cursor unmoved) when this backslash is an escape.
    private mutating func skipLineEndingBackslash() throws(TOMLSyntaxError) -> Bool {
        var i = 1
        while let c = peek(i), c == UInt8(ascii: " ") || c == UInt8(ascii: "\t") { i += 1 }
        guard peek(i) == UInt8(ascii: "\n") || (peek(i) == UInt8(ascii: "\r") && peek(i + 1) == UInt8(ascii: "\n"))
        else {
            return false
        }
        position += i
        while let c = peek() {
            if c == UInt8(ascii: " ") || c == UInt8(ascii: "\t") || c == UInt8(ascii: "\n") {
                position += 1
            } else if c == UInt8(ascii: "\r") {
                try consumeNewline()
            } else {
                break
            }
        }
        return true
    }

    /// Parses one escape sequence; the cursor is on the backslash.
    private mutating func parseEscape(into out: inout [UInt8]) throws(TOMLSyntaxError) {
        let start = position
        position += 1
        guard let c = peek() else { throw error("expected an escape sequence after \"\\\", found end of file") }
        position += 1
        switch c {
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "\""): out.append(c)
        case UInt8(ascii: "\\"): out.append(c)
        case UInt8(ascii: "u"), UInt8(ascii: "U"):
            let count = c == UInt8(ascii: "u") ? 4 : 8
            var value: UInt32 = 0
            for _ in 0..<count {
                guard let d = peek(), let digit = Self.hexDigit(d) else {
                    throw error(
                        "expected \(count) hexadecimal digits after \"\\\(Unicode.Scalar(c))\", found \(found())"
                    )
                }
                value = value << 4 | UInt32(digit)
                position += 1
            }
            guard let scalar = Unicode.Scalar(value) else {
                throw TOMLSyntaxError(
                    "\\\(Unicode.Scalar(c))\(Self.hex(value)) is not a Unicode scalar value",
                    at: location(start)
                )
            }
            out.append(contentsOf: Array(String(Character(scalar)).utf8))
        default:
            position -= 1
            throw TOMLSyntaxError(
                "invalid escape sequence \"\\\(found().dropFirst().dropLast())\"; expected one of \\b \\t \\n \\f \\r \\\" \\\\ \\uXXXX \\UXXXXXXXX",
                at: location(start)
            )
        }
    }

    static func hexDigit(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    // MARK: - Arrays and inline tables

    private mutating func parseArray(depth: Int) throws(TOMLSyntaxError) -> [TOMLValue] {
        position += 1
        var elements: [TOMLValue] = []
        while true {
            try skipBlank()
            if peek() == UInt8(ascii: "]") {
                position += 1
                return elements
            }
            elements.append(try parseValue(depth: depth + 1))
            try skipBlank()
            switch peek() {
            case UInt8(ascii: ",")?: position += 1
            case UInt8(ascii: "]")?:
                position += 1
                return elements
            default: throw error("expected \",\" or \"]\" after an array element, found \(found())")
            }
        }
    }

    private mutating func parseInlineTable(depth: Int) throws(TOMLSyntaxError) -> TOMLTable {
        let at = location()
        position += 1
        guard depth + 1 < Self.maximumDepth else {
            throw TOMLSyntaxError("values are nested more than \(Self.maximumDepth) levels deep", at: at)
        }
        // The inline table is built in the arena like any other, then frozen into a value.
        nodes.append(Node(origin: .inline, location: at, depth: depth + 1))
        let node = nodes.count - 1
        skipSpaces()
        if peek() == UInt8(ascii: "}") {
            position += 1
            return frozen(node)
        }
        while true {
            try parseKeyValue(into: node, depth: depth + 1)
            skipSpaces()
            switch peek() {
            case UInt8(ascii: ",")?:
                position += 1
                skipSpaces()
                if peek() == UInt8(ascii: "}") {
                    throw error("a trailing comma is not allowed in an inline table")
                }
            case UInt8(ascii: "}")?:
                position += 1
                return frozen(node)
            default:
                let hint = found() == "end of line" ? " (an inline table must be on one line)" : ""
                throw error("expected \",\" or \"}\" in an inline table, found \(found())\(hint)")
            }
        }
    }

    /// Converts an inline table's arena node; its children are values or dotted-key tables.
    private func frozen(_ index: Int) -> TOMLTable {
        let node = nodes[index]
        var entries: [TOMLTable.Entry] = []
        for key in node.order {
            switch node.children[key] {
            case .value(let value, let at)?:
                entries.append(.init(key: key, keyLocation: at, value: value))
            case .table(let sub, let at)?:
                let t = frozen(sub)
                entries.append(.init(key: key, keyLocation: at, value: TOMLValue(.table(t), at: t.location)))
            case .tables, nil:
                break
            }
        }
        return TOMLTable(location: node.location, entries: entries)
    }

    // MARK: - Numbers, booleans, dates

    /// Parses a bare scalar: boolean, integer, float, `inf`, `nan`; rejects dates and times.
    private mutating func parseScalar() throws(TOMLSyntaxError) -> TOMLValue.Kind {
        let start = position
        while let c = peek(),
            Self.isBareKey(c) || c == UInt8(ascii: "+") || c == UInt8(ascii: ".") || c == UInt8(ascii: ":")
        {
            position += 1
        }
        let token = Array(bytes[start..<position])
        let text = String(decoding: token, as: UTF8.self)
        let at = location(start)
        if text == "true" { return .boolean(true) }
        if text == "false" { return .boolean(false) }
        if Self.looksLikeDateOrTime(token) {
            throw TOMLSyntaxError(
                "dates and times are not supported in netpath configuration; write \(text) as a string",
                at: at
            )
        }
        var digits = token[...]
        var negative = false
        if let sign = digits.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
            negative = sign == UInt8(ascii: "-")
            digits = digits.dropFirst()
        }
        let body = String(decoding: digits, as: UTF8.self)
        if body == "inf" { return .float(negative ? -.infinity : .infinity) }
        if body == "nan" { return .float(.nan) }
        guard let first = digits.first, first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9") else {
            position = start
            throw error("expected a value, found \(TOMLValue.quoted(text)) (strings need quotes)")
        }
        func invalid(_ why: String) -> TOMLSyntaxError {
            TOMLSyntaxError("invalid number \(text): \(why)", at: at)
        }

        if digits.count >= 2, first == UInt8(ascii: "0"), let radixChar = digits.dropFirst().first,
            let radix = [UInt8(ascii: "x"): 16, UInt8(ascii: "o"): 8, UInt8(ascii: "b"): 2][radixChar]
        {
            if token.first == UInt8(ascii: "+") || token.first == UInt8(ascii: "-") {
                throw invalid("hexadecimal, octal and binary integers cannot have a sign")
            }
            let magnitude = try Self.digits(digits.dropFirst(2), radix: radix, invalid)
            guard magnitude <= UInt64(Int64.max) else { throw invalid("it does not fit in 64 bits") }
            return .integer(Int64(magnitude))
        }

        // Decimal: integer part, optional fraction, optional exponent.
        var rest = digits
        let integerPart = rest.prefix { Self.isDigitOrUnderscore($0) }
        rest = rest.dropFirst(integerPart.count)
        let integerDigits = try Self.digits(integerPart, radix: 10, invalid)
        if integerPart.count > 1 && integerPart.first == UInt8(ascii: "0") {
            throw invalid("leading zeros are not allowed")
        }
        if rest.isEmpty {
            if negative {
                guard integerDigits <= UInt64(Int64.max) + 1 else { throw invalid("it does not fit in 64 bits") }
                return .integer(integerDigits == UInt64(Int64.max) + 1 ? Int64.min : -Int64(integerDigits))
            }
            guard integerDigits <= UInt64(Int64.max) else { throw invalid("it does not fit in 64 bits") }
            return .integer(Int64(integerDigits))
        }
        if rest.first == UInt8(ascii: ".") {
            rest = rest.dropFirst()
            let fraction = rest.prefix { Self.isDigitOrUnderscore($0) }
            guard !fraction.isEmpty else { throw invalid("expected digits after the decimal point") }
            _ = try Self.digits(fraction, radix: 10, invalid)
            rest = rest.dropFirst(fraction.count)
        }
        if let e = rest.first, e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            rest = rest.dropFirst()
            if let sign = rest.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { rest = rest.dropFirst() }
            let exponent = rest.prefix { Self.isDigitOrUnderscore($0) }
            guard !exponent.isEmpty else { throw invalid("expected digits in the exponent") }
            _ = try Self.digits(exponent, radix: 10, invalid)
            rest = rest.dropFirst(exponent.count)
        }
        guard rest.isEmpty else {
            throw invalid("unexpected \(TOMLValue.quoted(String(decoding: rest, as: UTF8.self)))")
        }
        let cleaned = String(decoding: token.filter { $0 != UInt8(ascii: "_") }, as: UTF8.self)
        guard let value = Double(cleaned) else { throw invalid("not a floating-point number") }
        return .float(value)
    }

    private static func isDigitOrUnderscore(_ c: UInt8) -> Bool {
        (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: "_")
    }

    /// Validates digits with single underscores between them and returns their value, saturating
    /// at `UInt64.max` (callers range-check).
    private static func digits(
        _ text: ArraySlice<UInt8>,
        radix: Int,
        _ invalid: (String) -> TOMLSyntaxError
    ) throws(TOMLSyntaxError) -> UInt64 {
        guard !text.isEmpty else { throw invalid("expected digits") }
        guard text.first != UInt8(ascii: "_"), text.last != UInt8(ascii: "_") else {
            throw invalid("an underscore must sit between two digits")
        }
        var value: UInt64 = 0
        var previousUnderscore = false
        for c in text {
            if c == UInt8(ascii: "_") {
                if previousUnderscore { throw invalid("an underscore must sit between two digits") }
                previousUnderscore = true
                continue
            }
            previousUnderscore = false
            guard let digit = hexDigit(c), Int(digit) < radix else {
                throw invalid("\(TOMLValue.quoted(String(Unicode.Scalar(c)))) is not a base-\(radix) digit")
            }
            let (times, o1) = value.multipliedReportingOverflow(by: UInt64(radix))
            let (sum, o2) = times.addingReportingOverflow(UInt64(digit))
            value = o1 || o2 ? .max : sum
        }
        return value
    }

    /// `1979-05-27…` or `07:32:00…`: dates and times, which netpath does not support.
    private static func looksLikeDateOrTime(_ token: [UInt8]) -> Bool {
        func isDigit(_ i: Int) -> Bool {
            i < token.count && token[i] >= UInt8(ascii: "0") && token[i] <= UInt8(ascii: "9")
        }
        let date = token.count >= 5 && (0..<4).allSatisfy(isDigit) && token[4] == UInt8(ascii: "-")
        let time = token.count >= 3 && isDigit(0) && isDigit(1) && token[2] == UInt8(ascii: ":")
        return date || time
    }
}
