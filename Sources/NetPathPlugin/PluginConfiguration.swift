// SPDX-License-Identifier: Apache-2.0

import NetPathConfig
import NetPathCore

/// A plugin's `[plugin.NAME]` table, with typed readers that turn every problem into a
/// ``Diagnostic`` pointing at the line and column to fix.
///
/// Read each setting once, then call ``finish()``: it throws every problem found at once, and
/// reports keys that were never read as unknown (with a "did you mean" for typos).
///
/// ```swift
/// init(configuration: PluginConfiguration) throws {
///     var settings = configuration
///     path = settings.string("path", required: true) ?? ""
///     if !path.hasPrefix("/") { settings.error("path must be absolute, found \"\(path)\"", at: "path") }
///     try settings.finish()
/// }
/// ```
///
/// For `[plugin.event-log]` with `path = 7` on line 12 this throws
/// `netpath.toml:12:8: error: plugin.event-log.path must be a string, found integer 7`.
public struct PluginConfiguration: Hashable, Sendable {
    /// The plugin's name, as in `[plugin.NAME]`.
    public let name: String
    /// The configuration file's name, as diagnostics show it.
    public let file: String
    /// The table; empty (at ``location``) when the configuration has no `[plugin.NAME]`.
    package let table: TOMLTable
    /// Whether the configuration has a `[plugin.NAME]` table.
    public let isPresent: Bool
    /// The problems found so far, in the order found.
    public private(set) var diagnostics: [Diagnostic] = []
    private let keyPath: String
    private var read: Set<String> = []

    /// Wraps `table` (or an empty table at `fallback` when there is none, e.g. the rule that
    /// names the plugin) for plugin `name` of `file`.
    package init(
        name: String,
        table: TOMLTable?,
        file: String,
        fallback: SourceLocation = SourceLocation(line: 1, column: 1)
    ) {
        self.name = name
        self.file = file
        self.table = table ?? TOMLTable(location: fallback)
        self.isPresent = table != nil
        self.keyPath = "plugin." + Self.dotted(name)
    }

    private init(nested table: TOMLTable, of parent: PluginConfiguration, key: String) {
        name = parent.name
        file = parent.file
        self.table = table
        isPresent = true
        keyPath = parent.keyPath + "." + Self.dotted(key)
    }

    /// Where the table starts (its header), or the fallback location.
    public var location: SourceLocation { table.location }

    /// The value of `key`, marked as read; `nil` when absent.
    package mutating func value(_ key: String) -> TOMLValue? {
        read.insert(key)
        return table[key]
    }

    /// A string setting.
    public mutating func string(_ key: String, required: Bool = false) -> String? {
        guard let value = present(key, required: required, example: "\"…\"") else { return nil }
        guard let string = value.string else {
            return mismatch(key, value, "a string")
        }
        return string
    }

    /// An integer setting, optionally limited to `range`.
    public mutating func integer(_ key: String, in range: ClosedRange<Int64>? = nil, required: Bool = false) -> Int64? {
        guard let value = present(key, required: required, example: "0") else { return nil }
        guard let integer = value.integer else {
            return mismatch(key, value, "an integer")
        }
        if let range, !range.contains(integer) {
            error(
                "\(keyPath(key)) must be between \(range.lowerBound) and \(range.upperBound), found \(integer)",
                at: value.location
            )
            return nil
        }
        return integer
    }

    /// A boolean setting.
    public mutating func boolean(_ key: String, required: Bool = false) -> Bool? {
        guard let value = present(key, required: required, example: "true") else { return nil }
        guard let boolean = value.boolean else {
            return mismatch(key, value, "true or false")
        }
        return boolean
    }

    /// A duration setting written like the agent's (`"250ms"`, `"30s"`, `"1m30s"`); zero is refused.
    public mutating func duration(_ key: String, required: Bool = false) -> Duration? {
        guard let value = present(key, required: required, example: "\"5s\"") else { return nil }
        guard let text = value.string else {
            return mismatch(key, value, "a duration such as \"30s\" or \"1m30s\"")
        }
        do {
            let duration = try Duration(configuration: text)
            if duration == .zero {
                error("\(keyPath(key)) must be longer than zero, found \(TOMLValue.quoted(text))", at: value.location)
                return nil
            }
            return duration
        } catch {
            self.error("\(keyPath(key)): \(error)", at: value.location)
            return nil
        }
    }

    /// An array of strings.
    public mutating func strings(_ key: String, required: Bool = false) -> [String]? {
        guard let value = present(key, required: required, example: "[\"…\"]") else { return nil }
        guard let array = value.array else {
            return mismatch(key, value, "an array of strings")
        }
        var result: [String] = []
        for (i, element) in array.enumerated() {
            guard let string = element.string else {
                error("\(keyPath(key))[\(i)] must be a string, found \(element.summary)", at: element.location)
                continue
            }
            result.append(string)
        }
        return result
    }

    /// A nested table (`[plugin.NAME.KEY]` or `KEY = { … }`), read by `body` with the same rules;
    /// its problems and unknown keys are reported as this table's.
    public mutating func table(_ key: String, _ body: (inout PluginConfiguration) -> Void) {
        guard let value = present(key, required: false, example: "{ … }") else { return }
        guard let nested = value.table else {
            let _: Void? = mismatch(key, value, "a table")
            return
        }
        var reader = PluginConfiguration(nested: nested, of: self, key: key)
        body(&reader)
        reader.reportUnknownKeys()
        diagnostics += reader.diagnostics
    }

    /// Records a problem at `key`'s value, or at the table when `key` is `nil` or absent.
    public mutating func error(_ message: String, at key: String? = nil) {
        let location = key.flatMap { table[$0]?.location } ?? table.location
        error(message, at: location)
    }

    /// Records a problem at `location`.
    public mutating func error(_ message: String, at location: SourceLocation) {
        diagnostics.append(Diagnostic(file: file, at: location, message: message))
    }

    /// Reports keys never read as unknown, then throws every problem found.
    ///
    /// - Throws: `ConfigurationErrors` listing each problem as `FILE:LINE:COL: error: …`.
    public mutating func finish() throws(ConfigurationErrors) {
        reportUnknownKeys()
        guard diagnostics.isEmpty else { throw ConfigurationErrors(errors: diagnostics) }
    }

    /// `plugin.NAME.key`, as messages name a setting.
    public func keyPath(_ key: String) -> String { keyPath + "." + Self.dotted(key) }

    // MARK: - Internals

    private mutating func present(_ key: String, required: Bool, example: String) -> TOMLValue? {
        if let value = value(key) { return value }
        if required {
            let shown = "[\(keyPath)]"
            error(
                isPresent
                    ? "\(shown) needs \(key), e.g. \(key) = \(example)"
                    : "plugin \(TOMLValue.quoted(name)) needs a \(shown) table with \(key), e.g. \(key) = \(example)",
                at: table.location
            )
        }
        return nil
    }

    private mutating func mismatch<T>(_ key: String, _ value: TOMLValue, _ expected: String) -> T? {
        error("\(keyPath(key)) must be \(expected), found \(value.summary)", at: value.location)
        return nil
    }

    private mutating func reportUnknownKeys() {
        let known = read
        for entry in table.entries where !known.contains(entry.key) {
            let hint = Self.closest(to: entry.key, in: known.sorted()).map { "; did you mean \(TOMLValue.quoted($0))?" }
            let expected =
                known.isEmpty
                ? "; it takes no settings"
                : hint ?? "; expected one of \(known.sorted().map(TOMLValue.quoted).joined(separator: ", "))"
            error("unknown key \(TOMLValue.quoted(entry.key)) in [\(keyPath)]\(expected)", at: entry.keyLocation)
        }
        // Once reported, not again (finish() may follow a nested table's report).
        read.formUnion(table.keys)
    }

    /// `route-metrics` stays bare; a key that needs quoting is quoted, as TOML would write it.
    private static func dotted(_ key: String) -> String {
        let bare =
            !key.isEmpty
            && key.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-"
                    || $0 == "_"
            }
        return bare ? key : TOMLValue.quoted(key)
    }

    /// The candidate within one edit per three characters of `word` (a likely typo), if any.
    private static func closest(to word: String, in candidates: [String]) -> String? {
        let limit = max(1, word.count / 3)
        var best: (String, Int)?
        for candidate in candidates {
            let d = distance(Array(word.lowercased().unicodeScalars), Array(candidate.lowercased().unicodeScalars))
            if d <= limit, d < word.count, d < (best?.1 ?? .max) { best = (candidate, d) }
        }
        return best?.0
    }

    private static func distance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }

    // Two readings of one table are the same configuration: the read-tracking is not identity.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.name == rhs.name && lhs.file == rhs.file && lhs.table == rhs.table && lhs.isPresent == rhs.isPresent
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(table)
    }
}
