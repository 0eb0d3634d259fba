// SPDX-License-Identifier: Apache-2.0

import NetPathConfig

/// Writes a parsed TOML table back as TOML, for the round trip of ``fuzz(_:_:)``.
///
/// netpath has no TOML encoder (it only reads configuration), so this one is as plain as the
/// format allows: every key quoted, every table inline, every array on one line. It is only
/// for comparing values, not for people.
enum TOMLWriter {
    /// The root table as `key = value` lines.
    static func document(_ table: TOMLTable) -> String {
        table.entries.map { "\(TOMLValue.quoted($0.key)) = \(value($0.value.kind))\n" }.joined()
    }

    static func value(_ kind: TOMLValue.Kind) -> String {
        switch kind {
        case .string(let s): return TOMLValue.quoted(s)
        case .integer(let i): return String(i)
        // Swift writes the shortest text that reads back as the same Double: `1e-05`, `inf`,
        // `-0.0`, `nan`, all of which are TOML floats too.
        case .float(let d): return d.isNaN ? "nan" : d.description
        case .boolean(let b): return b ? "true" : "false"
        case .array(let elements): return "[" + elements.map { value($0.kind) }.joined(separator: ", ") + "]"
        case .table(let t):
            return "{"
                + t.entries.map { "\(TOMLValue.quoted($0.key)) = \(value($0.value.kind))" }
                .joined(separator: ", ") + "}"
        }
    }

    /// Whether two values are equal, locations aside; NaN equals NaN, 0.0 differs from -0.0.
    static func same(_ a: TOMLValue.Kind, _ b: TOMLValue.Kind) -> Bool {
        switch (a, b) {
        case (.float(let x), .float(let y)): return x.bitPattern == y.bitPattern || (x.isNaN && y.isNaN)
        case (.array(let x), .array(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { same($0.kind, $1.kind) }
        case (.table(let x), .table(let y)):
            return x.keys == y.keys && zip(x.entries, y.entries).allSatisfy { same($0.value.kind, $1.value.kind) }
        default: return a == b
        }
    }

    /// How deeply tables and arrays nest in `table` (the root is 0).
    static func depth(of table: TOMLTable) -> Int {
        table.entries.map { depth(of: $0.value.kind) }.max() ?? 0
    }

    private static func depth(of kind: TOMLValue.Kind) -> Int {
        switch kind {
        case .array(let elements): return 1 + (elements.map { depth(of: $0.kind) }.max() ?? 0)
        case .table(let t): return 1 + depth(of: t)
        default: return 0
        }
    }
}
