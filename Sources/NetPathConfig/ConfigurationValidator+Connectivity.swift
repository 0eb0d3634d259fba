// SPDX-License-Identifier: Apache-2.0

import NetPathCore

// [connectivity] and a policy's require_connectivity.
extension ConfigurationValidator {
    static let connectivityKeys = [
        "method", "interval", "timeout", "interfaces", "uri", "response", "hosts", "reliability", "count", "up", "down",
        "max_rtt", "max_loss",
    ]
    static let httpOnlyKeys = ["uri", "response"]
    static let icmpOnlyKeys = ["hosts", "reliability", "count"]

    /// The longest `interval`: a day. A dead upstream must be seen within `down` intervals.
    static let maximumProbeInterval = Duration.seconds(24 * 3600)
    /// The shortest `interval`: a probe a second per interface is the most a link should carry.
    static let minimumProbeInterval = Duration.seconds(1)
    /// The longest `timeout`: past a minute no one is waiting for the answer.
    static let maximumProbeTimeout = Duration.seconds(60)
    /// The longest expected body: a few lines such as "NetworkManager is online".
    static let maximumResponseBytes = 1024
    /// The most `hosts`, `count` per host and `up`/`down`: past these a value is a slip.
    static let maximumHosts = 16
    static let probeCountRange = 1...20
    static let hysteresisRange = 1...100

    mutating func connectivity(_ table: TOMLTable) -> ConnectivitySettings? {
        checkKeys(table, allowed: Self.connectivityKeys, in: "[connectivity]")
        var settings = ConnectivitySettings()
        var isICMP = false
        if let value = table["method"] {
            switch value.string {
            case "http": isICMP = false
            case "icmp": isICMP = true
            default:
                let suggestion = value.string.map { Suggestion.clause(for: $0, in: ["http", "icmp"]) } ?? ""
                error(
                    "method must be \"http\" or \"icmp\", found \(Self.found(value))\(suggestion)",
                    at: value.location
                )
            }
        }
        // The other method's keys are a mistake, not a no-op: say so where they are written.
        let method = isICMP ? "icmp" : "http"
        for key in isICMP ? Self.httpOnlyKeys : Self.icmpOnlyKeys {
            if let entry = table.entry(key) {
                error(
                    "\(key) applies to method = \"\(isICMP ? "http" : "icmp")\", but method is \"\(method)\"",
                    at: entry.keyLocation
                )
            }
        }
        if let interval = duration(table, "interval", allowZero: false, maximum: Self.maximumProbeInterval) {
            if interval < Self.minimumProbeInterval {
                let at = table["interval"]?.location ?? table.location
                error("interval must be at least \"1s\", found \(TOMLValue.quoted(interval.configurationText))", at: at)
            } else {
                settings.interval = interval
            }
        }
        if let timeout = duration(table, "timeout", allowZero: false, maximum: Self.maximumProbeTimeout) {
            settings.timeout = timeout
        }
        if settings.timeout > settings.interval, let value = table["timeout"] ?? table["interval"] {
            error(
                "timeout (\(TOMLValue.quoted(settings.timeout.configurationText))) must not be longer than interval (\(TOMLValue.quoted(settings.interval.configurationText)))",
                at: value.location
            )
        }
        if let names = strings(table, "interfaces", example: "[\"eth*\", \"wwan0\"]") {
            settings.interfaces = names.compactMap { glob($0.0, key: "interfaces", at: $0.1) }
        }
        if let up = integer(table, "up", in: Self.hysteresisRange) { settings.up = up }
        if let down = integer(table, "down", in: Self.hysteresisRange) { settings.down = down }
        if let maxRTT = duration(table, "max_rtt", allowZero: false, maximum: Self.maximumProbeTimeout) {
            if maxRTT > settings.timeout, let value = table["max_rtt"] {
                error(
                    "max_rtt (\(TOMLValue.quoted(maxRTT.configurationText))) must not be longer than timeout (\(TOMLValue.quoted(settings.timeout.configurationText))): no answer could exceed it",
                    at: value.location
                )
            } else {
                settings.maxRoundTrip = maxRTT
            }
        }
        if let value = table["max_loss"] {
            let number: Double? =
                switch value.kind {
                case .float(let d): d
                case .integer(let i): Double(i)
                default: nil
                }
            if let number, number >= 0, number < 1 {
                settings.maxLoss = number
            } else {
                error(
                    "max_loss must be a fraction from 0 up to (not including) 1 such as 0.2, found \(Self.found(value))",
                    at: value.location
                )
            }
        }
        settings.method = isICMP ? icmpMethod(table) : httpMethod(table)
        return settings
    }

    private mutating func httpMethod(_ table: TOMLTable) -> ProbeMethod {
        var uri = ConnectivitySettings.defaultURI
        if let (text, at) = string(table, "uri") {
            if Self.isHTTPURI(text) {
                uri = text
            } else {
                error(
                    "uri must be an http:// or https:// URL without spaces such as \"http://connectivity-check.ubuntu.com/\", found \(TOMLValue.quoted(text))",
                    at: at
                )
            }
        }
        var response = ""
        if let (text, at) = string(table, "response") {
            if text.utf8.count > Self.maximumResponseBytes || text.containsControlCharacters {
                error(
                    "response must be a short line of text (at most \(Self.maximumResponseBytes) bytes, no control characters), found \(TOMLValue.quoted(String(text.prefix(40))))\(text.count > 40 ? "…" : "")",
                    at: at
                )
            } else {
                response = text
            }
        }
        return .http(uri: uri, response: response)
    }

    private mutating func icmpMethod(_ table: TOMLTable) -> ProbeMethod {
        var hosts = ConnectivitySettings.defaultHosts
        if let value = table["hosts"], let entries = strings(table, "hosts", example: "[\"1.1.1.1\", \"9.9.9.9\"]") {
            if entries.isEmpty {
                error("hosts must list at least one host name or IP address", at: value.location)
            } else if entries.count > Self.maximumHosts {
                error("hosts lists \(entries.count) hosts; at most \(Self.maximumHosts)", at: value.location)
            } else {
                var valid: [String] = []
                for (host, at) in entries {
                    if Self.isHost(host) {
                        valid.append(host)
                    } else {
                        error(
                            "hosts: each must be a host name or an IP address, found \(TOMLValue.quoted(host))",
                            at: at
                        )
                    }
                }
                if valid.count == entries.count { hosts = valid }
            }
        }
        let count = integer(table, "count", in: Self.probeCountRange) ?? 1
        var reliability = 1
        if let value = table["reliability"], let number = integer(table, "reliability", in: 1...Self.maximumHosts) {
            if number > hosts.count {
                error(
                    "reliability is \(number), but hosts lists only \(hosts.count): no probe could ever succeed",
                    at: value.location
                )
            } else {
                reliability = number
            }
        }
        return .icmp(hosts: hosts, count: count, reliability: reliability)
    }

    static func isHTTPURI(_ text: String) -> Bool {
        let lower = text.lowercased()
        guard let scheme = ["http://", "https://"].first(where: { lower.hasPrefix($0) }) else { return false }
        return text.count > scheme.count && !text.containsControlCharacters
            && !text.contains(where: { $0 == " " || $0 == "\t" })
    }

    static func isHost(_ text: String) -> Bool {
        if IPAddress(text) != nil { return true }
        guard !text.isEmpty, text.utf8.count <= 253 else { return false }
        return text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") }
    }

    /// `require_connectivity`: `"full"` or `"portal"`.
    mutating func requireConnectivity(_ table: TOMLTable) -> Connectivity? {
        guard let value = table["require_connectivity"] else { return nil }
        if let text = value.string, text == "full" || text == "portal" {
            return Connectivity(rawValue: text)
        }
        let suggestion = value.string.map { Suggestion.clause(for: $0, in: ["full", "portal"]) } ?? ""
        error(
            "require_connectivity must be \"full\" or \"portal\", found \(Self.found(value))\(suggestion)",
            at: value.location
        )
        return nil
    }
}
