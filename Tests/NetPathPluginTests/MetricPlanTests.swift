// SPDX-License-Identifier: Apache-2.0

import NetPathCore
import NetPathPlugin
import Testing

@testable import RouteMetricsPlugin

/// The pure planning of `route-metrics`.
struct MetricPlanTests {
    static func route(_ index: Int32, _ family: IPAddress.Family, _ metric: UInt32) -> RouteEntry {
        let gateway = family == .ipv4 ? IPAddress("192.0.2.\(index)")! : IPAddress("2001:db8::\(index)")!
        return RouteEntry(interfaceIndex: index, route: DefaultRoute(via: gateway, metric: metric))
    }

    static let path = NetworkPath(
        status: .satisfied,
        primaryIPv4: .init(name: "wired0", index: 2, type: .wired),
        primaryIPv6: .init(name: "wired0", index: 2, type: .wired),
        availableInterfaces: [
            .init(name: "wired0", index: 2, type: .wired), .init(name: "wlan0", index: 3, type: .wifi),
        ]
    )

    @Test("the primary gets the lowest metric, then candidates in order, then the rest")
    func targets() {
        let routes = [Self.route(2, .ipv4, 600), Self.route(3, .ipv4, 100), Self.route(4, .ipv4, 50)]
        let targets = MetricPlan.targets(
            family: .ipv4,
            path: Self.path,
            routes: routes,
            types: [4: .wired],
            bases: .init()
        )
        #expect(targets[routes[0]] == 100)
        #expect(targets[routes[1]] == 600)
        // Not a candidate (no carrier, say): ranked after the candidates though its type is wired.
        #expect(targets[routes[2]] == 601)
    }

    @Test("with connectivity probed, an interface without full connectivity is ranked last, even the primary")
    func nonFullRankedLast() {
        let routes = [Self.route(2, .ipv4, 600), Self.route(3, .ipv4, 100), Self.route(4, .ipv4, 50)]
        let plain = MetricPlan.targets(
            family: .ipv4,
            path: Self.path,
            routes: routes,
            types: [4: .wired],
            bases: .init()
        )
        let probed = MetricPlan.targets(
            family: .ipv4,
            path: Self.path,
            routes: routes,
            types: [4: .wired],
            bases: .init(),
            connectivity: [2: .portal, 3: .full, 4: .unknown]
        )
        // Unprobed (unknown) stays where it was; the portal primary drops behind everything.
        #expect(plain[routes[0]]! < plain[routes[1]]!)
        #expect(probed[routes[1]]! < probed[routes[2]]!)
        #expect(probed[routes[2]]! < probed[routes[0]]!)
    }

    @Test("a swap of two metrics parks one route in a free slot first; no move needs a taken slot")
    func swapBreaksTheCycle() {
        let routes = [Self.route(2, .ipv4, 600), Self.route(3, .ipv4, 100)]
        let plan = MetricPlan.moves(routes: routes, targets: [routes[0]: 100, routes[1]: 600])
        #expect(plan.blocked.isEmpty)
        var metrics: [Int32: UInt32] = [2: 600, 3: 100]
        for move in plan.moves {
            #expect(metrics[move.route.interfaceIndex] == move.route.route.metric)
            #expect(!metrics.values.contains(move.metric), "\(move) needs a taken slot")
            metrics[move.route.interfaceIndex] = move.metric
        }
        #expect(metrics == [2: 100, 3: 600])
        #expect(plan.moves.count == 3)
    }

    @Test("no path primary means no change")
    func nothingWithoutPrimary() {
        let routes = [Self.route(2, .ipv6, 600)]
        let path = NetworkPath(status: .unsatisfied, unsatisfiedReason: .noInterface)
        #expect(MetricPlan.targets(family: .ipv6, path: path, routes: routes, types: [:], bases: .init()).isEmpty)
    }
}
