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
