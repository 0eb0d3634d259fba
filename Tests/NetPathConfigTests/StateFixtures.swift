// SPDX-License-Identifier: Apache-2.0

import FoundationEssentials
import NetPathCore

/// Interfaces and states for rule and policy tests.
enum StateFixtures {
    static let time = Date(timeIntervalSince1970: 1_800_000_000)

    static func wired(metric: UInt32 = 100, carrier: Bool = true, mtu: UInt32 = 1500) -> Interface {
        Interface(
            index: 2,
            name: "eth0",
            type: .wired,
            carrier: carrier,
            mtu: mtu,
            addresses: ["192.0.2.10/24"],
            defaultRoutes: [DefaultRoute(via: "192.0.2.1", metric: metric)]
        )
    }

    static func wifi(metric: UInt32 = 600, address: InterfaceAddress = "198.51.100.7/24") -> Interface {
        Interface(
            index: 3,
            name: "wlan0",
            type: .wifi,
            addresses: [address],
            defaultRoutes: [DefaultRoute(via: "198.51.100.1", metric: metric)]
        )
    }

    static func lte(metric: UInt32 = 50) -> Interface {
        Interface(
            index: 4,
            name: "wwan0",
            type: .cellular,
            isMetered: true,
            addresses: ["203.0.113.9/30"],
            defaultRoutes: [DefaultRoute(family: .ipv4, metric: metric)]
        )
    }

    static func state(_ interfaces: Interface...) -> SystemState {
        SystemState(interfaces: interfaces)
    }
}
