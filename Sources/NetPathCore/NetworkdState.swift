// SPDX-License-Identifier: Apache-2.0

/// An interface's state as systemd-networkd names it (networkctl(1)), derived from what netpath
/// observes: the states whose `<state>.d` directories networkd-dispatcher(8) runs.
///
/// **Operational state**, as networkd computes it (`link_update_operstate`): first the carrier
/// state, from the link alone, then the address state, from its addresses:
///
/// | carrier state | when |
/// |---|---|
/// | `dormant` | the kernel's operational state is `dormant` |
/// | `carrier` | the kernel's operational state is `up`, or `unknown` with carrier (`IFF_LOWER_UP`), as for `lo` |
/// | `no-carrier` | otherwise, when the link is administratively up |
/// | `off` | otherwise (administratively down), and once the interface has gone away |
///
/// With carrier, the addresses decide: any ready address (not tentative, DAD not failed) of
/// global scope makes it `routable`; else any of site or link scope (an IPv6 link-local
/// address) makes it `degraded`; else (none, or host scope only, like `lo`'s) it stays
/// `carrier`. Default routes play no part, as in networkd (networkctl(1): "routable: the link
/// has carrier and routable address configured"). `degraded-carrier` and `enslaved` need bond
/// and bridge membership, which netpath does not track, and `missing` a device networkd knows
/// and the kernel does not: netpath never enters them. A port of a bridge or bond therefore
/// shows as `carrier` (or by its own addresses) instead of `enslaved`.
///
/// **Administrative state** is networkd's own progress in configuring a link. netpath
/// configures nothing, so it stands for what the scripts wait for: `configured` while the
/// interface is usable (netpath's `up`: connected, a usable address and a default route),
/// `configuring` while it exists and is not, and `linger` once it has gone away (networkd's
/// state for a link that was dropped). `pending`, `initialized`, `unmanaged` and `failed` are
/// never entered.
package struct NetworkdState: Hashable, Sendable, CustomStringConvertible {
    /// networkctl(1)'s operational states.
    /// In networkd's order, from `missing` to `routable`: what `MIN:MAX` ranges
    /// (systemd-networkd-wait-online's `-o`, `RequiredForOnline=`) compare.
    package enum Operational: String, Hashable, Sendable, CaseIterable, Comparable {
        case missing, off
        case noCarrier = "no-carrier"
        case dormant
        case degradedCarrier = "degraded-carrier"
        case carrier, degraded, enslaved, routable

        package static func < (a: Self, b: Self) -> Bool {
            allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
        }
    }

    /// networkctl(1)'s setup (administrative) states.
    package enum Administrative: String, Hashable, Sendable, CaseIterable {
        case pending, initialized, configuring, configured, unmanaged, failed, linger
    }

    package var operational: Operational
    package var administrative: Administrative

    package init(operational: Operational, administrative: Administrative) {
        self.operational = operational
        self.administrative = administrative
    }

    /// The state of `interface`; `removed` when it has gone away (its last known state).
    package init(_ interface: Interface, removed: Bool = false) {
        self.operational = removed ? .off : Self.operational(interface)
        self.administrative = removed ? .linger : (interface.isUsable ? .configured : .configuring)
    }

    /// The operational state of the table above.
    package static func operational(_ interface: Interface) -> Operational {
        let hasCarrier =
            interface.operState == .up || (interface.operState == .unknown && interface.carrier)
        if interface.operState == .dormant { return .dormant }
        guard hasCarrier else { return interface.adminUp ? .noCarrier : .off }
        let ready = interface.addresses.filter { !$0.isTentative && !$0.isDADFailed }
        if ready.contains(where: { $0.scope == .global }) { return .routable }
        if ready.contains(where: { $0.scope == .site || $0.scope == .link }) { return .degraded }
        return .carrier
    }

    /// The states entered since `previous` (`nil`: none known yet, so both are entered, as
    /// networkd-dispatcher's `--run-startup-triggers` does at start), administrative first, as
    /// networkd-dispatcher handles them.
    package func entered(since previous: NetworkdState?) -> [String] {
        var states: [String] = []
        if previous?.administrative != administrative { states.append(administrative.rawValue) }
        if previous?.operational != operational { states.append(operational.rawValue) }
        return states
    }

    /// Every state name networkd-dispatcher has a directory for (`<state>.d`), administrative
    /// states first.
    package static let allStates: [String] =
        Administrative.allCases.map(\.rawValue) + Operational.allCases.map(\.rawValue)

    /// The states netpath ever enters (see the type's discussion).
    package static let enteredStates: Set<String> = [
        "configuring", "configured", "linger", "off", "no-carrier", "dormant", "carrier", "degraded", "routable",
    ]

    /// networkctl's `STATE` column: `routable (configured)`.
    package var description: String { "\(operational.rawValue) (\(administrative.rawValue))" }
}
