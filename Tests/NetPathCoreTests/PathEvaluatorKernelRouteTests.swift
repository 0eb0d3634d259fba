// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathCore
import Testing

/// Policy routing in the pure evaluator: the kernel's route to the internet (`ip route get`,
/// rules applied) decides among candidates that no `prefer` orders.
struct PathEvaluatorKernelRouteTests {
    /// wg0: a tunnel with an address and a default route only in table 51820.
    private let tunnel = Interface(
        index: 9,
        name: "wg0",
        type: .other,
        kind: "tun",
        addresses: ["10.66.0.2/32"],
        defaultRoutes: [DefaultRoute(family: .ipv4, metric: 0, table: 51820)]
    )
    private let rule = RoutingRule(priority: 32765, selector: "not from all fwmark 0xca6c lookup 51820")

    @Test("the kernel's route beats a lower main-table metric, and explain names its table and rule")
    func kernelRouteFirst() throws {
        var tunnel = tunnel
        tunnel.defaultRoutes = [DefaultRoute(family: .ipv4, metric: 1000, table: 51820)]
        let state = SystemState(
            interfaces: [Sample.eth0(metric: 100), tunnel],
            kernelRoutes: [KernelRoute(family: .ipv4, interfaceIndex: 9, metric: 1000, table: 51820, rule: rule)]
        )
        let evaluation = PathEvaluator(policy: .default).evaluate(state)
        #expect(evaluation.path.primaryIPv4?.name == "wg0")
        #expect(evaluation.path.availableInterfaces.map(\.name) == ["wg0", "eth0"])
        #expect(
            evaluation.verdicts.first { $0.interface.name == "eth0" }?.outcome
                == .candidate(rank: 1, lostBecause: .notKernelRoute)
        )
        let detail = try #require(evaluation.verdicts.first { $0.interface.name == "wg0" }?.detail)
        #expect(detail.contains("table 51820 (kernel's route, rule 32765: not from all fwmark"), "\(detail)")
    }

    @Test("with a target, the interface the kernel sends it through wins over a lower metric")
    func targetKernelChoiceFirst() throws {
        let state = SystemState(
            interfaces: [Sample.eth0(metric: 100), Sample.wlan0(metric: 600)],
            targets: [
                "203.0.113.5": .init(
                    addresses: ["203.0.113.5"],
                    routes: [
                        .init(interfaceIndex: 2, prefixLength: 0, metric: 100, gateway: Sample.gateway4(2)),
                        .init(
                            interfaceIndex: 3,
                            prefixLength: 0,
                            metric: 600,
                            gateway: Sample.gateway4(3),
                            table: 100,
                            isKernelChoice: true
                        ),
                    ]
                )
            ]
        )
        let evaluation = PathEvaluator(policy: PathPolicy(target: "203.0.113.5")).evaluate(state)
        #expect(evaluation.path.primary?.name == "wlan0")
        #expect(evaluation.path.gateways == [Sample.gateway4(3)])
        #expect(evaluation.path.availableInterfaces.map(\.name) == ["wlan0", "eth0"])
        let detail = try #require(evaluation.verdicts.first { $0.interface.name == "wlan0" }?.detail)
        #expect(detail.contains("table 100 (kernel's route to 203.0.113.5)"), "\(detail)")
        // Without the kernel's mark, the metric decides as before.
        var plain = state
        plain.targets["203.0.113.5"]?.routes[1].isKernelChoice = false
        #expect(PathEvaluator(policy: PathPolicy(target: "203.0.113.5")).path(for: plain).primary?.name == "eth0")
    }

    @Test("a target route's table and kernel mark are written only when they say something")
    func targetRouteCoding() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let plain = SystemState.TargetRoute(interfaceIndex: 2, prefixLength: 24, metric: 5)
        #expect(
            String(decoding: try encoder.encode(plain), as: UTF8.self)
                == #"{"interface_index":2,"metric":5,"prefix_len":24}"#
        )
        let marked = SystemState.TargetRoute(interfaceIndex: 2, prefixLength: 0, table: 100, isKernelChoice: true)
        let text = try encoder.encode(marked)
        #expect(String(decoding: text, as: UTF8.self).contains(#""kernel_choice":true"#))
        #expect(try JSONDecoder().decode(SystemState.TargetRoute.self, from: text) == marked)
        let old = #"{"interface_index":2,"metric":5,"prefix_len":24}"#
        #expect(try JSONDecoder().decode(SystemState.TargetRoute.self, from: Data(old.utf8)) == plain)
    }

    @Test("prefer still orders before the kernel's route")
    func preferBeforeKernel() {
        let state = SystemState(
            interfaces: [Sample.eth0(metric: 100), tunnel],
            kernelRoutes: [KernelRoute(family: .ipv4, interfaceIndex: 9, table: 51820, rule: rule)]
        )
        let path = PathEvaluator(policy: PathPolicy(prefer: [.wired])).path(for: state)
        #expect(path.primary?.name == "eth0")
    }

    @Test("an interface the kernel routes the internet through is a candidate without a default route")
    func halfDefaultRoutes() {
        // OpenVPN's def1: 0.0.0.0/1 and 128.0.0.0/1 through tun0, no default route.
        var vpn = tunnel
        vpn.defaultRoutes = []
        let state = SystemState(
            interfaces: [Sample.eth0(metric: 100), vpn],
            kernelRoutes: [KernelRoute(family: .ipv4, interfaceIndex: 9, prefixLength: 1)]
        )
        let path = PathEvaluator(policy: .default).path(for: state)
        #expect(path.primaryIPv4?.name == "wg0")
        #expect(path.availableInterfaces.map(\.name) == ["wg0", "eth0"])
    }

    @Test("without kernel routes (old traces) the lowest metric of any table wins, as before")
    func withoutKernelRoutes() {
        let path = PathEvaluator(policy: .default).path(
            for: SystemState(interfaces: [Sample.eth0(metric: 100), tunnel])
        )
        #expect(path.primaryIPv4?.name == "wg0")
        #expect(tunnel.isUsable)
    }

    @Test("kernel routes round-trip through the state's JSON, and old JSON without them still decodes")
    func json() throws {
        let state = SystemState(
            interfaces: [tunnel],
            kernelRoutes: [KernelRoute(family: .ipv4, interfaceIndex: 9, table: 51820, rule: rule)]
        )
        let encoded = try JSONCoding.line(state)
        #expect(encoded.contains(#""kernel_routes":[{"#))
        #expect(try JSONDecoder().decode(SystemState.self, from: Data(encoded.utf8)) == state)
        let old = #"{"interfaces":[],"dns_servers":[]}"#
        #expect(try JSONDecoder().decode(SystemState.self, from: Data(old.utf8)).kernelRoutes == [])
    }
}
