// SPDX-License-Identifier: Apache-2.0

import NetPathCore

/// What `netpathctl wait-online` waits for, judged against the agent's `status` document.
///
/// Online means, by default, that some policy's path is satisfied (``NetworkPath/isOnline(requiring:)``,
/// the library's definition too); every option narrows it:
/// - ``policies``: all of these must be online (one of them, with ``any``);
/// - ``connectivity``: the counted paths must also have a probe's verdict of at least this;
/// - ``ipv4``, ``ipv6``, ``dns``: the counted paths must also carry IPv4, IPv6, DNS (both
///   families when both are asked for);
/// - ``interfaces`` and ``operationalState``, systemd-networkd-wait-online's `-i` and `-o`: the
///   named interfaces must all be within their operational-state range (one of them, with
///   ``any``); with `-o` and no `-i`, at least one interface that is not loopback and not
///   ``ignored`` must be, as networkd's "at least one link online". ``ipv4`` and ``ipv6`` then
///   also ask each counted interface for a usable address of the family.
///
/// ```swift
/// var condition = OnlineCondition()
/// condition.connectivity = .full
/// if case .waiting(let reason) = condition.evaluate(status) { print("not yet: \(reason)") }
/// ```
package struct OnlineCondition: Sendable, Equatable {
    /// An operational-state range, `MIN[:MAX]` as networkctl(1) names the states.
    package struct OperationalRange: Sendable, Equatable, CustomStringConvertible {
        package var minimum: NetworkdState.Operational
        package var maximum: NetworkdState.Operational

        /// systemd-networkd-wait-online's default: `degraded` up to `routable`.
        package static let standard = Self(minimum: .degraded, maximum: .routable)

        package init(minimum: NetworkdState.Operational, maximum: NetworkdState.Operational = .routable) {
            self.minimum = minimum
            self.maximum = maximum
        }

        /// Parses `MIN` or `MIN:MAX`; the error names what was expected.
        package init(parsing text: Substring) throws(OnlineCondition.SyntaxError) {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count <= 2 else {
                throw .tooManyStates(text: String(text))
            }
            minimum = try Self.state(parts[0])
            maximum = parts.count == 2 ? try Self.state(parts[1]) : .routable
            guard minimum <= maximum else {
                throw .minimumAboveMaximum(text: String(text), minimum: minimum, maximum: maximum)
            }
        }

        private static func state(_ text: Substring) throws(OnlineCondition.SyntaxError) -> NetworkdState.Operational {
            guard let state = NetworkdState.Operational(rawValue: String(text)) else {
                throw .unknownState(String(text))
            }
            return state
        }

        package func contains(_ state: NetworkdState.Operational) -> Bool { minimum <= state && state <= maximum }

        /// `degraded:routable`.
        package var description: String { "\(minimum.rawValue):\(maximum.rawValue)" }
    }

    /// One `-i IFACE[:MIN[:MAX]]`.
    package struct InterfaceRequirement: Sendable, Equatable {
        package var name: String
        /// Its own range; `nil` takes ``OnlineCondition/operationalState``, else the standard one.
        package var range: OperationalRange?

        package init(name: String, range: OperationalRange? = nil) {
            self.name = name
            self.range = range
        }

        /// Parses `IFACE`, `IFACE:MIN` or `IFACE:MIN:MAX`.
        package init(parsing text: String) throws(OnlineCondition.SyntaxError) {
            guard let colon = text.firstIndex(of: ":") else {
                guard !text.isEmpty else { throw .emptyInterfaceName }
                self.init(name: text)
                return
            }
            let name = String(text[..<colon])
            guard !name.isEmpty else { throw .rangeWithoutName(text: text) }
            self.init(name: name, range: try OperationalRange(parsing: text[text.index(after: colon)...]))
        }
    }

    /// A malformed option value: what was wrong, with the text given.
    package enum SyntaxError: Error, Equatable, CustomStringConvertible {
        /// `MIN[:MAX]` with more than two states.
        case tooManyStates(text: String)
        /// `MIN:MAX` with `MIN` above `MAX`.
        case minimumAboveMaximum(text: String, minimum: NetworkdState.Operational, maximum: NetworkdState.Operational)
        /// A word that is no operational state.
        case unknownState(String)
        /// `-i ""`.
        case emptyInterfaceName
        /// `-i :MIN[:MAX]`: a range without the interface's name.
        case rangeWithoutName(text: String)

        package var description: String {
            switch self {
            case .tooManyStates(let text):
                return "\"\(text)\": expected MIN[:MAX], two operational states at most"
            case .minimumAboveMaximum(let text, let minimum, let maximum):
                return "\"\(text)\": the minimum \(minimum.rawValue) is above the maximum \(maximum.rawValue)"
            case .unknownState(let text):
                let names = NetworkdState.Operational.allCases.map(\.rawValue).joined(separator: ", ")
                return "\"\(text)\" is not an operational state; expected one of \(names)"
            case .emptyInterfaceName:
                return "an empty interface name"
            case .rangeWithoutName(let text):
                return "\"\(text)\": expected IFACE[:MIN[:MAX]], the name is empty"
            }
        }
    }

    /// What the condition says of one status document.
    package enum Verdict: Equatable, Sendable {
        /// Online; the text says through what ("default via eth0 (wired)").
        case online(String)
        /// Not yet; the text says what is missing, for the message at the timeout.
        case waiting(String)
        /// Can never be met by this agent as configured (a policy it does not have,
        /// `--connectivity` without probing): stop at once.
        case impossible(String)
    }

    package var policies: [String] = []
    package var any = false
    package var connectivity: Connectivity?
    package var ipv4 = false
    package var ipv6 = false
    package var dns = false
    package var interfaces: [InterfaceRequirement] = []
    package var ignored: [Glob] = []
    package var operationalState: OperationalRange?

    package init() {}

    /// Judges `status`.
    package func evaluate(_ status: StatusReport) -> Verdict {
        if let connectivity, status.probing == false {
            return .impossible(
                "--connectivity \(connectivity) needs connectivity probing, and netpathd's configuration has no [connectivity] table (docs/connectivity.md)"
            )
        }
        let known = Set(status.paths.map(\.policy))
        if let missing = policies.first(where: { !known.contains($0) }) {
            let names = status.paths.map(\.policy).joined(separator: ", ")
            return .impossible("netpathd has no policy named \"\(missing)\" (its policies: \(names))")
        }
        let paths =
            policies.isEmpty ? status.paths : policies.compactMap { name in status.paths.first { $0.policy == name } }
        let judged = paths.map { ($0, shortfall(of: $0)) }
        let online = judged.filter { $0.1 == nil }.map(\.0)
        let needAll = !policies.isEmpty && !any
        if online.isEmpty || (needAll && online.count < judged.count) {
            return .waiting(judged.compactMap(\.1).joined(separator: "; "))
        }
        if let reason = interfaceShortfall(status.interfaces) { return .waiting(reason) }
        return .online(online.map(Self.describe).joined(separator: "; "))
    }

    /// Why `path` does not count, or `nil` when it does.
    private func shortfall(of path: NetworkPath) -> String? {
        let name = "policy \(path.policy)"
        guard path.status == .satisfied else {
            return "\(name) is \(path.status.rawValue)" + (path.unsatisfiedReason.map { " (\($0.rawValue))" } ?? "")
        }
        if let connectivity, !path.isOnline(requiring: connectivity) {
            return "\(Self.describe(path)) has connectivity \(path.connectivity), not \(connectivity)"
        }
        let missing = [
            (ipv4 && !path.supportsIPv4, "IPv4"), (ipv6 && !path.supportsIPv6, "IPv6"),
            (dns && !path.supportsDNS, "DNS"),
        ]
        .filter(\.0).map(\.1)
        if !missing.isEmpty { return "\(Self.describe(path)) has no \(missing.joined(separator: " and "))" }
        return nil
    }

    /// Why the interfaces `-i`/`-o` ask for are not there yet, or `nil` when they are (or none
    /// were asked for).
    private func interfaceShortfall(_ all: [Interface]) -> String? {
        let requirements: [InterfaceRequirement]
        let needAll: Bool
        if !interfaces.isEmpty {
            requirements = interfaces
            needAll = !any
        } else if operationalState != nil {
            requirements = all.filter { interface in
                interface.type != .loopback && !ignored.contains { $0.matches(interface.name) }
            }
            .map { InterfaceRequirement(name: $0.name) }
            needAll = false
            if requirements.isEmpty { return "no interface but loopback\(ignored.isEmpty ? "" : " and ignored ones")" }
        } else {
            return nil
        }
        var reasons: [String] = []
        for requirement in requirements {
            let range = requirement.range ?? operationalState ?? .standard
            guard let interface = all.first(where: { $0.name == requirement.name }) else {
                reasons.append("\(requirement.name) is missing")
                continue
            }
            let state = NetworkdState.operational(interface)
            var missing: [String] = []
            if !range.contains(state) { missing.append("is \(state.rawValue), not \(range)") }
            if ipv4 && !interface.hasUsableAddress(.ipv4) { missing.append("has no IPv4 address") }
            if ipv6 && !interface.hasUsableAddress(.ipv6) { missing.append("has no IPv6 address") }
            if missing.isEmpty {
                if !needAll { return nil }
            } else {
                reasons.append("\(requirement.name) " + missing.joined(separator: " and "))
            }
        }
        return reasons.isEmpty ? nil : reasons.joined(separator: "; ")
    }

    /// "policy default via eth0 (wired)".
    private static func describe(_ path: NetworkPath) -> String {
        "policy \(path.policy)" + (path.primary.map { " via \($0.name) (\($0.type))" } ?? "")
    }
}
