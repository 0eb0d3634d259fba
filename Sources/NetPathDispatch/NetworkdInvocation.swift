// SPDX-License-Identifier: Apache-2.0

import NetPathCore

/// What a script written for networkd-dispatcher(8) receives from netpath: argv and environment
/// as networkd-dispatcher builds them (`run_hooks_for_state`), when an interface enters the state
/// of the script's directory (``NetworkdState``).
///
/// - **argv**: `[PATH]` and nothing else: the script's path in the search path
///   (`/etc/networkd-dispatcher/routable.d/NAME`), as networkd-dispatcher runs it.
/// - **environment**, exactly these variables (nothing inherited from the agent; the original
///   passes its own environment on):
///
///   | variable | value |
///   |---|---|
///   | `IFACE` | the interface name |
///   | `STATE` | the state entered: the name of the script's directory without `.d` |
///   | `OperationalState` | the interface's operational state now (`routable`, `off`, …) |
///   | `AdministrativeState` | its administrative state now (`configured`, `configuring`, `linger`) |
///   | `ADDR` | the first address `networkctl status` would list: the first IPv4 address, else the first IPv6 one (link-local included); empty when there is none |
///   | `IP_ADDRS` | the IPv4 addresses without prefix length, space-separated, `127.*` left out |
///   | `IP6_ADDRS` | the IPv6 addresses likewise, `fe80:*` left out |
///   | `ESSID` | empty: netpath does not read Wi-Fi network names (networkd-dispatcher sets it for `wlan` links only) |
///   | `json` | networkd-dispatcher's interpretation of `networkctl status IFACE`, keys sorted: `Address`, `AdministrativeState`, `Gateway`, `HW Address`, `InterfaceName`, `OperationalState`, `State`, `Type` |
///   | `PATH` | ``HookInvocation/path`` |
///
///   Addresses are the interface's ready ones (tentative and DAD-failed addresses left out),
///   IPv4 before IPv6, each family in netpath's order; after the interface has gone away, the
///   addresses it had last.
/// - **stdin** is empty; everything else (working directory, process group, timeout, output) is
///   as for native hooks (``HookInvocation``).
package enum NetworkdInvocation {
    /// The variables in the order networkd-dispatcher sets them.
    static let variableOrder = [
        "ADDR", "ESSID", "IP_ADDRS", "IP6_ADDRS", "IFACE", "STATE", "AdministrativeState", "OperationalState",
        "json", "PATH",
    ]
    static let interfaceVariables: Set<String> = ["IFACE"]

    /// The invocation of the script at `path` (its directory's path and its name) for
    /// `interface` entering `state`.
    package static func invocation(
        script: String,
        path: String,
        interface: String,
        entering state: String,
        now: NetworkdState,
        interfaceState: Interface?,
        timeout: Duration
    ) -> HookInvocation {
        HookInvocation(
            hook: script,
            arguments: [path],
            environment: environment(interface: interface, entering: state, now: now, interfaceState: interfaceState),
            variableOrder: variableOrder,
            interfaceVariables: interfaceVariables,
            timeout: timeout
        )
    }

    /// The environment of the table above.
    package static func environment(
        interface: String,
        entering state: String,
        now: NetworkdState,
        interfaceState: Interface?
    ) -> [String: String] {
        let listed = addresses(interfaceState)
        let ipv4 = listed.filter { $0.family == .ipv4 && !$0.description.hasPrefix("127.") }
        let ipv6 = listed.filter { $0.family == .ipv6 && !$0.description.hasPrefix("fe80:") }
        return [
            "IFACE": interface,
            "STATE": state,
            "OperationalState": now.operational.rawValue,
            "AdministrativeState": now.administrative.rawValue,
            "ADDR": listed.first?.description ?? "",
            "IP_ADDRS": ipv4.map(\.description).joined(separator: " "),
            "IP6_ADDRS": ipv6.map(\.description).joined(separator: " "),
            "ESSID": "",
            "json": json(interface: interface, now: now, interfaceState: interfaceState),
            "PATH": HookInvocation.path,
        ]
    }

    /// The addresses `networkctl status` lists: ready ones, IPv4 first.
    static func addresses(_ interface: Interface?) -> [IPAddress] {
        let ready = (interface?.addresses ?? []).filter { !$0.isTentative && !$0.isDADFailed }.map(\.address)
        return ready.filter { $0.family == .ipv4 } + ready.filter { $0.family == .ipv6 }
    }

    /// networkctl's `Type`: the udev DEVTYPE when the link has one networkctl shows, else the
    /// hardware type (`ether` with a MAC address, `none` without).
    static func linkType(_ interface: Interface?) -> String {
        guard let interface else { return "" }
        switch interface.type {
        case .loopback: return "loopback"
        case .wifi: return "wlan"
        case .cellular: return "wwan"
        default: break
        }
        if ["bridge", "bond", "vlan", "wireguard"].contains(interface.kind) { return interface.kind }
        return interface.mac.isEmpty ? "none" : "ether"
    }

    /// The `json` variable: Python's `json.dumps(data, sort_keys=True)` layout (`", "` and
    /// `": "` separators, non-ASCII escaped), with the keys networkctl's status has for what
    /// netpath knows. A key with no value is left out, as networkctl leaves out the line.
    static func json(interface: String, now: NetworkdState, interfaceState: Interface?) -> String {
        var fields: [(String, String)] = []
        let listed = addresses(interfaceState)
        if !listed.isEmpty { fields.append(("Address", list(listed.map(\.description)))) }
        fields.append(("AdministrativeState", quoted(now.administrative.rawValue)))
        let gateways = (interfaceState?.defaultRoutes ?? []).compactMap(\.gateway).map(\.description)
        if !gateways.isEmpty { fields.append(("Gateway", list(gateways))) }
        if let mac = interfaceState?.mac, !mac.isEmpty { fields.append(("HW Address", quoted(mac))) }
        fields.append(("InterfaceName", quoted(interface)))
        fields.append(("OperationalState", quoted(now.operational.rawValue)))
        fields.append(("State", quoted(now.description)))
        fields.append(("Type", quoted(linkType(interfaceState))))
        return "{" + fields.map { "\(quoted($0.0)): \($0.1)" }.joined(separator: ", ") + "}"
    }

    private static func list(_ values: [String]) -> String {
        "[" + values.map(quoted).joined(separator: ", ") + "]"
    }

    /// A JSON string as Python writes it (`ensure_ascii`): control characters and everything
    /// beyond ASCII as `\uXXXX`, so the value never holds a raw control character.
    static func quoted(_ text: String) -> String {
        var result = "\""
        for unit in text.utf16 {
            switch unit {
            case 0x22: result += "\\\""
            case 0x5C: result += "\\\\"
            case 0x0A: result += "\\n"
            case 0x0D: result += "\\r"
            case 0x09: result += "\\t"
            case 0x08: result += "\\b"
            case 0x0C: result += "\\f"
            case 0x20..<0x7F: result.unicodeScalars.append(Unicode.Scalar(UInt8(unit)))
            default:
                let digits = Array("0123456789abcdef")
                result += "\\u" + String((0..<4).map { digits[Int(unit >> (12 - 4 * UInt16($0))) & 0xF] })
            }
        }
        return result + "\""
    }
}
