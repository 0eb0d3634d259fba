// SPDX-License-Identifier: Apache-2.0

import NetPath
import Testing

/// The pure route choice behind HostMonitor.
struct HostReachabilityTests {
    let eth0 = Interface(index: 2, name: "eth0", type: .wired, addresses: ["192.0.2.10/24"])
    let wwan0 = Interface(index: 3, name: "wwan0", type: .cellular, isMetered: true, addresses: ["10.64.0.2/30"])

    @Test("the longest prefix wins, then the lowest metric")
    func kernelRouteChoice() {
        let state = SystemState(interfaces: [eth0, wwan0])
        let routes: [SystemState.TargetRoute] = [
            .init(interfaceIndex: 2, prefixLength: 0, metric: 10, gateway: "192.0.2.1"),
            .init(interfaceIndex: 3, prefixLength: 24, metric: 500, gateway: "10.64.0.1"),
        ]
        let verdict = HostReachability.evaluate(host: "h", addresses: ["203.0.113.7"], state: state) { _ in routes }
        #expect(verdict.status == .reachable && verdict.interface?.name == "wwan0" && verdict.isExpensive)
        #expect(verdict.gateway == "10.64.0.1" && verdict.prefixLength == 24)

        let tie: [SystemState.TargetRoute] = [
            .init(interfaceIndex: 3, prefixLength: 0, metric: 20),
            .init(interfaceIndex: 2, prefixLength: 0, metric: 10),
        ]
        #expect(
            HostReachability.evaluate(host: "h", addresses: ["203.0.113.7"], state: state) { _ in tie }.interface?.name
                == "eth0"
        )
    }

    @Test("the kernel's own choice wins over a longer prefix and a lower metric (a rule sent it there)")
    func kernelChoiceFirst() {
        let state = SystemState(interfaces: [eth0, wwan0])
        let routes: [SystemState.TargetRoute] = [
            .init(
                interfaceIndex: 2,
                prefixLength: 0,
                metric: 10,
                gateway: "192.0.2.1",
                table: 100,
                isKernelChoice: true
            ),
            .init(interfaceIndex: 3, prefixLength: 24, metric: 5, gateway: "10.64.0.1"),
        ]
        let verdict = HostReachability.evaluate(host: "h", addresses: ["203.0.113.7"], state: state) { _ in routes }
        #expect(verdict.interface?.name == "eth0" && verdict.gateway == "192.0.2.1" && verdict.prefixLength == 0)
    }

    @Test("routes through a link without carrier or without an address of the family do not count")
    func unusableInterfacesDoNotCount() {
        var unplugged = eth0
        unplugged.carrier = false
        let routes: [SystemState.TargetRoute] = [.init(interfaceIndex: 2, prefixLength: 24)]
        let state = SystemState(interfaces: [unplugged])
        #expect(
            HostReachability.evaluate(host: "h", addresses: ["203.0.113.7"], state: state) { _ in routes }.status
                == .unreachable
        )
        let v6 = HostReachability.evaluate(
            host: "h",
            addresses: ["2001:db8::7"],
            state: SystemState(interfaces: [eth0])
        ) { _ in routes }
        #expect(v6.status == .unreachable && v6.addresses == ["2001:db8::7"])
    }

    @Test("addresses are tried in order; no address at all is unresolved, not unreachable")
    func addressOrderAndResolutionFailure() {
        let state = SystemState(interfaces: [eth0])
        let verdict = HostReachability.evaluate(host: "h", addresses: ["2001:db8::7", "203.0.113.7"], state: state) {
            address in
            address.family == .ipv4 ? [.init(interfaceIndex: 2, prefixLength: 0)] : []
        }
        #expect(verdict.address == "203.0.113.7" && verdict.addresses.count == 2)
        #expect(HostReachability.evaluate(host: "h", addresses: [], state: state) { _ in [] }.status == .unresolved)
    }

    @Test("a loopback address or one of the host's own is delivered through the loopback interface")
    func localDelivery() {
        let lo = Interface(index: 1, name: "lo", type: .loopback, addresses: ["127.0.0.1/8"])
        let state = SystemState(interfaces: [lo, eth0])
        let everywhere: [SystemState.TargetRoute] = [.init(interfaceIndex: 2, prefixLength: 0, gateway: "192.0.2.1")]
        for local in ["127.0.0.1", "192.0.2.10"] as [IPAddress] {
            let verdict = HostReachability.evaluate(host: "\(local)", addresses: [local], state: state) { _ in
                everywhere
            }
            #expect(
                verdict.status == .reachable && verdict.interface?.name == "lo" && verdict.gateway == nil,
                "\(local)"
            )
        }
        #expect(
            HostReachability.evaluate(host: "x", addresses: ["192.0.2.11"], state: state) { _ in everywhere }.interface?
                .name == "eth0"
        )
    }
}
