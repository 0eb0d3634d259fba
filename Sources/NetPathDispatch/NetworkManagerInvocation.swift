// SPDX-License-Identifier: Apache-2.0

import NetPathCore

/// What a script written for NetworkManager-dispatcher(8) receives from netpath: argv and
/// environment as NetworkManager's dispatcher builds them (`nm_dispatcher_utils_construct_envp`),
/// for the actions netpath's events stand for.
///
/// - **argv**: `[SCRIPT, IFACE, ACTION]`; `$0` is the script's real path, as from
///   NetworkManager-dispatcher.
/// - **actions** (``Action``): `up` and `down` when an interface becomes usable or stops being
///   usable (netpath's `up` and `down`); `dhcp4-change` / `dhcp6-change` when a usable interface
///   gains or loses an address of that family (netpath's `address-added` / `address-removed`):
///   that is what those actions stand for to the scripts (new addresses, the same connection).
///   Never sent: `pre-up`, `pre-down`, `vpn-*` (netpath activates no connection, so there is no
///   moment before one comes up or goes down), `hostname` and `dns-change` (netpath does not
///   watch them).
/// - `connectivity-change` when a path's connectivity changes (netpath's path-scope
///   `connectivity-changed`; one per policy whose path changed), with an empty interface
///   argument and only `CONNECTIVITY_STATE` (`NONE`, `PORTAL`, `LIMITED`, `FULL` or
///   `UNKNOWN`, as NetworkManager spells them), `PATH` and `NM_DISPATCHER_ACTION` in the
///   environment, as NetworkManager sends it: connectivity belongs to no one device there.
/// - **environment**, exactly these variables (nothing inherited from the agent):
///
///   | variable | value |
///   |---|---|
///   | `CONNECTION_UUID` | a UUID derived from the interface name: the same for the same interface, across restarts |
///   | `CONNECTION_ID` | the interface name (NetworkManager names external connections so) |
///   | `CONNECTION_EXTERNAL` | `1`: netpath observes connections, it never activates them |
///   | `DEVICE_IFACE`, `DEVICE_IP_IFACE` | the interface name |
///   | `IP4_ADDRESS_N` | `ADDR/PREFIX GATEWAY`, N from 0; `GATEWAY` is `0.0.0.0` when there is none |
///   | `IP4_NUM_ADDRESSES` | the number of IPv4 addresses, when there is at least one |
///   | `IP4_GATEWAY` | the main table's best IPv4 default gateway, or `0.0.0.0` |
///   | `IP4_NUM_ROUTES` | `0` (netpath tracks default routes only, which NetworkManager does not list) |
///   | `IP6_ADDRESS_N`, `IP6_NUM_ADDRESSES`, `IP6_GATEWAY` | the same for IPv6; like NetworkManager, the missing gateway is written `0.0.0.0` here too |
///   | `PATH` | ``HookInvocation/path`` |
///   | `NM_DISPATCHER_ACTION` | the action (= argv[2]) |
///
///   As in NetworkManager, the `IP4_*` and `IP6_*` variables are set only while the device is
///   activated: for `up` and `dhcp4-change`/`dhcp6-change`, not for `down`; and a family's
///   variables only when the interface has an address of that family (tentative addresses are
///   left out). `IP4_NAMESERVERS`, `IP4_DOMAINS`, `IP4_ROUTE_N` and their IPv6 twins are never
///   set: netpath does not know which interface a name server or search domain came from, and
///   tracks no routes but default routes; NetworkManager too leaves them out when empty.
/// - **stdin** is empty; everything else (working directory, process group, timeout, output) is
///   as for native hooks (``HookInvocation``).
package enum NetworkManagerInvocation {
    /// The NetworkManager-dispatcher actions netpath sends.
    package enum Action: String, Hashable, Sendable, CaseIterable {
        case up, down
        case dhcp4Change = "dhcp4-change"
        case dhcp6Change = "dhcp6-change"
        case connectivityChange = "connectivity-change"

        /// The action `event` stands for, or `nil` when it stands for none.
        package init?(_ event: Event) {
            if event.scope == .path, event.name == .connectivityChanged {
                self = .connectivityChange
                return
            }
            guard event.scope == .interface, let state = event.interfaceState else { return nil }
            switch event.name {
            case .up: self = .up
            case .down: self = .down
            case .addressAdded, .addressRemoved:
                // Addresses come and go while an interface comes up or goes down: only a change
                // on a usable interface is a "DHCP change"; the rest is part of up or down.
                guard state.isUsable, let address = event.address else { return nil }
                self = address.family == .ipv4 ? .dhcp4Change : .dhcp6Change
            default: return nil
            }
        }

        /// Whether NetworkManager's device is activated for this action, so that the `IP4_*`
        /// and `IP6_*` variables are set.
        var isActivated: Bool { self != .down && self != .connectivityChange }
    }

    /// The variables in the order NetworkManager writes them.
    static let variableOrder = [
        "CONNECTION_UUID", "CONNECTION_ID", "CONNECTION_EXTERNAL", "DEVICE_IFACE", "DEVICE_IP_IFACE",
    ]
    static let trailingVariables = ["PATH", "NM_DISPATCHER_ACTION"]
    static let interfaceVariables: Set<String> = ["CONNECTION_ID", "DEVICE_IFACE", "DEVICE_IP_IFACE"]

    /// The invocation of `script` for `event`, or `nil` when the event stands for no action.
    package static func invocation(script: String, event: Event, timeout: Duration) -> HookInvocation? {
        guard let action = Action(event) else { return nil }
        if action == .connectivityChange {
            let state = event.connectivity ?? event.path?.connectivity ?? .unknown
            return HookInvocation(
                hook: script,
                arguments: [script, "", action.rawValue],
                environment: [
                    "CONNECTIVITY_STATE": state.rawValue.uppercased(),
                    "PATH": HookInvocation.path,
                    "NM_DISPATCHER_ACTION": action.rawValue,
                ],
                variableOrder: ["CONNECTIVITY_STATE"] + trailingVariables,
                interfaceVariables: [],
                timeout: timeout
            )
        }
        guard let interface = event.interface else { return nil }
        let environment = self.environment(action: action, interface: interface, state: event.interfaceState)
        let order =
            variableOrder + ipVariables(environment, "IP4_") + ipVariables(environment, "IP6_") + trailingVariables
        return HookInvocation(
            hook: script,
            arguments: [script, interface, action.rawValue],
            environment: environment,
            variableOrder: order,
            interfaceVariables: interfaceVariables,
            timeout: timeout
        )
    }

    /// The environment of the table above.
    package static func environment(action: Action, interface: String, state: Interface?) -> [String: String] {
        var environment = [
            "CONNECTION_UUID": connectionUUID(interface),
            "CONNECTION_ID": interface,
            "CONNECTION_EXTERNAL": "1",
            "DEVICE_IFACE": interface,
            "DEVICE_IP_IFACE": interface,
            "PATH": HookInvocation.path,
            "NM_DISPATCHER_ACTION": action.rawValue,
        ]
        guard action.isActivated, let state else { return environment }
        for family in [IPAddress.Family.ipv4, .ipv6] {
            let prefix = family == .ipv4 ? "IP4_" : "IP6_"
            let addresses = state.addresses.filter { $0.family == family && !$0.isTentative && !$0.isDADFailed }
            if family == .ipv4 { environment["IP4_NUM_ROUTES"] = "0" }
            guard !addresses.isEmpty else { continue }
            let gateway =
                state.bestDefaultRoute(family, table: DefaultRoute.mainTable)?.gateway?.description ?? "0.0.0.0"
            for (index, address) in addresses.enumerated() {
                environment["\(prefix)ADDRESS_\(index)"] = "\(address.address)/\(address.prefixLength) \(gateway)"
            }
            environment["\(prefix)NUM_ADDRESSES"] = String(addresses.count)
            environment["\(prefix)GATEWAY"] = gateway
        }
        return environment
    }

    /// `IP4_ADDRESS_0`, …, `IP4_NUM_ADDRESSES`, `IP4_GATEWAY`, `IP4_NUM_ROUTES`: NetworkManager's order.
    static func ipVariables(_ environment: [String: String], _ prefix: String) -> [String] {
        var names: [String] = []
        var index = 0
        while environment["\(prefix)ADDRESS_\(index)"] != nil {
            names.append("\(prefix)ADDRESS_\(index)")
            index += 1
        }
        return names + ["NUM_ADDRESSES", "GATEWAY", "NUM_ROUTES"].map { prefix + $0 }
    }

    /// A UUID that depends only on the interface name: two 64-bit FNV-1a hashes of it, with the
    /// version (8, "custom") and variant bits of RFC 9562 set.
    package static func connectionUUID(_ interface: String) -> String {
        func fnv(_ seed: UInt64) -> UInt64 {
            var hash = seed
            for byte in Array("netpath-connection:".utf8) + InterfaceName.kernelBytes(interface) {
                hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            }
            return hash
        }
        var bytes: [UInt8] = []
        for seed: UInt64 in [0xCBF2_9CE4_8422_2325, 0x6C62_272E_07BB_0142] {
            let hash = fnv(seed)
            bytes += (0..<8).map { UInt8(truncatingIfNeeded: hash >> (56 - 8 * UInt64($0))) }
        }
        bytes[6] = (bytes[6] & 0x0F) | 0x80
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let hex = bytes.map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
        }
        return [0..<4, 4..<6, 6..<8, 8..<10, 10..<16].map { hex[$0].joined() }.joined(separator: "-")
    }
}
