// SPDX-License-Identifier: Apache-2.0

import NetPathConfig
import NetPathControl
import NetPathCore

/// The human form of `status`: one line per interface like `ip -br`, then one block per path.
enum StatusRenderer {
    /// The ignored links: `ignoredCount` in one line after the table, or `ignored` listed with
    /// why when given.
    static func render(
        _ state: SystemState,
        paths: [NetworkPath],
        ignoredCount: Int = 0,
        ignored: [IgnoredInterface]? = nil
    ) -> String {
        var rows: [[String]] = [
            ["IDX", "INTERFACE", "TYPE", "KIND", "STATE", "METERED", "CONNECTIVITY", "ADDRESSES"]
        ]
        for i in state.interfaces {
            let link = !i.adminUp ? "down" : (i.carrier ? (i.isUsable ? "routable" : "carrier") : "no-carrier")
            let metered = i.isMetered ? "yes (\(i.meteredReason.rawValue))" : "no"
            let addresses = i.addresses.map(\.description).joined(separator: " ")
            rows.append([
                String(i.index), i.name, i.type.rawValue, i.kind.isEmpty ? "-" : i.kind, link, metered,
                connectivity(i.connectivity, portal: i.portalURL, roundTrip: i.roundTrip), addresses,
            ])
        }
        var out = table(rows)
        let count = ignored?.count ?? ignoredCount
        if count > 0 {
            let noun = count == 1 ? "link" : "links"
            if let ignored {
                out += "\n\(count) \(noun) ignored ([agent] ignore):\n"
                out += table(ignored.map { ["  \($0.index)", $0.name.escapingControlCharacters, $0.reason] })
            } else {
                out += "\n\(count) \(noun) ignored ([agent] ignore; netpathctl status --all lists them)\n"
            }
        }
        if !state.kernelRoutes.isEmpty {
            out += "\nkernel routes to the internet (ip route get, rules applied):\n"
            for route in state.kernelRoutes {
                let name =
                    state.interfaces.first { $0.index == route.interfaceIndex }?.name ?? "#\(route.interfaceIndex)"
                out += "  \(route.family == .ipv4 ? "IPv4" : "IPv6"): \(name) \(route)\n"
            }
        }
        for path in paths {
            out += "\n" + render(path)
        }
        return out
    }

    static func render(_ path: NetworkPath) -> String {
        var out = "policy \(path.policy): \(path.status.rawValue)"
        if let primary = path.primary {
            out += " via \(primary.name) (\(primary.type))"
        } else if let reason = path.unsatisfiedReason {
            out += " (\(reason.rawValue))"
        }
        out += "\n"
        func name(_ i: NetworkPath.PathInterface?) -> String { i?.name ?? "-" }
        out +=
            "  available: \(path.availableInterfaces.isEmpty ? "-" : path.availableInterfaces.map(\.name).joined(separator: ", "))\n"
        out +=
            "  IPv4: \(name(path.primaryIPv4))  IPv6: \(name(path.primaryIPv6))  DNS: \(path.supportsDNS ? "yes" : "no")"
        out += "  expensive: \(path.isExpensive ? "yes" : "no")  constrained: \(path.isConstrained ? "yes" : "no")\n"
        if !path.gateways.isEmpty {
            out += "  gateways: \(path.gateways.map(\.description).joined(separator: ", "))\n"
        }
        if path.connectivity != .unknown {
            out +=
                "  connectivity: \(connectivity(path.connectivity, portal: path.portalURL, roundTrip: path.roundTrip))\n"
        }
        return out
    }

    /// `full (12 ms)`, `portal http://portal/login`, `unknown`.
    static func connectivity(_ state: Connectivity, portal: String?, roundTrip: Duration?) -> String {
        var text = state.rawValue
        if state == .portal, let portal { text += " \(portal.escapingControlCharacters)" }
        if let roundTrip { text += " (\(Int(roundTrip.milliseconds.rounded())) ms)" }
        return text
    }

    static func table(_ rows: [[String]]) -> String { TextTable.render(rows) }
}
