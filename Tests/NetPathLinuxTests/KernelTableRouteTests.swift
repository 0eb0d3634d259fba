// SPDX-License-Identifier: Apache-2.0

import NetPathCore
import NetPathLinux
import Testing

/// Which routes the mirrored table keeps, and which changes make the engine ask the kernel again.
struct KernelTableRouteTests {
    private static func route(_ destination: IPAddress?, _ length: Int, table: UInt32 = 254) -> RouteRecord {
        RouteRecord(
            family: destination?.family ?? .ipv4,
            table: table,
            destination: destination,
            destinationLength: length,
            metric: 0,
            nexthops: [Nexthop(interfaceIndex: 2, gateway: "192.0.2.1")]
        )
    }

    @Test("10,000 specific routes leave the table's size and generations as they were")
    func specificRoutesAreIgnored() {
        var table = KernelTable()
        table.apply(.newRoute(Self.route(nil, 0), replace: false))
        let (count, routing, probe) = (table.routeCount, table.routingGeneration, table.probeGeneration)
        for i in 0..<10_000 {
            let address = IPAddress("10.9.\(i >> 8).\(i & 0xff)")!
            do {
                let changed = table.apply(.newRoute(Self.route(address, 32), replace: false))
                #expect(!changed)
            }
        }
        do {
            let changed = table.apply(.deleteRoute(Self.route("10.9.0.1", 32)))
            #expect(!changed)
        }
        #expect(table.routeCount == count)
        #expect(table.routingGeneration == routing && table.probeGeneration == probe)
    }

    @Test("default routes of any table and routes covering the internet probe are kept and move the probe generation")
    func keptRoutes() {
        var table = KernelTable()
        let start = table.probeGeneration
        do {
            let changed = table.apply(.newRoute(Self.route(nil, 0, table: 100), replace: false))
            #expect(changed)
        }
        // A VPN's half-default covers 8.8.8.8; 128.0.0.0/1 does not.
        do {
            let changed = table.apply(.newRoute(Self.route("0.0.0.0", 1), replace: false))
            #expect(changed)
        }
        do {
            let changed = table.apply(.newRoute(Self.route("128.0.0.0", 1), replace: false))
            #expect(!changed)
        }
        do {
            let changed = table.apply(.newRoute(Self.route("8.8.8.0", 24), replace: false))
            #expect(changed)
        }
        #expect(table.routeCount == 3)
        #expect(table.probeGeneration == start + 3)
        #expect(table.defaultRoutesByInterface().isEmpty, "table 100 is reached by no rule")
        do {
            let changed = table.apply(.deleteRoute(Self.route("0.0.0.0", 1)))
            #expect(changed)
        }
        #expect(table.routeCount == 2 && table.probeGeneration == start + 4)
    }

    @Test("a link's admin state moves the routing generation, not the probe's when it flushes no kept route")
    func adminStateAlone() {
        var table = KernelTable()
        let up = LinkRecord(index: 2, name: "eth0", flags: 0x1, operState: 6, mtu: 1500, mac: "", arpType: 1, kind: "")
        table.apply(.newLink(up))
        let (routing, probe) = (table.routingGeneration, table.probeGeneration)
        var down = up
        down.flags = 0
        table.apply(.newLink(down))
        #expect(table.routingGeneration == routing + 1)
        #expect(table.probeGeneration == probe)
        // With a default route through it, the flush is a kept route's change.
        table.apply(.newLink(up))
        table.apply(.newRoute(Self.route(nil, 0), replace: false))
        let before = table.probeGeneration
        table.apply(.newLink(down))
        #expect(table.routeCount == 0 && table.probeGeneration > before)
    }
}
