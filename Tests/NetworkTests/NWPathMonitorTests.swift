// SPDX-License-Identifier: Apache-2.0

import Dispatch
import NetPathTesting
import Network
import Synchronization
import Testing

/// The Network module's mapping of NetPath's paths to Apple's shapes, on the mock source.
struct NWPathMonitorTests {
    static let eth0 = NetworkPath.PathInterface(name: "eth0", index: 2, type: .wired)
    static let wwan0 = NetworkPath.PathInterface(name: "wwan0", index: 7, type: .cellular, isMetered: true)

    @Test("status, interfaces, costs, families and gateways map to Apple's fields")
    func satisfiedPathMaps() {
        let path = NWPath(
            NetworkPath(
                status: .satisfied,
                primaryIPv4: Self.wwan0,
                primaryIPv6: Self.wwan0,
                availableInterfaces: [Self.wwan0, Self.eth0],
                isConstrained: true,
                supportsIPv4: true,
                supportsIPv6: true,
                supportsDNS: true,
                gateways: ["10.64.0.1", "fe80::1"]
            )
        )
        #expect(path.status == .satisfied)
        #expect(path.unsatisfiedReason == .notAvailable)
        #expect(path.availableInterfaces.map(\.name) == ["wwan0", "eth0"])
        #expect(path.availableInterfaces.map(\.index) == [7, 2])
        #expect(path.availableInterfaces.map(\.type) == [.cellular, .wiredEthernet])
        #expect(path.isExpensive && path.isConstrained)
        #expect(path.supportsIPv4 && path.supportsIPv6 && path.supportsDNS)
        #expect(
            path.gateways == [
                .hostPort(host: .ipv4(IPv4Address("10.64.0.1")!), port: .any),
                .hostPort(host: .ipv6(IPv6Address("fe80::1")!), port: 0),
            ]
        )
        #expect(path.localEndpoint == nil && path.remoteEndpoint == nil)
        #expect(path.usesInterfaceType(.cellular) && !path.usesInterfaceType(.wiredEthernet))
        #expect(
            path.debugDescription
                == "satisfied (Path is satisfied), interface: wwan0[cellular], ipv4, ipv6, dns, expensive, constrained, uses cellular"
        )
    }

    @Test(
        "every NetPath status and reason maps, the reason always notAvailable, the description specific",
        arguments: [
            (NetworkPath.unsatisfied(.noInterface), NWPath.Status.unsatisfied, "unsatisfied (No network route)"),
            (.unsatisfied(.noRoute), .unsatisfied, "unsatisfied (No default route)"),
            (.unsatisfied(.onlyProhibitedTypes), .unsatisfied, "unsatisfied (Interface type prohibited)"),
            (.unsatisfied(.requiredTypeAbsent), .unsatisfied, "unsatisfied (Required interface type absent)"),
            (.unsatisfied(.meteredDenied), .unsatisfied, "unsatisfied (Metered interface denied)"),
            (.unsatisfied(.targetUnreachable), .unsatisfied, "unsatisfied (Target unreachable)"),
            (
                NetworkPath(status: .requiresConnection), .requiresConnection,
                "requiresConnection (No usable address yet)"
            ),
        ]
    )
    func statusesAndReasonsMap(_ netPath: NetworkPath, _ status: NWPath.Status, _ text: String) {
        let path = NWPath(netPath)
        #expect(path.status == status)
        #expect(path.unsatisfiedReason == .notAvailable, "Linux has none of Apple's per-app denials")
        #expect("\(path)" == text)
        #expect(path.availableInterfaces.isEmpty && !path.isExpensive && path.gateways.isEmpty)
    }

    @Test("every interface type maps", arguments: InterfaceType.allCases)
    func interfaceTypesMap(_ type: InterfaceType) {
        let expected: [InterfaceType: NWInterface.InterfaceType] = [
            .wired: .wiredEthernet, .wifi: .wifi, .cellular: .cellular, .loopback: .loopback, .other: .other,
        ]
        let path = NWPath(.satisfied(via: .init(name: "x0", index: 9, type: type)))
        #expect(path.availableInterfaces.first?.type == expected[type])
        #expect(path.usesInterfaceType(expected[type]!))
    }

    @Test("the Apple initialisers build the matching policies")
    func initialisersBuildPolicies() {
        #expect(NWPathMonitor().monitor.policy == .default)
        #expect(NWPathMonitor(requiredInterfaceType: .wiredEthernet).monitor.policy.require == [.wired])
        #expect(
            NWPathMonitor(prohibitedInterfaceTypes: [.cellular, .loopback]).monitor.policy.prohibit == [
                .cellular, .loopback,
            ]
        )
    }

    @Test("currentPath is unsatisfied before start, the real path once start returns; the handler runs on the queue")
    func handlerDelivery() async throws {
        let network = MockPathSource(.satisfied(via: .wired("eth0")))
        let monitor = NWPathMonitor(policy: .default, source: network)
        #expect(monitor.currentPath.status == .unsatisfied && monitor.currentPath.availableInterfaces.isEmpty)
        #expect(monitor.queue == nil)
        let queue = DispatchQueue(label: "nw")
        // A handler that mutates captured state, as Apple's signature allows: it is not @Sendable.
        var seen: [NWPath.Status] = []
        monitor.pathUpdateHandler = { path in
            dispatchPrecondition(condition: .onQueue(queue))
            seen.append(path.status)
        }
        monitor.start(queue: queue)
        #expect(monitor.currentPath.availableInterfaces.map(\.name) == ["eth0"])
        #expect(monitor.queue === queue)
        try await network.deliver(.unsatisfied(.noInterface))
        #expect(queue.sync { seen } == [.satisfied, .unsatisfied])
        #expect(monitor.currentPath.status == .unsatisfied)
        monitor.cancel()
        #expect(monitor.queue == nil)
        network.send(.satisfied(via: .wifi()))
        #expect(queue.sync { seen } == [.satisfied, .unsatisfied], "nothing after cancel")
    }

    @Test("for await path in monitor: the current path, then each change")
    func asyncSequence() async throws {
        let network = MockPathSource(.unsatisfied(.noInterface))
        let monitor = NWPathMonitor(policy: .default, source: network)
        var paths = monitor.makeAsyncIterator()
        #expect(await paths.next()?.status == .unsatisfied)
        network.send(.satisfied(via: .wifi("wlan0")))
        let next = await paths.next()
        #expect(next?.status == .satisfied && next?.availableInterfaces.first?.type == .wifi)
    }

    @Test("endpoints parse and print like Apple's")
    func endpoints() {
        #expect(NWEndpoint.Host("192.0.2.1") == .ipv4(IPv4Address("192.0.2.1")!))
        #expect(NWEndpoint.Host("2001:0db8::0007") == .ipv6(IPv6Address("2001:db8::7")!))
        #expect(NWEndpoint.Host("example.com") == .name("example.com", nil))
        #expect("\(NWEndpoint.hostPort(host: "2001:db8::7", port: .https))" == "[2001:db8::7]:443")
        #expect("\(NWEndpoint.hostPort(host: "192.0.2.1", port: 8080))" == "192.0.2.1:8080")
        #expect(IPv4Address("300.1.2.3") == nil && IPv6Address("fe80::zz") == nil)
        #expect(IPv4Address.loopback.isLoopback && IPv6Address("fe80::1")!.isLinkLocal)
    }
}
