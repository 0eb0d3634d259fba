// SPDX-License-Identifier: Apache-2.0

import FoundationEssentials
import NetPathCore

/// Interfaces as the kernel shows them on a typical multi-uplink box, for evaluator and tracker
/// tests. Each uplink `n` lives in `10.0.n.0/24` and `2001:db8:n::/64`, with its gateway at `.1`.
enum Sample {
    /// A connected uplink with a usable address and a default route per family it is given, the
    /// way DHCP and router advertisements leave it.
    static func uplink(
        _ index: Int32,
        _ name: String,
        _ type: InterfaceType,
        metric: UInt32 = 100,
        ipv4: Bool = true,
        ipv6: Bool = false,
        ipv6Metric: UInt32? = nil,
        metered: Bool = false,
        carrier: Bool = true,
        adminUp: Bool = true,
        mtu: UInt32 = 1500,
        kind: String = ""
    ) -> Interface {
        var addresses: [InterfaceAddress] = []
        var routes: [DefaultRoute] = []
        if ipv4 {
            addresses.append(InterfaceAddress(cidr: "10.0.\(index).2/24")!)
            routes.append(DefaultRoute(via: gateway4(index), metric: metric))
        }
        if ipv6 {
            addresses.append(InterfaceAddress(cidr: "2001:db8:\(index)::2/64")!)
            addresses.append(InterfaceAddress(cidr: "fe80::\(index):2/64")!)
            routes.append(DefaultRoute(via: gateway6(index), metric: ipv6Metric ?? metric))
        }
        return Interface(
            index: index,
            name: name,
            type: type,
            kind: kind,
            adminUp: adminUp,
            carrier: carrier,
            mtu: mtu,
            isMetered: metered,
            meteredReason: metered ? (type == .cellular ? .cellular : .tether) : .default,
            addresses: addresses,
            defaultRoutes: routes
        )
    }

    static func gateway4(_ index: Int32) -> IPAddress { IPAddress("10.0.\(index).1")! }
    static func gateway6(_ index: Int32) -> IPAddress { IPAddress("fe80::\(index):1")! }

    static let loopback = Interface(
        index: 1,
        name: "lo",
        type: .loopback,
        mtu: 65536,
        addresses: ["127.0.0.1/8", "::1/128"]
    )
    static func eth0(metric: UInt32 = 100) -> Interface { uplink(2, "eth0", .wired, metric: metric) }
    static func wlan0(metric: UInt32 = 600) -> Interface { uplink(3, "wlan0", .wifi, metric: metric) }
    static func wwan0(metric: UInt32 = 50) -> Interface { uplink(4, "wwan0", .cellular, metric: metric, metered: true) }

    /// A fixed instant with whole microseconds, so times survive RFC 3339 text unchanged.
    static let time = Date(timeIntervalSince1970: 1_795_319_100)  // 2026-11-22T03:45:00Z
}
