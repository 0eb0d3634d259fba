// SPDX-License-Identifier: Apache-2.0

import NetPathCore

// [[rule]]
extension ConfigurationValidator {
    static let ruleKeys = [
        "name", "on", "policy", "interface", "type", "metered", "connectivity", "run", "plugins", "timeout",
    ]

    mutating func rules(_ tables: [TOMLTable], policies: [PathPolicy], plugins: [String: TOMLTable]) -> [Rule] {
        var result: [Rule] = []
        var seen: [String: SourceLocation] = [:]
        for table in tables {
            guard let rule = rule(table, policies: policies) else { continue }
            if let at = table.entry("name")?.value.location {
                if let first = seen[rule.name] {
                    error("duplicate rule name \(TOMLValue.quoted(rule.name)); first defined at \(first)", at: at)
                    continue
                }
                seen[rule.name] = at
            }
            result.append(rule)
        }
        if !tables.isEmpty {
            let named = Set(result.flatMap(\.plugins))
            for (name, settings) in plugins.sorted(by: { $0.key < $1.key }) where !named.contains(name) {
                warning(
                    "[plugin.\(TOMLParser.dotted([name]))] is configured, but no rule lists \(TOMLValue.quoted(name)) in plugins, so it receives no events",
                    at: settings.location
                )
            }
        }
        return result
    }

    private mutating func rule(_ table: TOMLTable, policies: [PathPolicy]) -> Rule? {
        checkKeys(table, allowed: Self.ruleKeys, in: "[[rule]]")
        let name = name(table, section: "[[rule]]")
        var rule = Rule(name: name?.0 ?? "", location: table.location)

        var onIsExplicit = false
        if let events = strings(table, "on", example: "[\"up\", \"down\"]"), let value = table["on"] {
            onIsExplicit = true
            if events.isEmpty && value.array?.isEmpty == true {
                error(
                    "on = [] matches no event; list event names, or remove \"on\" to match every event",
                    at: value.location
                )
            }
            rule.on = []
            for (text, at) in events {
                guard let event = Event.Name(rawValue: text) else {
                    let all = Event.Name.allCases.map(\.rawValue)
                    let suggestion = Suggestion.clause(for: text, in: all)
                    let hint = suggestion.isEmpty ? "; expected one of \(Self.list(all))" : suggestion
                    error("unknown event \(TOMLValue.quoted(text)) in on\(hint)", at: at)
                    continue
                }
                if rule.on.contains(event) {
                    error("\(TOMLValue.quoted(text)) is listed twice in on", at: at)
                    continue
                }
                rule.on.append(event)
            }
        }
        let pathOnly = onIsExplicit && !rule.on.isEmpty && rule.on.allSatisfy { !$0.scopes.contains(.interface) }
        let interfaceOnly = onIsExplicit && !rule.on.isEmpty && rule.on.allSatisfy { !$0.scopes.contains(.path) }

        if let (policy, at) = string(table, "policy") {
            if policies.contains(where: { $0.name == policy }) {
                rule.policy = policy
                if interfaceOnly {
                    error(
                        "policy filters path events, but this rule fires only on interface events (\(Self.list(rule.on.map(\.rawValue)))); remove policy or add a path event",
                        at: at
                    )
                }
            } else {
                let names = policies.map(\.name)
                let suggestion = Suggestion.clause(for: policy, in: names)
                let hint = suggestion.isEmpty ? "; defined policies: \(Self.list(names))" : suggestion
                error("policy \(TOMLValue.quoted(policy)) is not defined\(hint)", at: at)
            }
        }
        if let (pattern, at) = string(table, "interface") {
            rule.interface = glob(pattern, key: "interface", at: at)
        }
        let types = interfaceTypes(table, "type")
        rule.type = types.map(\.0)
        rule.metered = bool(table, "metered")
        if let states = strings(table, "connectivity", example: "[\"portal\", \"full\"]") {
            let all = Connectivity.allCases.map(\.rawValue)
            for (text, at) in states {
                guard let state = Connectivity(rawValue: text) else {
                    let suggestion = Suggestion.clause(for: text, in: all)
                    let hint = suggestion.isEmpty ? "; expected one of \(Self.list(all))" : suggestion
                    error("unknown connectivity \(TOMLValue.quoted(text)) in connectivity\(hint)", at: at)
                    continue
                }
                if rule.connectivity.contains(state) {
                    error("\(TOMLValue.quoted(text)) is listed twice in connectivity", at: at)
                    continue
                }
                rule.connectivity.append(state)
            }
        }

        // A path without a primary interface has no name or type to match: warn when the rule
        // can fire only on path events, one of which is "unsatisfied".
        if pathOnly && rule.on.contains(.unsatisfied) {
            if let glob = rule.interface, !glob.matches(""), let at = table["interface"]?.location {
                warning(
                    "interface \(TOMLValue.quoted(glob.pattern)) never matches \"unsatisfied\": an unsatisfied path has no primary interface",
                    at: at
                )
            } else if !rule.type.isEmpty, let at = table["type"]?.location {
                warning("type never matches \"unsatisfied\": an unsatisfied path has no primary interface", at: at)
            }
        }

        if let hooks = strings(table, "run", example: "[\"50-backups\"]") {
            rule.run = []
            for (hook, at) in hooks {
                if hook.isEmpty || hook.contains("/") || hook == "." || hook == ".." {
                    error(
                        "run lists hooks by file name (in hooks_dir or a [[hook_dir]]), found \(TOMLValue.quoted(hook))",
                        at: at
                    )
                } else {
                    rule.run?.append(hook)
                }
            }
        }
        if let plugins = strings(table, "plugins", example: "[\"event-log\"]") {
            for (plugin, at) in plugins {
                if let knownPlugins, !knownPlugins.contains(plugin) {
                    error("unknown plugin \(TOMLValue.quoted(plugin))\(Self.pluginHint(plugin, knownPlugins))", at: at)
                } else if rule.plugins.contains(plugin) {
                    error("\(TOMLValue.quoted(plugin)) is listed twice in plugins", at: at)
                } else {
                    rule.plugins.append(plugin)
                }
            }
        }
        rule.timeout = duration(table, "timeout", allowZero: false, maximum: Self.maximumTimeout)
        if rule.run?.isEmpty == true && rule.plugins.isEmpty && table["run"]?.array?.isEmpty == true {
            warning(
                "rule \(TOMLValue.quoted(rule.name)) runs no hook and no plugin (run = [] and no plugins)",
                at: table.location
            )
        }
        guard name != nil else { return nil }
        return rule
    }
}
