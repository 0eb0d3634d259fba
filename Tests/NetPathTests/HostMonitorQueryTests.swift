import NetPathLinux
import NetPathTesting
import TestSupport
import Testing

/// Querying without listening: a host's reachability now, with no monitor started.
struct HostMonitorQueryTests {
    @Test("a one-shot query answers for a host without leaving a subscription behind")
    func queryOnTheMock() async throws {
        let network = MockPathSource()
        let via = NetworkPath.PathInterface.wired("eth0")
        network.send(HostReachability(host: "192.0.2.80", status: .reachable, address: "192.0.2.80", interface: via))
        let answer = try await HostMonitor.reachability(of: "192.0.2.80", source: network)
        #expect(answer.isReachable && answer.interface == via)
        #expect(try await HostMonitor.reachability(of: "nowhere.example", source: network).status == .unresolved)
        #expect(network.subscribedHosts == ["192.0.2.80", "nowhere.example"])
        #expect(network.subscriberCount == 0, "nothing keeps following the host")
    }

    @Test(
        "a one-shot query answers from the kernel's routing table and stops the engine again",
        .enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces")
    )
    func queryOnTheKernel() async throws {
        try await NetworkNamespace.with(["query", "peer"]) { namespaces in
            let uplinks = try HostMonitorTests.TwoUplinks(namespaces[0], peer: namespaces[1])
            try uplinks.namespace.ip("route", "add", "203.0.113.0/24", "via", "198.51.100.1", "dev", "b0")
            let source = try uplinks.source()
            let answer = try await HostMonitor.reachability(of: "203.0.113.7", source: source)
            #expect(answer.status == .reachable && answer.interface?.name == "b0" && answer.isExpensive)
            #expect(answer.gateway == "198.51.100.1")
            let nowhere = try await HostMonitor.reachability(of: "233.252.0.1", source: source)
            #expect(nowhere.status == .unreachable)
            #expect(!source.isRunning && source.subscriberCount == 0, "no engine, no subscription left")
        }
    }
}
