// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathCore
import NetPathDispatch
import Testing

/// The hook's variables against the contract's table (docs/hooks.md) written out plainly, over
/// generated events of both scopes: the agent builds them for speed (no arrays of values, lists
/// written into one string), and must still give every hook exactly these.
struct HookVariablesTests {
    /// docs/hooks.md's table, spelled the plain way: each list mapped, then joined.
    static func expected(_ event: Event, rule: String) -> [String: String] {
        func flag(_ value: Bool) -> String { value ? "1" : "0" }
        let state = event.interfaceState
        let path = event.path
        var variables = [
            "NETPATH_EVENT": event.name.rawValue,
            "NETPATH_SCOPE": event.scope.rawValue,
            "NETPATH_POLICY": event.policy ?? "",
            "NETPATH_RULE": rule,
            "NETPATH_INTERFACE": event.interface ?? "",
            "NETPATH_INTERFACE_TYPE": (event.interfaceType ?? state?.type)?.rawValue ?? "",
            "NETPATH_INTERFACE_KIND": state?.kind ?? "",
            "NETPATH_PREVIOUS_INTERFACE": event.previousInterface ?? "",
            "NETPATH_STARTUP": flag(event.startup),
            "NETPATH_PREVIOUS_CONNECTIVITY": event.previousConnectivity?.rawValue ?? "",
            "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "LANG": "C.UTF-8",
        ]
        let connectivity: Connectivity
        switch event.scope {
        case .path:
            connectivity = event.connectivity ?? path?.connectivity ?? .unknown
            variables["NETPATH_STATUS"] = path?.status.rawValue ?? ""
            variables["NETPATH_METERED"] = flag(path?.isExpensive ?? false)
            variables["NETPATH_CONSTRAINED"] = flag(path?.isConstrained ?? false)
            variables["NETPATH_IPV4"] = flag(path?.supportsIPv4 ?? false)
            variables["NETPATH_IPV6"] = flag(path?.supportsIPv6 ?? false)
            variables["NETPATH_DNS"] = path.map { flag($0.supportsDNS) } ?? ""
            variables["NETPATH_ADDRESSES"] = ""
            variables["NETPATH_GATEWAYS"] = (path?.gateways ?? []).map(\.description).joined(separator: " ")
            variables["NETPATH_PORTAL_URL"] = connectivity == .portal ? path?.portalURL ?? "" : ""
        default:
            let families = state?.routableFamilies ?? []
            connectivity = event.connectivity ?? state?.connectivity ?? .unknown
            variables["NETPATH_STATUS"] = state?.operState.rawValue ?? ""
            variables["NETPATH_METERED"] = flag(state?.isMetered ?? false)
            variables["NETPATH_CONSTRAINED"] = flag(state?.isConstrained ?? false)
            variables["NETPATH_IPV4"] = flag(families.contains(.ipv4))
            variables["NETPATH_IPV6"] = flag(families.contains(.ipv6))
            variables["NETPATH_DNS"] = ""
            variables["NETPATH_ADDRESSES"] = (state?.addresses ?? []).map { "\($0.address)/\($0.prefixLength)" }
                .joined(separator: " ")
            variables["NETPATH_GATEWAYS"] = (state?.defaultRoutes ?? []).compactMap(\.gateway).map(\.description)
                .joined(separator: " ")
            variables["NETPATH_PORTAL_URL"] = connectivity == .portal ? state?.portalURL ?? "" : ""
        }
        variables["NETPATH_CONNECTIVITY"] = connectivity.rawValue
        return variables
    }

    @Test("every generated event's variables are the table's, in both scopes, lists of any length included")
    func variablesFollowTheTable() {
        var generator = SystemRandomNumberGenerator()
        let addresses: [InterfaceAddress] = [
            "192.0.2.10/24", "198.51.100.7/32", "2001:db8::10/64", "fe80::1/64",
            InterfaceAddress("2001:db8::11", prefixLength: 64, isTentative: true),
        ]
        let routes: [DefaultRoute] = [
            .init(via: "192.0.2.1"), .init(via: "192.0.2.2", metric: 600), .init(via: "2001:db8::1", table: 100),
            .init(family: .ipv4, metric: 50),  // on-link: no gateway
        ]
        let connectivities: [Connectivity?] = [nil, .unknown, Connectivity.none, .limited, .portal, .full]
        for _ in 0..<400 {
            var state = Interface(
                index: 3,
                name: ["eth0", "wlan0"].randomElement(using: &generator)!,
                type: [.wired, .wifi, .cellular].randomElement(using: &generator)!,
                kind: ["", "veth"].randomElement(using: &generator)!,
                adminUp: Int.random(in: 0..<4, using: &generator) > 0,
                carrier: Int.random(in: 0..<4, using: &generator) > 0,
                isMetered: Bool.random(using: &generator),
                addresses: addresses.filter { _ in Bool.random(using: &generator) },
                defaultRoutes: routes.filter { _ in Bool.random(using: &generator) }
            )
            state.connectivity = connectivities.randomElement(using: &generator)! ?? .unknown
            state.portalURL = Bool.random(using: &generator) ? "http://portal.example/login" : nil
            let path = NetworkPath(
                status: [.satisfied, .unsatisfied, .requiresConnection].randomElement(using: &generator)!,
                isExpensive: Bool.random(using: &generator),
                supportsIPv4: Bool.random(using: &generator),
                supportsIPv6: Bool.random(using: &generator),
                supportsDNS: Bool.random(using: &generator),
                gateways: ["192.0.2.1", "2001:db8::1", "192.0.2.9"].filter { _ in Bool.random(using: &generator) },
                connectivity: connectivities.randomElement(using: &generator)! ?? .unknown,
                portalURL: Bool.random(using: &generator) ? "http://portal.example/" : nil
            )
            let scope: Event.Scope = Bool.random(using: &generator) ? .path : .interface
            let event = Event(
                time: Date(),
                name: scope == .path ? .satisfied : .carrierUp,
                scope: scope,
                interface: state.name,
                policy: scope == .path ? "default" : nil,
                previousInterface: Bool.random(using: &generator) ? "eth1" : nil,
                startup: Bool.random(using: &generator),
                path: scope == .path || Bool.random(using: &generator) ? path : nil,
                interfaceState: scope == .interface || Bool.random(using: &generator) ? state : nil,
                connectivity: connectivities.randomElement(using: &generator)!,
                previousConnectivity: connectivities.randomElement(using: &generator)!
            )
            let rule = ["", "uplink"].randomElement(using: &generator)!
            let made = HookInvocation.environment(for: event, rule: rule)
            let expected = Self.expected(event, rule: rule)
            #expect(made == expected, "for \(event)")
            if made != expected { return }
        }
    }
}
