// SPDX-License-Identifier: Apache-2.0

/// Evaluates a ``PathPolicy`` against a ``SystemState`` into a ``NetworkPath``.
///
/// An interface is a *candidate* when it is admin up, has carrier, has a usable address of a
/// family for which it has a default route in a table that a routing rule reaches, or is the
/// kernel's own route to the internet for that family (``SystemState/kernelRoutes``: `ip route
/// get` with `ip rule` applied) — or, with a target, a route to the target — and passes the
/// policy's type and metered filters. Candidates are ordered by: unmetered first (metered
/// `avoid`), then the `prefer` list, then the kernel's route, then the lowest route metric, then
/// the index; with no `prefer`, the primary is the kernel's own choice.
///
/// Status: `satisfied` with any candidate. `requires-connection` when an allowed interface is
/// connected but has no usable address yet (DHCP or SLAAC pending). Otherwise `unsatisfied`, with
/// the most specific reason (see ``NetworkPath/UnsatisfiedReason``). A connected, addressed link
/// without a default route is `unsatisfied` (`no-route`) rather than `requires-connection`:
/// statically addressed LAN-only links stay that way, and calling them pending would be a lie.
package struct PathEvaluator: Sendable {
    package var policy: PathPolicy

    package init(policy: PathPolicy) {
        self.policy = policy
    }

    /// The path for `state`.
    ///
    /// Without the verdicts: their descriptions are text for `netpathctl explain`, and the
    /// tracker evaluates every policy on every change (the descriptions were a third of that).
    package func path(for state: SystemState) -> NetworkPath {
        Evaluation(policy: policy, kernelRoutes: state.kernelRoutes, explaining: false).run(state).path
    }

    /// The path for `state` and the verdict on every interface.
    package func evaluate(_ state: SystemState) -> PathEvaluation {
        Evaluation(policy: policy, kernelRoutes: state.kernelRoutes, explaining: true).run(state)
    }
}

/// One evaluation: the policy and the state's kernel routes, which every comparison reads.
private struct Evaluation {
    let policy: PathPolicy
    let kernelRoutes: [KernelRoute]
    /// Whether the verdicts, with their text, are wanted: only `netpathctl explain` asks.
    let explaining: Bool

    private struct Candidate {
        var interface: Interface
        /// Best metric per family, for the per-family primaries; a family without one is not
        /// carried by this candidate.
        var metric: PerFamily<UInt32>
        var gateways: PerFamily<IPAddress>
        /// The families for which this interface is the kernel's route to the internet.
        var kernelFamilies = PerFamily<Void>()
        /// The table of the route chosen per family, when it is not `main`.
        var tables = PerFamily<UInt32>()

        var bestMetric: UInt32 { metric.minimum ?? .max }
    }

    func run(_ state: SystemState) -> PathEvaluation {
        var candidates: [Candidate] = []
        // Every rejection decides the status; the interfaces and the text only the verdicts need.
        var rejections: [PathEvaluation.Rejection] = []
        var rejected: [(Interface, PathEvaluation.Rejection, String)] = []
        // A target the state does not carry yet (a reload just added it) is being looked up.
        let target = policy.target.map { state.targets[$0] ?? .init(addresses: [], routes: [], resolution: .pending) }

        for interface in state.interfaces {
            switch examine(interface, target: target) {
            case .success(let candidate): candidates.append(candidate)
            case .failure(let why):
                rejections.append(why.rejection)
                if explaining { rejected.append((interface, why.rejection, why.detail)) }
            }
        }

        // Positions in `before`'s order, by insertion: sorting the candidates copied each one, its
        // interface and its collections, on every change, and the library's sort costs more than
        // this even for one or two positions. A host has a handful of candidates (interfaces with
        // a default route); `before` is a strict total order, so any sort gives this order.
        var order: [Int] = []
        order.reserveCapacity(candidates.count)
        for position in candidates.indices {
            var slot = order.endIndex
            while slot > 0, before(candidates[position], candidates[order[slot - 1]], family: nil) { slot -= 1 }
            order.insert(position, at: slot)
        }
        // The first of the family's candidates in `before`'s order (a strict total order: ties
        // end on the unique index), found by one scan: filtering and sorting copied every
        // candidate, its interface and its four collections, twice per family on every change.
        func primary(_ family: IPAddress.Family) -> NetworkPath.PathInterface? {
            var best: Int?
            for position in candidates.indices where candidates[position].metric.contains(family) {
                if let current = best, !before(candidates[position], candidates[current], family: family) { continue }
                best = position
            }
            return best.map { NetworkPath.PathInterface(candidates[$0].interface) }
        }

        let available = order.map { NetworkPath.PathInterface(candidates[$0].interface) }
        let primaryIPv4 = primary(.ipv4)
        let primaryIPv6 = primary(.ipv6)
        let supportsIPv4 = primaryIPv4 != nil
        let supportsIPv6 = primaryIPv6 != nil
        var gateways: [IPAddress] = []
        for (family, chosen) in [(IPAddress.Family.ipv4, primaryIPv4), (.ipv6, primaryIPv6)] {
            if let chosen, let gw = candidates.first(where: { $0.interface.index == chosen.index })?.gateways[family] {
                gateways.append(gw)
            }
        }
        let supportsDNS = state.dnsServers.contains { server in
            server.isLoopback || (server.family == .ipv4 ? supportsIPv4 : supportsIPv6)
        }

        let status: NetworkPath.Status
        var reason: NetworkPath.UnsatisfiedReason?
        if !candidates.isEmpty {
            status = .satisfied
        } else if rejections.contains(.noAddress) {
            status = .requiresConnection
        } else {
            status = .unsatisfied
            reason = unsatisfiedReason(rejections)
        }

        let primaryInterface = order.first.map { candidates[$0].interface }
        let path = NetworkPath(
            policy: policy.name,
            status: status,
            unsatisfiedReason: status == .satisfied ? nil : reason,
            primaryIPv4: primaryIPv4,
            primaryIPv6: primaryIPv6,
            availableInterfaces: available,
            isConstrained: primaryInterface?.isConstrained ?? false,
            supportsIPv4: supportsIPv4,
            supportsIPv6: supportsIPv6,
            supportsDNS: status == .satisfied && supportsDNS,
            gateways: gateways,
            connectivity: primaryInterface?.connectivity ?? .unknown,
            portalURL: primaryInterface?.portalURL,
            roundTrip: primaryInterface?.roundTrip,
            loss: primaryInterface?.loss
        )

        var verdicts: [PathEvaluation.Verdict] = []
        guard explaining else { return PathEvaluation(path: path, verdicts: verdicts) }
        let ordered = order.map { candidates[$0] }
        for (rank, candidate) in ordered.enumerated() {
            let outcome: PathEvaluation.Outcome =
                rank == 0
                ? .primary : .candidate(rank: rank, lostBecause: ranking(candidate, behind: ordered[rank - 1]))
            verdicts.append(.init(interface: .init(candidate.interface), outcome: outcome, detail: describe(candidate)))
        }
        for (interface, rejection, detail) in rejected {
            verdicts.append(.init(interface: .init(interface), outcome: .rejected(rejection), detail: detail))
        }
        return PathEvaluation(path: path, verdicts: verdicts)
    }

    private struct Why: Error {
        var rejection: PathEvaluation.Rejection
        var detail: String
    }

    /// A rejection, its text written only when the verdicts are wanted: the tracker evaluates
    /// every policy against every interface on every change, and reads no text (a host with
    /// dozens of links formatted dozens of strings per change for nobody).
    private func why(_ rejection: PathEvaluation.Rejection, _ detail: @autoclosure () -> String) -> Why {
        Why(rejection: rejection, detail: explaining ? detail() : "")
    }

    private func examine(_ i: Interface, target: SystemState.TargetReachability?) -> Result<Candidate, Why> {
        if i.type == .loopback && !policy.require.contains(.loopback) {
            return .failure(why(.loopback, "loopback never carries a path"))
        }
        if !policy.require.isEmpty && !policy.require.contains(i.type) {
            return .failure(
                why(
                    .wrongType,
                    "type \(i.type) is not in require [\(policy.require.map(\.rawValue).joined(separator: ", "))]"
                )
            )
        }
        if policy.prohibit.contains(i.type) {
            return .failure(why(.prohibited, "type \(i.type) is prohibited"))
        }
        if i.isMetered && policy.metered == .deny {
            return .failure(
                why(.meteredDenied, "metered (\(i.meteredReason.rawValue)) and metered = \"deny\"")
            )
        }
        if !i.adminUp {
            return .failure(why(.adminDown, "administratively down"))
        }
        if !i.carrier {
            return .failure(why(.noCarrier, "no carrier"))
        }
        var addressed = PerFamily<Void>()
        for family in bothFamilies where i.hasUsableAddress(family) { addressed.insert(family) }
        if addressed.isEmpty {
            return .failure(why(.noAddress, "no usable address yet"))
        }

        var metric = PerFamily<UInt32>()
        var gateways = PerFamily<IPAddress>()
        var kernelFamilies = PerFamily<Void>()
        var tables = PerFamily<UInt32>()
        if let target {
            let name = policy.target ?? ""
            guard let family = target.addresses.first?.family else {
                let resolution = target.resolution
                return .failure(why(.targetUnresolved, "target \(name) is unresolved: \(Self.describe(resolution))"))
            }
            guard let route = target.routes.first(where: { $0.interfaceIndex == i.index }), addressed.contains(family)
            else {
                return .failure(why(.noRouteToTarget, "no route to \(name)"))
            }
            metric[family] = route.metric
            gateways[family] = route.gateway
            // The interface the kernel sends the target's traffic through ranks as the kernel's
            // route does without a target: ahead of metrics, which do not compare across tables.
            if route.isKernelChoice { kernelFamilies.insert(family) }
            if route.table != DefaultRoute.mainTable { tables[family] = route.table }
        } else {
            for family in bothFamilies where addressed.contains(family) {
                // The kernel's own route wins over the interface's best default route: it is the
                // one traffic takes (a tunnel's table behind a rule, a VPN's half-defaults).
                if let route = kernelRoutes.first(where: { $0.family == family && $0.interfaceIndex == i.index }) {
                    metric[family] = route.metric
                    gateways[family] = route.gateway
                    kernelFamilies.insert(family)
                    if route.table != DefaultRoute.mainTable { tables[family] = route.table }
                } else if let route = i.bestDefaultRoute(family) {
                    metric[family] = route.metric
                    gateways[family] = route.gateway
                    if route.table != DefaultRoute.mainTable { tables[family] = route.table }
                }
            }
            if metric.isEmpty {
                return .failure(
                    why(
                        .noDefaultRoute,
                        "has \(bothFamilies.filter(addressed.contains).map { $0 == .ipv4 ? "IPv4" : "IPv6" }.joined(separator: "/")) addresses but no default route"
                    )
                )
            }
        }
        // Last: an interface that could carry the path but whose probe found too little, or
        // failed; not probed yet (or not probed) does not count against it.
        if let required = policy.requireConnectivity, !i.meetsConnectivity(required) {
            let state = i.connectivityProbeFailed ? "unknown (the probe failed)" : "\(i.connectivity)"
            return .failure(
                why(
                    .connectivity,
                    "connectivity \(state), require_connectivity = \"\(required)\""
                        + (i.connectivityEvidence.map { ": \($0)" } ?? "")
                )
            )
        }
        return .success(
            Candidate(
                interface: i,
                metric: metric,
                gateways: gateways,
                kernelFamilies: kernelFamilies,
                tables: tables
            )
        )
    }

    private func preferenceRank(_ type: InterfaceType) -> Int {
        policy.prefer.firstIndex(of: type) ?? policy.prefer.count
    }

    /// The candidate order: a strict weak ordering, so the result never depends on input order.
    private func before(_ a: Candidate, _ b: Candidate, family: IPAddress.Family?) -> Bool {
        if policy.metered == .avoid && a.interface.isMetered != b.interface.isMetered {
            return !a.interface.isMetered
        }
        let pa = preferenceRank(a.interface.type)
        let pb = preferenceRank(b.interface.type)
        if pa != pb { return pa < pb }
        // The kernel's own route next: metrics of different tables do not compare, and a rule
        // can send traffic past a lower metric.
        let ka = family.map { a.kernelFamilies.contains($0) } ?? !a.kernelFamilies.isEmpty
        let kb = family.map { b.kernelFamilies.contains($0) } ?? !b.kernelFamilies.isEmpty
        if ka != kb { return ka }
        let ma = family.flatMap { a.metric[$0] } ?? a.bestMetric
        let mb = family.flatMap { b.metric[$0] } ?? b.bestMetric
        if ma != mb { return ma < mb }
        return a.interface.index < b.interface.index
    }

    private func ranking(_ loser: Candidate, behind winner: Candidate) -> PathEvaluation.Ranking {
        if policy.metered == .avoid && loser.interface.isMetered && !winner.interface.isMetered {
            return .meteredAvoided
        }
        if preferenceRank(loser.interface.type) > preferenceRank(winner.interface.type) {
            return .lowerPreference
        }
        if !winner.kernelFamilies.isEmpty && loser.kernelFamilies.isEmpty { return .notKernelRoute }
        if loser.bestMetric > winner.bestMetric { return .higherMetric }
        return .tieBreak
    }

    /// Why a target has no address yet, for its rejection's text.
    private static func describe(_ resolution: SystemState.TargetReachability.Resolution) -> String {
        switch resolution {
        case .pending, .resolved: "its name is still being looked up"
        case .failed(let reason): reason.escapingControlCharacters
        }
    }

    private func describe(_ c: Candidate) -> String {
        let parts = bothFamilies.filter(c.metric.contains).map { family -> String in
            let via = c.gateways[family].map { " via \($0)" } ?? ""
            let table = c.tables[family].map { " table \(KernelRoute.tableName($0))" } ?? ""
            let rule: String
            if !c.kernelFamilies.contains(family) {
                rule = ""
            } else if let target = policy.target {
                // The probe's rule says nothing about the target's route.
                rule = " (kernel's route to \(target.escapingControlCharacters))"
            } else {
                rule =
                    kernelRoutes.first { $0.family == family }?.rule.map { " (kernel's route, rule \($0))" }
                    ?? " (kernel's route)"
            }
            return "\(family == .ipv4 ? "IPv4" : "IPv6")\(via) metric \(c.metric[family]!)\(table)\(rule)"
        }
        return "type \(c.interface.type)\(c.interface.isMetered ? ", metered" : ""); " + parts.joined(separator: ", ")
    }

    private func unsatisfiedReason(_ rejections: [PathEvaluation.Rejection]) -> NetworkPath.UnsatisfiedReason {
        let relevant = rejections.filter { $0 != .loopback }
        if relevant.isEmpty { return .noInterface }
        // A type that is not there is not a prohibition: "required-type-absent" tells the
        // user of a `wired` monitor on a Wi-Fi-only box what is missing.
        if relevant.allSatisfy({ $0 == .wrongType }) { return .requiredTypeAbsent }
        if relevant.allSatisfy({ $0 == .wrongType || $0 == .prohibited }) { return .onlyProhibitedTypes }
        // Interfaces that could carry the path but lack connectivity: that is what the user must know.
        if relevant.contains(.connectivity) { return .noConnectivity }
        if relevant.contains(.targetUnresolved) { return .targetUnresolved }
        if relevant.contains(.noRouteToTarget) { return .targetUnreachable }
        if relevant.contains(.noDefaultRoute) { return .noRoute }
        if relevant.contains(.meteredDenied) { return .meteredDenied }
        return .noInterface
    }
}

/// Both address families, IPv4 first: the order every per-family walk takes (made once, not an
/// array per interface and policy on every change).
private let bothFamilies: [IPAddress.Family] = [.ipv4, .ipv6]

/// One value per address family: what a dictionary keyed by family held, without its
/// allocation. The evaluator keeps four per candidate and runs for every policy on every change.
private struct PerFamily<Value> {
    private var ipv4: Value?
    private var ipv6: Value?

    init() {}

    subscript(family: IPAddress.Family) -> Value? {
        get { family == .ipv4 ? ipv4 : ipv6 }
        set {
            if family == .ipv4 { ipv4 = newValue } else { ipv6 = newValue }
        }
    }

    var isEmpty: Bool { ipv4 == nil && ipv6 == nil }

    /// Whether `family` has a value: for a set of families, `PerFamily<Void>`.
    func contains(_ family: IPAddress.Family) -> Bool { self[family] != nil }
}

extension PerFamily where Value == Void {
    /// Adds `family` to a set of families.
    mutating func insert(_ family: IPAddress.Family) { self[family] = () }
}

extension PerFamily where Value: Comparable {
    /// The smaller of the values; `nil` with none.
    var minimum: Value? {
        switch (ipv4, ipv6) {
        case (let a?, let b?): return min(a, b)
        case (let a?, nil): return a
        case (nil, let b): return b
        }
    }
}
