// SPDX-License-Identifier: Apache-2.0

import Testing

@testable import NetPathCore

/// netpath's interface state mapped onto systemd-networkd's states, state by state, as
/// networkctl(1) defines them.
struct NetworkdStateTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var interface: Interface
        var operational: NetworkdState.Operational
        var administrative: NetworkdState.Administrative
        var testDescription: String { name }
    }

    static let global4 = InterfaceAddress(cidr: "192.0.2.10/24")!
    static let global6 = InterfaceAddress(cidr: "2001:db8::10/64")!
    static let linkLocal6 = InterfaceAddress(cidr: "fe80::1/64")!
    static let route4 = DefaultRoute(via: IPAddress("192.0.2.1"))

    static func link(
        adminUp: Bool = true,
        carrier: Bool = true,
        operState: Interface.OperationalState? = nil,
        addresses: [InterfaceAddress] = [],
        routes: [DefaultRoute] = []
    ) -> Interface {
        Interface(
            index: 3,
            name: "eth0",
            type: .wired,
            adminUp: adminUp,
            carrier: carrier,
            operState: operState,
            addresses: addresses,
            defaultRoutes: routes
        )
    }

    static let cases: [Case] = [
        .init(
            name: "off: administratively down, whatever its addresses",
            interface: link(adminUp: false, carrier: false, addresses: [global4], routes: [route4]),
            operational: .off,
            administrative: .configuring
        ),
        .init(
            name: "no-carrier: up without carrier (lower layer down)",
            interface: link(carrier: false, addresses: [global4]),
            operational: .noCarrier,
            administrative: .configuring
        ),
        .init(
            name: "no-carrier: the kernel says down although the flag is up (IF_OPER_DOWN)",
            interface: link(operState: .down, addresses: [global4]),
            operational: .noCarrier,
            administrative: .configuring
        ),
        .init(
            name: "dormant: the kernel's operational state is dormant (802.1X not done)",
            interface: link(operState: .dormant, addresses: [global4]),
            operational: .dormant,
            administrative: .configuring
        ),
        .init(
            name: "carrier: carrier and no address",
            interface: link(),
            operational: .carrier,
            administrative: .configuring
        ),
        .init(
            name: "carrier: unknown operational state with carrier and only host-scope addresses, like lo",
            interface: link(
                operState: .unknown,
                addresses: [InterfaceAddress(cidr: "127.0.0.1/8")!, InterfaceAddress(cidr: "::1/128")!]
            ),
            operational: .carrier,
            administrative: .configuring
        ),
        .init(
            name: "no-carrier: unknown operational state without carrier",
            interface: link(carrier: false, operState: .unknown),
            operational: .noCarrier,
            administrative: .configuring
        ),
        .init(
            name: "degraded: carrier and a link-local address only",
            interface: link(addresses: [linkLocal6]),
            operational: .degraded,
            administrative: .configuring
        ),
        .init(
            name: "carrier: a tentative global address is not ready",
            interface: link(addresses: [
                InterfaceAddress(IPAddress("2001:db8::10"), prefixLength: 64, isTentative: true)
            ]),
            operational: .carrier,
            administrative: .configuring
        ),
        .init(
            name: "routable: a global address, no default route (networkd does not ask for one)",
            interface: link(addresses: [linkLocal6, global6]),
            operational: .routable,
            administrative: .configuring
        ),
        .init(
            name: "routable and configured: a global address and a default route (netpath's up)",
            interface: link(addresses: [global4], routes: [route4]),
            operational: .routable,
            administrative: .configured
        ),
    ]

    @Test(arguments: cases)
    func eachStateFromNetpathsView(_ test: Case) {
        let state = NetworkdState(test.interface)
        #expect(state.operational == test.operational)
        #expect(state.administrative == test.administrative)
    }

    @Test("an interface that went away is off and lingers, whatever it was")
    func removedInterface() {
        let state = NetworkdState(Self.link(addresses: [Self.global4], routes: [Self.route4]), removed: true)
        #expect(state == NetworkdState(operational: .off, administrative: .linger))
        #expect(state.description == "off (linger)")
    }

    @Test("a change enters only the states that differ, administrative first; the first one seen enters both")
    func enteredStates() {
        let carrier = NetworkdState(operational: .carrier, administrative: .configuring)
        let routable = NetworkdState(operational: .routable, administrative: .configuring)
        let configured = NetworkdState(operational: .routable, administrative: .configured)
        let gone = NetworkdState(operational: .off, administrative: .linger)
        #expect(carrier.entered(since: nil) == ["configuring", "carrier"])
        #expect(routable.entered(since: carrier) == ["routable"])
        #expect(configured.entered(since: routable) == ["configured"])
        #expect(configured.entered(since: configured) == [])
        #expect(gone.entered(since: configured) == ["linger", "off"])
    }

    @Test("the states netpath enters are the ones its mapping produces; the rest have directories it never runs")
    func enteredStatesAreKnown() {
        #expect(NetworkdState.enteredStates.isSubset(of: Set(NetworkdState.allStates)))
        for never in ["degraded-carrier", "enslaved", "missing", "pending", "initialized", "unmanaged", "failed"] {
            #expect(!NetworkdState.enteredStates.contains(never))
        }
    }
}
