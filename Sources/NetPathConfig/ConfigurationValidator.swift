// SPDX-License-Identifier: Apache-2.0

import NetPathCore

/// Walks a parsed TOML document, building a ``Configuration`` and collecting every problem.
///
/// Each section parser reads what it can, reports what it cannot, and falls back to defaults,
/// so that one mistake never hides another.
struct ConfigurationValidator {
    let file: String
    let knownPlugins: Set<String>?
    /// Whether a group exists on this machine (`control_group`); `nil` skips that check.
    let groupExists: (@Sendable (String) -> Bool)?
    private(set) var errors: [Diagnostic] = []
    private(set) var warnings: [Diagnostic] = []
    /// Where each policy's `require_connectivity` is written, for the warning without `[connectivity]`.
    var requireConnectivityLocations: [(String, SourceLocation)] = []

    init(file: String, knownPlugins: Set<String>?, groupExists: (@Sendable (String) -> Bool)? = nil) {
        self.file = file
        self.knownPlugins = knownPlugins
        self.groupExists = groupExists
    }

    static let sections: [(key: String, shown: String)] = [
        ("agent", "[agent]"), ("hook_dir", "[[hook_dir]]"), ("interface", "[[interface]]"), ("policy", "[[policy]]"),
        ("rule", "[[rule]]"),
        ("connectivity", "[connectivity]"), ("plugin", "[plugin.NAME]"),
    ]

    mutating func validate(_ root: TOMLTable) -> Configuration {
        var configuration = Configuration()
        var ruleTables: [TOMLTable] = []
        var hookDirectoryTables: [TOMLTable] = []
        var connectivityLocation: SourceLocation?
        for entry in root.entries {
            switch entry.key {
            case "agent":
                if let table = requireTable(entry.value, key: "agent", shown: "[agent]") {
                    configuration.agent = agent(table)
                }
            case "hook_dir":
                hookDirectoryTables = tables(entry.value, key: "hook_dir")
            case "interface":
                configuration.interfaces = tables(entry.value, key: "interface").compactMap { interfaceOverride($0) }
            case "policy":
                configuration.policies = policies(tables(entry.value, key: "policy"))
            case "rule":
                ruleTables = tables(entry.value, key: "rule")
            case "connectivity":
                if let table = requireTable(entry.value, key: "connectivity", shown: "[connectivity]") {
                    configuration.connectivity = connectivity(table)
                    connectivityLocation = entry.keyLocation
                }
            case "plugin":
                configuration.plugins = pluginTables(entry.value)
            default:
                let suggestion = Suggestion.closest(to: entry.key, in: Self.sections.map(\.key))
                let shown = Self.sections.first { $0.key == suggestion }?.shown
                let what: String
                switch entry.value.kind {
                case .table: what = "unknown table [\(TOMLParser.dotted([entry.key]))]"
                case .array(let a) where !a.isEmpty && a.allSatisfy({ $0.table != nil }):
                    what = "unknown table [[\(TOMLParser.dotted([entry.key]))]]"
                default: what = "unknown key \(TOMLValue.quoted(entry.key)) at the top level"
                }
                if let shown {
                    error("\(what); did you mean \(shown)?", at: entry.keyLocation)
                } else {
                    let all = Self.sections.map(\.shown)
                    error(
                        "\(what); expected \(all.dropLast().joined(separator: ", ")) or \(all[all.count - 1])",
                        at: entry.keyLocation
                    )
                }
            }
        }
        // After [agent], wherever it is written: no table may list hooks_dir again.
        configuration.hookDirectories = hookDirectories(
            hookDirectoryTables,
            hooksDirectory: configuration.agent.hooksDirectory
        )
        if connectivityLocation == nil {
            for (policy, at) in requireConnectivityLocations {
                warning(
                    "policy \(TOMLValue.quoted(policy)) sets require_connectivity, but there is no [connectivity] table: nothing is probed, every interface stays \"unknown\" and the requirement never takes one out",
                    at: at
                )
            }
        }
        // Rules come last: they refer to policies, which may be written after them.
        configuration.rules = rules(ruleTables, policies: configuration.policies, plugins: configuration.plugins)
        return configuration
    }

    // MARK: - Reporting

    mutating func error(_ message: String, at location: SourceLocation) {
        errors.append(Diagnostic(file: file, at: location, message: message))
    }

    mutating func warning(_ message: String, at location: SourceLocation) {
        warnings.append(Diagnostic(file: file, at: location, severity: .warning, message: message))
    }

    /// A value as messages show it after "found": strings quoted, everything else with its type.
    static func found(_ value: TOMLValue) -> String {
        if let s = value.string { return TOMLValue.quoted(s) }
        return value.summary
    }

    static func list(_ names: [String]) -> String {
        names.map { TOMLValue.quoted($0) }.joined(separator: ", ")
    }

    // MARK: - Typed access

    /// Reports every key of `table` that is not in `allowed`, with a suggestion.
    mutating func checkKeys(_ table: TOMLTable, allowed: [String], in context: String) {
        for entry in table.entries where !allowed.contains(entry.key) {
            let suggestion = Suggestion.clause(for: entry.key, in: allowed)
            let hint = suggestion.isEmpty ? "; expected one of \(Self.list(allowed))" : suggestion
            error("unknown key \(TOMLValue.quoted(entry.key)) in \(context)\(hint)", at: entry.keyLocation)
        }
    }

    mutating func requireTable(_ value: TOMLValue, key: String, shown: String) -> TOMLTable? {
        guard let table = value.table else {
            error("\(key) must be a table written \(shown), found \(value.summary)", at: value.location)
            return nil
        }
        return table
    }

    /// The elements of an array of tables (`[[key]]`, or an array of inline tables).
    mutating func tables(_ value: TOMLValue, key: String) -> [TOMLTable] {
        guard let elements = value.array else {
            error("\(key) must be an array of tables written [[\(key)]], found \(value.summary)", at: value.location)
            return []
        }
        var result: [TOMLTable] = []
        for (i, element) in elements.enumerated() {
            if let table = element.table {
                result.append(table)
            } else {
                error("\(key)[\(i)] must be a table, found \(element.summary)", at: element.location)
            }
        }
        return result
    }

    mutating func string(_ table: TOMLTable, _ key: String) -> (String, SourceLocation)? {
        guard let value = table[key] else { return nil }
        guard let s = value.string else {
            error("\(key) must be a string, found \(value.summary)", at: value.location)
            return nil
        }
        return (s, value.location)
    }

    mutating func bool(_ table: TOMLTable, _ key: String) -> Bool? {
        guard let value = table[key] else { return nil }
        guard let b = value.boolean else {
            error("\(key) must be true or false, found \(Self.found(value))", at: value.location)
            return nil
        }
        return b
    }

    /// An integer within `range`.
    mutating func integer(_ table: TOMLTable, _ key: String, in range: ClosedRange<Int>) -> Int? {
        guard let value = table[key] else { return nil }
        guard let number = value.integer, let int = Int(exactly: number), range.contains(int) else {
            error(
                "\(key) must be an integer from \(range.lowerBound) to \(range.upperBound), found \(Self.found(value))",
                at: value.location
            )
            return nil
        }
        return int
    }

    /// A required, non-empty name.
    mutating func name(_ table: TOMLTable, section: String) -> (String, SourceLocation)? {
        guard table["name"] != nil else {
            error("\(section) is missing the required key \"name\"", at: table.location)
            return nil
        }
        guard let (name, at) = string(table, "name") else { return nil }
        guard !name.trimmingSpaces.isEmpty else {
            error("name must not be empty", at: at)
            return nil
        }
        return (name, at)
    }

    // The longest durations accepted. Past these a value is a slip ("30h" for "30s", a stray
    // digit), not a choice, and accepting it would hide the mistake until the day it mattered:
    // a hook allowed to hang for years, or path events held back for a week. They also keep
    // every deadline computed from a duration (now + timeout) far from overflowing.
    /// A hook or rule timeout: a hook is a short task, and one still running after a day is stuck.
    static let maximumTimeout = Duration.seconds(24 * 3600)
    /// settle: it absorbs a link flapping for seconds or minutes; events held back for more than
    /// an hour arrive too late for anything to act on them.
    static let maximumSettle = Duration.seconds(3600)

    mutating func duration(_ table: TOMLTable, _ key: String, allowZero: Bool, maximum: Duration) -> Duration? {
        guard let value = table[key] else { return nil }
        guard let text = value.string else {
            error("\(key) must be a duration such as \"30s\" or \"1m30s\", found \(value.summary)", at: value.location)
            return nil
        }
        do {
            let duration = try Duration(configuration: text)
            if !allowZero && duration == .zero {
                error("\(key) must be longer than zero, found \(TOMLValue.quoted(text))", at: value.location)
                return nil
            }
            guard duration <= maximum else {
                error(
                    "\(key) must be at most \(TOMLValue.quoted(maximum.configurationText)), found \(TOMLValue.quoted(text))",
                    at: value.location
                )
                return nil
            }
            return duration
        } catch {
            self.error("\(key): \(error.description)", at: value.location)
            return nil
        }
    }

    /// An array of strings; reports non-strings and returns the strings with their locations.
    mutating func strings(_ table: TOMLTable, _ key: String, example: String) -> [(String, SourceLocation)]? {
        guard let value = table[key] else { return nil }
        guard let elements = value.array else {
            error("\(key) must be an array of strings such as \(example), found \(value.summary)", at: value.location)
            return nil
        }
        var result: [(String, SourceLocation)] = []
        for (i, element) in elements.enumerated() {
            if let s = element.string {
                result.append((s, element.location))
            } else {
                error("\(key)[\(i)] must be a string, found \(element.summary)", at: element.location)
            }
        }
        return result
    }

    /// An array of interface type names, each checked, with duplicates reported.
    mutating func interfaceTypes(_ table: TOMLTable, _ key: String) -> [(InterfaceType, SourceLocation)] {
        guard let names = strings(table, key, example: "[\"wired\", \"wifi\"]") else { return [] }
        var result: [(InterfaceType, SourceLocation)] = []
        for (name, at) in names {
            guard let type = interfaceType(name, at: at, in: key) else { continue }
            if result.contains(where: { $0.0 == type }) {
                error("\(TOMLValue.quoted(name)) is listed twice in \(key)", at: at)
                continue
            }
            result.append((type, at))
        }
        return result
    }

    mutating func interfaceType(_ name: String, at location: SourceLocation, in key: String) -> InterfaceType? {
        if let type = InterfaceType(rawValue: name) { return type }
        let all = InterfaceType.allCases.map(\.rawValue)
        let suggestion = Suggestion.clause(for: name, in: all)
        let hint = suggestion.isEmpty ? "; expected one of \(Self.list(all))" : suggestion
        error("unknown interface type \(TOMLValue.quoted(name)) in \(key)\(hint)", at: location)
        return nil
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs.
    var trimmingSpaces: Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let start = firstIndex(where: { !isSpace($0) }) else { return "" }
        let end = lastIndex(where: { !isSpace($0) }) ?? start
        return self[start...end]
    }
}
