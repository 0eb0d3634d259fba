// SPDX-License-Identifier: Apache-2.0

import NetPathCore
import Testing

/// `Interface` shares its values between copies (copy on write): it must still behave as a plain
/// value, every property on its own.
@Suite("Interface")
struct InterfaceTests {
    static let eth0 = makeEth0()

    /// A new value each call: two calls share nothing.
    static func makeEth0() -> Interface {
        Interface(
            index: 2,
            name: "eth0",
            type: .wired,
            kind: "veth",
            addresses: ["192.0.2.10/24"],
            defaultRoutes: [.init(via: IPAddress("192.0.2.1"))]
        )
    }

    /// One change to each property, made on a copy.
    static var changes: [(String, (inout Interface) -> Void)] {
        [
            ("index", { $0.index = 9 }),
            ("name", { $0.name = "eth9" }),
            ("type", { $0.type = .wifi }),
            ("kind", { $0.kind = "bridge" }),
            ("driver", { $0.driver = "e1000e" }),
            ("adminUp", { $0.adminUp = false }),
            ("carrier", { $0.carrier = false }),
            ("operState", { $0.operState = .dormant }),
            ("mtu", { $0.mtu = 9000 }),
            ("mac", { $0.mac = "02:00:00:00:00:01" }),
            ("isMetered", { $0.isMetered = true }),
            ("meteredReason", { $0.meteredReason = .override }),
            ("isConstrained", { $0.isConstrained = true }),
            ("addresses", { $0.addresses.append("2001:db8::10/64") }),
            ("defaultRoutes", { $0.defaultRoutes.removeAll() }),
            ("classifiedBy", { $0.classifiedBy.append("arptype=1") }),
            ("connectivity", { $0.connectivity = .portal }),
            ("portalURL", { $0.portalURL = "http://portal.example/" }),
            ("roundTrip", { $0.roundTrip = .milliseconds(12) }),
            ("loss", { $0.loss = 0.5 }),
            ("connectivityEvidence", { $0.connectivityEvidence = "HTTP 204" }),
        ]
    }

    @Test("values built apart are equal, and hash alike, exactly when every property is")
    func equalityAndHashFollowTheValues() {
        let again = Self.makeEth0()
        #expect(again == Self.eth0)
        #expect(again.hashValue == Self.eth0.hashValue)
        #expect(Set([again, Self.eth0]).count == 1)
        for (property, change) in Self.changes {
            var changed = again
            change(&changed)
            #expect(changed != Self.eth0, "\(property) is not compared")
            // Changed back through the same property, it is equal again.
            var restored = changed
            switch property {
            case "addresses": restored.addresses = Self.eth0.addresses
            case "defaultRoutes": restored.defaultRoutes = Self.eth0.defaultRoutes
            case "classifiedBy": restored.classifiedBy = Self.eth0.classifiedBy
            default: restored = Self.eth0
            }
            #expect(restored == Self.eth0 && restored.hashValue == Self.eth0.hashValue, "\(property)")
        }
    }

    @Test("print and dump show the values by their names")
    func mirrorShowsTheValues() {
        let labels = Mirror(reflecting: Self.eth0).children.compactMap(\.label)
        #expect(labels == Self.changes.map(\.0))
        var text = ""
        dump(Self.eth0, to: &text)
        #expect(text.contains("name: \"eth0\"") && text.contains("mtu: 1500") && !text.contains("Storage"))
    }

    @Test(
        "the best default route is the lowest metric's, the main table's of equal ones, the first of equal ones, as min over the filtered routes chooses"
    )
    func bestDefaultRouteAsMinChooses() {
        var generator = SystemRandomNumberGenerator()
        let gateways: [IPAddress] = ["192.0.2.1", "192.0.2.2", "2001:db8::1", "2001:db8::2"]
        for _ in 0..<500 {
            let routes = (0..<Int.random(in: 0...6, using: &generator)).map { _ in
                DefaultRoute(
                    via: gateways.randomElement(using: &generator)!,
                    metric: UInt32.random(in: 0...2, using: &generator) * 100,
                    table: [DefaultRoute.mainTable, 100, 200].randomElement(using: &generator)!
                )
            }
            var interface = Self.eth0
            interface.defaultRoutes = routes
            interface.adminUp = Int.random(in: 0..<4, using: &generator) > 0
            interface.carrier = Int.random(in: 0..<4, using: &generator) > 0
            interface.addresses = Array(
                [
                    "192.0.2.10/24", "2001:db8::10/64", "fe80::1/64",
                    InterfaceAddress("2001:db8::11", prefixLength: 64, isTentative: true),
                ].filter { _ in Bool.random(using: &generator) }
            )
            for family in [IPAddress.Family.ipv4, .ipv6] {
                for table in [nil, DefaultRoute.mainTable, 100] as [UInt32?] {
                    let expected = interface.defaultRoutes.filter {
                        $0.family == family && (table == nil || $0.table == table)
                    }.min {
                        ($0.metric, $0.table == DefaultRoute.mainTable ? 0 : 1)
                            < ($1.metric, $1.table == DefaultRoute.mainTable ? 0 : 1)
                    }
                    #expect(interface.bestDefaultRoute(family, table: table) == expected)
                }
                #expect(
                    interface.routableFamilies.contains(family)
                        == (interface.isConnected && interface.hasUsableAddress(family)
                            && interface.bestDefaultRoute(family) != nil)
                )
            }
            #expect(interface.isUsable == !interface.routableFamilies.isEmpty)
        }
    }
}
