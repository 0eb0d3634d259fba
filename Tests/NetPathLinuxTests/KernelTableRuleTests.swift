// SPDX-License-Identifier: Apache-2.0

import NetPathCore
import NetPathLinux
import Testing

/// Rules in the mirrored table: which tables count, and which rule sent a lookup where.
struct KernelTableRuleTests {
    private static let defaults: [RuleRecord] = [
        RuleRecord(family: .ipv4, priority: 0, table: 255),
        RuleRecord(family: .ipv4, priority: 32766, table: 254),
        RuleRecord(family: .ipv4, priority: 32767, table: 253),
    ]

    private func table(_ rules: [RuleRecord]) -> KernelTable {
        var table = KernelTable()
        for rule in rules { table.apply(.newRule(rule)) }
        return table
    }

    @Test("only tables a rule of the family looks up count; with no rules, main and default")
    func reachableTables() {
        #expect(KernelTable().reachableTables(.ipv4) == [254, 253])
        var table = table(Self.defaults + [RuleRecord(family: .ipv4, priority: 100, table: 200, sourceLength: 8)])
        #expect(table.reachableTables(.ipv4) == [255, 254, 253, 200])
        #expect(table.reachableTables(.ipv6) == [254, 253])
        table.apply(.deleteRule(RuleRecord(family: .ipv4, priority: 100, table: 200, sourceLength: 8)))
        #expect(!table.reachableTables(.ipv4).contains(200))
    }

    @Test("default routes of a table no rule reaches are not an interface's")
    func unreachableDefaultRoutes() {
        var table = table(Self.defaults)
        let hop = [Nexthop(interfaceIndex: 3, gateway: "10.0.0.1")]
        table.apply(
            .newRoute(
                RouteRecord(
                    family: .ipv4,
                    table: 51820,
                    destination: nil,
                    destinationLength: 0,
                    metric: 0,
                    nexthops: hop
                ),
                replace: false
            )
        )
        #expect(table.defaultRoutesByInterface()[3] == nil)
        table.apply(
            .newRule(
                RuleRecord(family: .ipv4, priority: 32765, table: 51820, inverted: true, mark: .init(value: 51820))
            )
        )
        #expect(table.defaultRoutesByInterface()[3] == [DefaultRoute(family: .ipv4, gateway: "10.0.0.1", table: 51820)])
    }

    @Test("the rule that chose a table: selectors, suppress_prefixlength, nop and goto, as the kernel walks them")
    func ruleChoosing() {
        let wg = [
            RuleRecord(family: .ipv4, priority: 32764, table: 254, suppressPrefixLength: 0),
            RuleRecord(family: .ipv4, priority: 32765, table: 51820, inverted: true, mark: .init(value: 0xca6c)),
        ]
        let kernel = table(Self.defaults + wg)
        // The default route in main is suppressed at 32764, so main's default came from 32766.
        #expect(kernel.rule(choosing: KernelRoute(family: .ipv4, interfaceIndex: 2))?.priority == 32766)
        // A specific main route (a VPN's /1) survives suppress_prefixlength 0 at 32764.
        #expect(
            kernel.rule(choosing: KernelRoute(family: .ipv4, interfaceIndex: 2, prefixLength: 1))?.priority == 32764
        )
        #expect(kernel.rule(choosing: KernelRoute(family: .ipv4, interfaceIndex: 9, table: 51820))?.priority == 32765)
        #expect(
            kernel.rule(choosing: KernelRoute(family: .ipv4, interfaceIndex: 9, table: 51820))?.selector
                == "not from all fwmark 0xca6c lookup 51820"
        )

        // A marked-traffic rule (fwmark 0x1) and a source rule do not match plain traffic.
        let selective = table(
            Self.defaults + [
                RuleRecord(family: .ipv4, priority: 10, table: 100, mark: .init(value: 1)),
                RuleRecord(family: .ipv4, priority: 20, table: 100, source: "10.0.0.2", sourceLength: 32),
                RuleRecord(family: .ipv4, priority: 30, action: .nop),
                RuleRecord(family: .ipv4, priority: 40, action: .goto, gotoTarget: 60),
                RuleRecord(family: .ipv4, priority: 50, table: 100),
                RuleRecord(family: .ipv4, priority: 60, table: 100, destination: "8.0.0.0", destinationLength: 8),
            ]
        )
        // 10 and 20 do not match, 30 is a nop, 40 jumps over 50 to 60, which covers the probe.
        #expect(selective.rule(choosing: KernelRoute(family: .ipv4, interfaceIndex: 2, table: 100))?.priority == 60)

        let blocked = table(Self.defaults + [RuleRecord(family: .ipv4, priority: 5, action: .unreachable)])
        #expect(blocked.rule(choosing: KernelRoute(family: .ipv4, interfaceIndex: 2)) == nil)
    }

    @Test("a rule prints as ip rule prints it")
    func selectorText() {
        #expect(RuleRecord(family: .ipv4, priority: 0, table: 255).selector == "from all lookup local")
        #expect(
            RuleRecord(
                family: .ipv6,
                priority: 1,
                table: 7,
                source: "2001:db8::",
                sourceLength: 32,
                mark: .init(value: 0x10, mask: 0xff)
            )
            .selector == "from 2001:db8::/32 fwmark 0x10/0xff lookup 7"
        )
        #expect(
            RuleRecord(family: .ipv4, priority: 1, table: 254, suppressPrefixLength: 0).selector
                == "from all lookup main suppress_prefixlength 0"
        )
    }

    @Test("a carrier flip does not change where the kernel routes; admin state, routes and rules do")
    func routingGeneration() {
        var table = KernelTable()
        let up = LinkRecord(
            index: 2,
            name: "eth0",
            flags: 0x1 | 0x10000,
            operState: 6,
            mtu: 1500,
            mac: "",
            arpType: 1,
            kind: ""
        )
        table.apply(.newLink(up))
        let start = table.routingGeneration
        var noCarrier = up
        noCarrier.flags = 0x1
        let changed = table.apply(.newLink(noCarrier))
        #expect(changed)
        #expect(table.routingGeneration == start, "carrier alone")
        var down = noCarrier
        down.flags = 0
        table.apply(.newLink(down))
        #expect(table.routingGeneration == start + 1, "admin down")
        table.apply(.newRule(RuleRecord(family: .ipv4, priority: 100, table: 200)))
        #expect(table.routingGeneration == start + 2, "a rule")
        table.apply(
            .newRoute(
                RouteRecord(
                    family: .ipv4,
                    table: 254,
                    destination: nil,
                    destinationLength: 0,
                    metric: 0,
                    nexthops: [Nexthop(interfaceIndex: 2)]
                ),
                replace: false
            )
        )
        #expect(table.routingGeneration == start + 3, "a route")
    }
}
