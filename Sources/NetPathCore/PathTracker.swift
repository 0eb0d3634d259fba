// SPDX-License-Identifier: Apache-2.0

import FoundationEssentials

/// The transition state machine: feed it successive ``SystemState``s, get the ``Event``s between them.
///
/// A pure value: no clock, no I/O. The caller supplies the time and carries out the events.
///
/// ```swift
/// var tracker = PathTracker(policies: [.default])
/// let startup = tracker.start(with: state, at: .now)   // the current state as startup events
/// let events = tracker.update(to: newState, at: .now) // the transitions since
/// ```
package struct PathTracker: Sendable {
    /// The policies evaluated on every update, in order.
    package private(set) var policies: [PathPolicy]
    /// The last state seen.
    package private(set) var state: SystemState
    /// The last path of each policy, in policy order.
    package private(set) var paths: [NetworkPath]

    package init(policies: [PathPolicy] = [.default], state: SystemState = SystemState()) {
        self.policies = policies.isEmpty ? [.default] : policies
        self.state = state
        self.paths = self.policies.map { PathEvaluator(policy: $0).path(for: state) }
    }

    /// Adopts `state` as the starting point and returns it as startup events: each interface's
    /// `up` or `down` and each policy's `satisfied` or `unsatisfied`, all marked `startup`.
    package mutating func start(with state: SystemState, at time: Date) -> [Event] {
        self.state = state
        paths = policies.map { PathEvaluator(policy: $0).path(for: state) }
        var events: [Event] = []
        for interface in state.interfaces {
            events.append(
                Self.interfaceEvent(interface.isUsable ? .up : .down, interface, at: time, startup: true)
            )
        }
        for path in paths {
            events.append(
                Self.pathEvent(
                    path.status == .satisfied ? .satisfied : .unsatisfied,
                    path,
                    previous: nil,
                    at: time,
                    startup: true
                )
            )
        }
        return events
    }

    /// Replaces the policies (a config reload); returns the path events the change causes.
    package mutating func setPolicies(_ newPolicies: [PathPolicy], at time: Date) -> [Event] {
        let oldByName = Dictionary(zip(policies.map(\.name), paths), uniquingKeysWith: { a, _ in a })
        policies = newPolicies.isEmpty ? [.default] : newPolicies
        paths = policies.map { PathEvaluator(policy: $0).path(for: state) }
        return paths.flatMap { path in
            oldByName[path.policy].map { Self.pathEvents(from: $0, to: path, at: time) }
                ?? [
                    Self.pathEvent(path.status == .satisfied ? .satisfied : .unsatisfied, path, previous: nil, at: time)
                ]
        }
    }

    /// Moves to `newState`; returns interface events (by interface index) then path events (by policy).
    package mutating func update(to newState: SystemState, at time: Date) -> [Event] {
        // The interface events' own list, extended: not a second list filled one by one through
        // ``update(to:at:emit:)``, whose steps these are, which is slower on every change's way to
        // a hook's spawn (BENCHMARKS.md, "its `emit` form").
        var events = Self.interfaceEvents(from: state.interfaces, to: newState.interfaces, at: time)
        let newPaths = evaluate(newState)
        for (old, new) in zip(paths, newPaths) { events += Self.pathEvents(from: old, to: new, at: time) }
        state = newState
        paths = newPaths
        return events
    }

    /// ``update(to:at:)``, handing each event to `emit` as soon as it is known: the interface
    /// events before any policy is evaluated (`monitor --local` writes each at once, so its first
    /// line does not wait for the evaluation). When `emit` throws, the tracker is left as it was.
    package mutating func update(to newState: SystemState, at time: Date, emit: (Event) throws -> Void) rethrows {
        for event in Self.interfaceEvents(from: state.interfaces, to: newState.interfaces, at: time) {
            try emit(event)
        }
        let newPaths = evaluate(newState)
        for (old, new) in zip(paths, newPaths) {
            for event in Self.pathEvents(from: old, to: new, at: time) { try emit(event) }
        }
        state = newState
        paths = newPaths
    }

    /// Every policy's path in `state`.
    private func evaluate(_ state: SystemState) -> [NetworkPath] {
        policies.map { PathEvaluator(policy: $0).path(for: state) }
    }

    // MARK: - Diffing

    /// The interface events between two interface lists, ordered by interface index.
    package static func interfaceEvents(from old: [Interface], to new: [Interface], at time: Date) -> [Event] {
        var events: [Event] = []
        // The pairs of the two lists by index, in index order: a merge of the two when both are
        // in strictly ascending order (as the state builder lists them), else through
        // dictionaries. The merge spares two dictionaries, a set and a sort on every change.
        // Positions in the two lists, not the interfaces themselves: an `Interface` is a large
        // value, and a list of copied pairs retained and released each of its fields twice on
        // every change.
        var pairs: [(Int?, Int?)] = []
        pairs.reserveCapacity(max(old.count, new.count))
        if Self.isStrictlyAscending(old), Self.isStrictlyAscending(new) {
            var i = 0
            var j = 0
            while i < old.count || j < new.count {
                if j == new.count || (i < old.count && old[i].index < new[j].index) {
                    pairs.append((i, nil))
                    i += 1
                } else if i == old.count || new[j].index < old[i].index {
                    pairs.append((nil, j))
                    j += 1
                } else {
                    pairs.append((i, j))
                    i += 1
                    j += 1
                }
            }
        } else {
            let before = Dictionary(old.indices.map { (old[$0].index, $0) }, uniquingKeysWith: { a, _ in a })
            let after = Dictionary(new.indices.map { (new[$0].index, $0) }, uniquingKeysWith: { a, _ in a })
            pairs = Set(before.keys).union(after.keys).sorted().map { (before[$0], after[$0]) }
        }
        for pair in pairs {
            switch pair {
            case (nil, let j?):
                let added = new[j]
                events.append(interfaceEvent(.added, added, at: time))
                if added.carrier { events.append(interfaceEvent(.carrierUp, added, at: time)) }
                for address in added.addresses {
                    events.append(interfaceEvent(.addressAdded, added, at: time, address: address))
                }
                if added.isUsable { events.append(interfaceEvent(.up, added, at: time)) }
            case (let i?, nil):
                let removed = old[i]
                if removed.isUsable { events.append(interfaceEvent(.down, removed, at: time)) }
                events.append(interfaceEvent(.removed, removed, at: time))
            case (let i?, let j?):
                appendChanges(from: old[i], to: new[j], at: time, to: &events)
            case (nil, nil):
                break
            }
        }
        return events
    }

    private static func isStrictlyAscending(_ interfaces: [Interface]) -> Bool {
        // By position: zipping the list with itself copied every interface.
        for position in interfaces.indices.dropFirst()
        where interfaces[position - 1].index >= interfaces[position].index {
            return false
        }
        return true
    }

    /// Appends the events between two states of one interface to `events` (the caller's list:
    /// an array of its own per interface was an allocation and a copy on every change).
    private static func appendChanges(from a: Interface, to b: Interface, at time: Date, to events: inout [Event]) {
        // Most interfaces did not change: every event below needs some field to differ.
        if a == b { return }
        // A change is a few events (a carrier flip: two): room for them at once, not grown one by
        // one. Only for the first: a reserve past that would not grow geometrically, and a batch
        // that changes many interfaces would copy the list once per interface.
        if events.isEmpty { events.reserveCapacity(4) }
        // Losing usability is reported after the carrier/address facts that caused it, and
        // gaining it after the facts that enabled it, so a hook reading events in order sees cause, then effect.
        if a.carrier && !b.carrier { events.append(interfaceEvent(.carrierDown, b, at: time)) }
        if !a.carrier && b.carrier { events.append(interfaceEvent(.carrierUp, b, at: time)) }
        // Addresses are compared by address and prefix only: a flag change (DAD finishing, an
        // address turning deprecated) is not an add or remove; it shows up in `up`/`down`.
        if a.addresses != b.addresses {
            struct Key: Hashable {
                var address: IPAddress
                var prefixLength: Int
                init(_ entry: InterfaceAddress) { (address, prefixLength) = (entry.address, entry.prefixLength) }
            }
            let oldAddresses = Set(a.addresses.map(Key.init))
            let newAddresses = Set(b.addresses.map(Key.init))
            for address in a.addresses where !newAddresses.contains(Key(address)) {
                events.append(interfaceEvent(.addressRemoved, b, at: time, address: address))
            }
            for address in b.addresses where !oldAddresses.contains(Key(address)) {
                events.append(interfaceEvent(.addressAdded, b, at: time, address: address))
            }
        }
        var changed: [String] = []
        if a.name != b.name { changed.append("name") }
        if a.type != b.type { changed.append("type") }
        if a.isMetered != b.isMetered { changed.append("metered") }
        if a.isConstrained != b.isConstrained { changed.append("constrained") }
        if a.mtu != b.mtu { changed.append("mtu") }
        if a.defaultRoutes != b.defaultRoutes { changed.append("default_routes") }
        if !changed.isEmpty {
            var event = interfaceEvent(.changed, b, at: time)
            event.changes = changed
            if a.name != b.name { event.previousInterface = a.name }
            events.append(event)
        }
        let (wasUsable, isUsable) = (a.isUsable, b.isUsable)
        if wasUsable && !isUsable { events.append(interfaceEvent(.down, b, at: time)) }
        if !wasUsable && isUsable { events.append(interfaceEvent(.up, b, at: time)) }
        // After up/down: a link comes up, then its probe says what it reaches.
        if a.connectivity != b.connectivity {
            var event = interfaceEvent(.connectivityChanged, b, at: time)
            event.connectivity = b.connectivity
            event.previousConnectivity = a.connectivity
            events.append(event)
        }
    }

    /// The path events between two paths of one policy.
    package static func pathEvents(from old: NetworkPath, to new: NetworkPath, at time: Date) -> [Event] {
        var events = statusEvents(from: old, to: new, at: time)
        // After the status or primary change that caused it, if one did.
        if old.connectivity != new.connectivity {
            var event = pathEvent(.connectivityChanged, new, previous: old.primary?.name, at: time)
            event.connectivity = new.connectivity
            event.previousConnectivity = old.connectivity
            events.append(event)
        }
        return events
    }

    private static func statusEvents(from old: NetworkPath, to new: NetworkPath, at time: Date) -> [Event] {
        let wasSatisfied = old.status == .satisfied
        let isSatisfied = new.status == .satisfied
        if !wasSatisfied && isSatisfied {
            return [pathEvent(.satisfied, new, previous: old.primary?.name, at: time)]
        }
        if wasSatisfied && !isSatisfied {
            return [pathEvent(.unsatisfied, new, previous: old.primary?.name, at: time)]
        }
        if isSatisfied {
            let changed = differences(old, new)
            guard !changed.isEmpty else { return [] }
            var event = pathEvent(.changed, new, previous: old.primary?.name, at: time)
            event.changes = changed
            return [event]
        }
        // Unsatisfied to unsatisfied: report only a different status or reason, so that
        // NETPATH_STATUS is never stale (e.g. requires-connection once DHCP starts).
        if old.status != new.status || old.unsatisfiedReason != new.unsatisfiedReason {
            return [pathEvent(.unsatisfied, new, previous: old.primary?.name, at: time)]
        }
        return []
    }

    private static func differences(_ a: NetworkPath, _ b: NetworkPath) -> [String] {
        // A PathInterface also carries its metered flag, which `is_expensive` reports; comparing
        // it here would call the same primary a new one when only its metered flag changed.
        func same(_ x: NetworkPath.PathInterface?, _ y: NetworkPath.PathInterface?) -> Bool {
            x?.index == y?.index && x?.name == y?.name && x?.type == y?.type
        }
        var changed: [String] = []
        if !same(a.primary, b.primary) { changed.append("primary") }
        if !same(a.primaryIPv4, b.primaryIPv4) { changed.append("primary_ipv4") }
        if !same(a.primaryIPv6, b.primaryIPv6) { changed.append("primary_ipv6") }
        if a.availableInterfaces.count != b.availableInterfaces.count
            || !zip(a.availableInterfaces, b.availableInterfaces).allSatisfy({ same($0, $1) })
        {
            changed.append("available_interfaces")
        }
        if a.isExpensive != b.isExpensive { changed.append("is_expensive") }
        if a.isConstrained != b.isConstrained { changed.append("is_constrained") }
        if a.supportsIPv4 != b.supportsIPv4 { changed.append("supports_ipv4") }
        if a.supportsIPv6 != b.supportsIPv6 { changed.append("supports_ipv6") }
        if a.supportsDNS != b.supportsDNS { changed.append("supports_dns") }
        if a.gateways != b.gateways { changed.append("gateways") }
        return changed
    }

    static func interfaceEvent(
        _ name: Event.Name,
        _ interface: Interface,
        at time: Date,
        startup: Bool = false,
        address: InterfaceAddress? = nil
    ) -> Event {
        Event(
            time: time,
            name: name,
            scope: .interface,
            interface: interface.name,
            interfaceType: interface.type,
            startup: startup,
            interfaceState: interface,
            address: address
        )
    }

    static func pathEvent(
        _ name: Event.Name,
        _ path: NetworkPath,
        previous: String?,
        at time: Date,
        startup: Bool = false
    ) -> Event {
        Event(
            time: time,
            name: name,
            scope: .path,
            interface: path.primary?.name,
            interfaceType: path.primary?.type,
            policy: path.policy,
            previousInterface: previous,
            startup: startup,
            path: path
        )
    }
}
