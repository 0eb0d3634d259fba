// SPDX-License-Identifier: Apache-2.0

/// A shell-style name pattern (`fnmatch(3)` without flags): `*`, `?`, `[abc]`, `[a-z]`, `[!a]`, `\x`.
///
/// Interface names are short ASCII, so matching works on Unicode scalars with simple backtracking.
public struct Glob: Hashable, Sendable, CustomStringConvertible, Codable {
    /// Why a pattern was rejected.
    public struct SyntaxError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The pattern.
        public var pattern: String
        /// What is wrong with it.
        public var message: String
        /// `invalid glob "PATTERN": MESSAGE`, one line.
        public var description: String { "invalid glob \"\(pattern)\": \(message)".escapingControlCharacters }
    }

    private enum Token: Hashable, Sendable {
        case literal(Unicode.Scalar)
        case any
        case star
        case set(negated: Bool, ranges: [ClosedRange<Unicode.Scalar>])
    }

    /// The pattern as written.
    public let pattern: String
    private let tokens: [Token]

    /// Compiles `pattern`, throwing ``SyntaxError`` for an unterminated `[` or a trailing `\`.
    public init(_ pattern: String) throws(SyntaxError) {
        self.pattern = pattern
        var tokens: [Token] = []
        let scalars = Array(pattern.unicodeScalars)
        var i = 0
        while i < scalars.count {
            let c = scalars[i]
            switch c {
            case "*":
                if tokens.last != .star { tokens.append(.star) }
                i += 1
            case "?":
                tokens.append(.any)
                i += 1
            case "\\":
                guard i + 1 < scalars.count else {
                    throw SyntaxError(pattern: pattern, message: "a trailing backslash escapes nothing")
                }
                tokens.append(.literal(scalars[i + 1]))
                i += 2
            case "[":
                var j = i + 1
                var negated = false
                if j < scalars.count, scalars[j] == "!" || scalars[j] == "^" {
                    negated = true
                    j += 1
                }
                var ranges: [ClosedRange<Unicode.Scalar>] = []
                var first = true
                while j < scalars.count, scalars[j] != "]" || first {
                    first = false
                    let low = scalars[j]
                    if j + 2 < scalars.count, scalars[j + 1] == "-", scalars[j + 2] != "]" {
                        let high = scalars[j + 2]
                        guard low <= high else {
                            throw SyntaxError(
                                pattern: pattern,
                                message:
                                    "range \(String(low).escapingControlCharacters)-\(String(high).escapingControlCharacters) is reversed"
                            )
                        }
                        ranges.append(low...high)
                        j += 3
                    } else {
                        ranges.append(low...low)
                        j += 1
                    }
                }
                guard j < scalars.count else {
                    throw SyntaxError(pattern: pattern, message: "'[' at offset \(i) is never closed with ']'")
                }
                tokens.append(.set(negated: negated, ranges: ranges))
                i = j + 1
            default:
                tokens.append(.literal(c))
                i += 1
            }
        }
        self.tokens = tokens
    }

    /// Whether `name` matches the whole pattern.
    public func matches(_ name: String) -> Bool {
        let text = Array(name.unicodeScalars)
        // Iterative wildcard matching: remember the last star and retry from one character later.
        var t = 0
        var p = 0
        var starP = -1
        var starT = 0
        while t < text.count {
            if p < tokens.count, tokens[p] != .star, Self.matchOne(tokens[p], text[t]) {
                t += 1
                p += 1
            } else if p < tokens.count, tokens[p] == .star {
                starP = p
                starT = t
                p += 1
            } else if starP >= 0 {
                p = starP + 1
                starT += 1
                t = starT
            } else {
                return false
            }
        }
        while p < tokens.count, tokens[p] == .star { p += 1 }
        return p == tokens.count
    }

    private static func matchOne(_ token: Token, _ c: Unicode.Scalar) -> Bool {
        switch token {
        case .literal(let l): return l == c
        case .any: return true
        case .star: return true
        case .set(let negated, let ranges): return ranges.contains { $0.contains(c) } != negated
        }
    }

    public var description: String { pattern }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do {
            try self.init(text)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.description)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(pattern)
    }
}
