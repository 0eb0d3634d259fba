// SPDX-License-Identifier: Apache-2.0

import NetPathCore

// [agent], [[interface]], [[policy]] and [plugin.NAME].
extension ConfigurationValidator {
    static let agentKeys = [
        "hooks_dir", "hook_timeout", "max_running_hooks", "settle", "startup_events", "control_socket",
        "control_group", "metrics", "ignore",
    ]

    /// The range of `max_running_hooks`: more than a thousand hooks starting at once is a typo.
    static let maxRunningHooksRange = 1...1024

    mutating func agent(_ table: TOMLTable) -> Configuration.Agent {
        checkKeys(table, allowed: Self.agentKeys, in: "[agent]")
        var agent = Configuration.Agent()
        if let (dir, at) = string(table, "hooks_dir") {
            if absolutePath(dir, key: "hooks_dir", at: at) { agent.hooksDirectory = dir }
        }
        if let timeout = duration(table, "hook_timeout", allowZero: false, maximum: Self.maximumTimeout) {
            agent.hookTimeout = timeout
        }
        if let limit = integer(table, "max_running_hooks", in: Self.maxRunningHooksRange) {
            agent.maxRunningHooks = limit
        }
        if let settle = duration(table, "settle", allowZero: true, maximum: Self.maximumSettle) {
            agent.settle = settle
        }
        if let startup = bool(table, "startup_events") { agent.startupEvents = startup }
        if let (socket, at) = string(table, "control_socket") {
            if absolutePath(socket, key: "control_socket", at: at) { agent.controlSocket = socket }
        }
        if let (group, at) = string(table, "control_group") {
            agent.controlGroup = controlGroup(group, at: at)
        }
        if let (metrics, at) = string(table, "metrics") {
            if metrics.isEmpty || Self.isHostPort(metrics) {
                if let problem = Self.metricsHostProblem(metrics) {
                    error(problem, at: at)
                } else {
                    agent.metrics = metrics
                }
            } else {
                error(
                    "metrics must be empty or HOST:PORT such as \"127.0.0.1:9479\", found \(TOMLValue.quoted(metrics))",
                    at: at
                )
            }
        }
        if let entries = strings(table, "ignore", example: "[\"veth*\", \"kind:vxlan\"]") {
            agent.ignore = ignoreEntries(entries)
        }
        return agent
    }

    /// `ignore`: name globs, `kind:KIND` and `udev:PROPERTY=VALUE`, each once.
    private mutating func ignoreEntries(_ entries: [(String, SourceLocation)]) -> [LinkIgnoreList.Entry] {
        var result: [LinkIgnoreList.Entry] = []
        for (text, at) in entries {
            do {
                let entry = try LinkIgnoreList.Entry(parsing: text)
                if result.contains(entry) {
                    error("\(TOMLValue.quoted(text)) is listed twice in ignore", at: at)
                    continue
                }
                result.append(entry)
            } catch {
                self.error("ignore: \(TOMLValue.quoted(text)): \(error.message)", at: at)
            }
        }
        return result
    }

    /// `control_group`: "" is none; a name must exist here, when validation may ask the machine.
    ///
    /// The agent gives the control socket to this group when it starts, and refuses to start
    /// without it: so a group missing on this machine is an error now, in `check-config` as at
    /// start, not a surprise later.
    private mutating func controlGroup(_ name: String, at location: SourceLocation) -> String? {
        if name.isEmpty { return nil }
        // ':' separates /etc/group's fields and ',' its members: no group can be called so.
        guard !name.containsControlCharacters, !name.contains(where: { $0 == ":" || $0 == "," }) else {
            error(
                "control_group must be a group name such as \"netpath\", found \(TOMLValue.quoted(name))",
                at: location
            )
            return nil
        }
        if let groupExists, !groupExists(name) {
            error(
                "control_group: no group named \(TOMLValue.quoted(name)) on this machine; create it (groupadd --system \(name)) or remove control_group",
                at: location
            )
            return nil
        }
        return name
    }

    private mutating func absolutePath(_ path: String, key: String, at location: SourceLocation) -> Bool {
        guard path.hasPrefix("/") else {
            error("\(key) must be an absolute path, found \(TOMLValue.quoted(path))", at: location)
            return false
        }
        return true
    }

    /// Why netpathd could not listen on `address` (already `HOST:PORT`), or `nil` when it can.
    ///
    /// The agent binds the host as a numeric address (`AI_NUMERICHOST`): it starts before name
    /// resolution may work, and a name that resolves to several addresses would listen on one
    /// of them by chance. So a name is refused here, where `check-config` sees it too, instead
    /// of passing the check and then failing the start.
    static func metricsHostProblem(_ address: String) -> String? {
        guard let colon = address.lastIndex(of: ":") else { return nil }
        let host = address[..<colon]
        let port = address[address.index(after: colon)...]
        if host.isEmpty { return nil }
        // A zone (`%eth0`) is the name of an interface that may not exist when netpathd starts.
        if host.hasPrefix("["), !host.contains("%") {
            if let ip = IPAddress(host.dropFirst().dropLast()), ip.family == .ipv6 { return nil }
            return
                "metrics host must be an IPv6 address in brackets such as \"[::1]:\(port)\", found \(TOMLValue.quoted(address))"
        }
        if let ip = IPAddress(host), ip.family == .ipv4 { return nil }
        let example = host == "localhost" ? "\"127.0.0.1:\(port)\" or \"[::1]:\(port)\"" : "\"127.0.0.1:\(port)\""
        return
            "metrics host must be an IP address, not a name (netpathd does not resolve it), found \(TOMLValue.quoted(address)); use \(example)"
    }

    /// `host:port`, `[v6]:port` or `:port`, with a port from 1 to 65535.
    static func isHostPort(_ text: String) -> Bool {
        guard let colon = text.lastIndex(of: ":") else { return false }
        let host = text[..<colon]
        guard let port = Int(text[text.index(after: colon)...]), (1...65535).contains(port) else { return false }
        if host.hasPrefix("[") { return host.hasSuffix("]") && host.count > 2 }
        return !host.contains(":") && !host.contains(" ")
    }

    // MARK: - [[interface]]

    static let interfaceKeys = ["match", "type", "metered", "constrained"]

    mutating func interfaceOverride(_ table: TOMLTable) -> InterfaceOverride? {
        checkKeys(table, allowed: Self.interfaceKeys, in: "[[interface]]")
        let match: Glob?
        if table["match"] == nil {
            error(
                "[[interface]] is missing the required key \"match\" (an interface name glob such as \"wwan*\")",
                at: table.location
            )
            match = nil
        } else if let (pattern, at) = string(table, "match") {
            match = glob(pattern, key: "match", at: at)
        } else {
            match = nil
        }
        var type: InterfaceType?
        if let (name, at) = string(table, "type") { type = interfaceType(name, at: at, in: "type") }
        let metered = bool(table, "metered")
        let constrained = bool(table, "constrained")
        guard let match else { return nil }
        return InterfaceOverride(match: match, type: type, metered: metered, constrained: constrained)
    }

    mutating func glob(_ pattern: String, key: String, at location: SourceLocation) -> Glob? {
        guard !pattern.isEmpty else {
            error("\(key) must be a name glob such as \"eth*\", found \"\"", at: location)
            return nil
        }
        do {
            return try Glob(pattern)
        } catch {
            self.error(
                "\(key) must be a valid name glob, found \(TOMLValue.quoted(pattern)): \(error.message)",
                at: location
            )
            return nil
        }
    }

    // MARK: - [[policy]]

    static let policyKeys = ["name", "require", "prohibit", "metered", "prefer", "target", "require_connectivity"]

    mutating func policies(_ tables: [TOMLTable]) -> [PathPolicy] {
        var result: [PathPolicy] = []
        var seen: [String: SourceLocation] = [:]
        for table in tables {
            guard let policy = policy(table) else { continue }
            if let at = table.entry("name")?.value.location {
                if let first = seen[policy.name] {
                    error("duplicate policy name \(TOMLValue.quoted(policy.name)); first defined at \(first)", at: at)
                    continue
                }
                seen[policy.name] = at
            }
            result.append(policy)
        }
        return result
    }

    private mutating func policy(_ table: TOMLTable) -> PathPolicy? {
        checkKeys(table, allowed: Self.policyKeys, in: "[[policy]]")
        let name = name(table, section: "[[policy]]")
        let require = interfaceTypes(table, "require")
        let prohibit = interfaceTypes(table, "prohibit")
        let prefer = interfaceTypes(table, "prefer")
        for (type, at) in prohibit where require.contains(where: { $0.0 == type }) {
            error("type \(TOMLValue.quoted(type.rawValue)) is both required and prohibited", at: at)
        }
        for (type, at) in prefer {
            if prohibit.contains(where: { $0.0 == type }) {
                error("prefer names \(TOMLValue.quoted(type.rawValue)), which this policy prohibits", at: at)
            } else if !require.isEmpty && !require.contains(where: { $0.0 == type }) {
                error(
                    "prefer names \(TOMLValue.quoted(type.rawValue)), which is not in require [\(Self.list(require.map(\.0.rawValue)))]",
                    at: at
                )
            }
        }
        var metered = PathPolicy.MeteredMode.allow
        if let value = table["metered"] {
            let all = PathPolicy.MeteredMode.allCases.map(\.rawValue)
            if let text = value.string, let mode = PathPolicy.MeteredMode(rawValue: text) {
                metered = mode
            } else {
                let suggestion = value.string.map { Suggestion.clause(for: $0, in: all) } ?? ""
                error(
                    "metered must be one of \(Self.list(all)), found \(Self.found(value))\(suggestion)",
                    at: value.location
                )
            }
        }
        var target: String?
        if let (text, at) = string(table, "target") {
            if text.contains(where: { $0 == " " || $0 == "\t" || $0 == "/" }) {
                error("target must be a host name or an IP address, found \(TOMLValue.quoted(text))", at: at)
            } else {
                target = text
            }
        }
        let requireConnectivity = requireConnectivity(table)
        guard let (name, _) = name else { return nil }
        if requireConnectivity != nil, let at = table["require_connectivity"]?.location {
            requireConnectivityLocations.append((name, at))
        }
        return PathPolicy(
            name: name,
            require: require.map(\.0),
            prohibit: prohibit.map(\.0),
            metered: metered,
            prefer: prefer.map(\.0),
            target: target,
            requireConnectivity: requireConnectivity
        )
    }

    // MARK: - [plugin.NAME]

    mutating func pluginTables(_ value: TOMLValue) -> [String: TOMLTable] {
        guard let table = requireTable(value, key: "plugin", shown: "[plugin.NAME]") else { return [:] }
        var result: [String: TOMLTable] = [:]
        for entry in table.entries {
            let shown = "[plugin.\(TOMLParser.dotted([entry.key]))]"
            guard let settings = entry.value.table else {
                error(
                    "plugin.\(TOMLParser.dotted([entry.key])) must be a table written \(shown), found \(entry.value.summary)",
                    at: entry.value.location
                )
                continue
            }
            if let knownPlugins, !knownPlugins.contains(entry.key) {
                error(
                    "unknown plugin \(TOMLValue.quoted(entry.key))\(Self.pluginHint(entry.key, knownPlugins))",
                    at: entry.keyLocation
                )
                continue
            }
            result[entry.key] = settings
        }
        return result
    }

    static func pluginHint(_ name: String, _ known: Set<String>) -> String {
        let suggestion = Suggestion.clause(for: name, in: known.sorted())
        if !suggestion.isEmpty { return suggestion }
        return known.isEmpty ? "; no plugins are available" : "; available plugins: \(list(known.sorted()))"
    }
}
