// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathCore
import Testing

@testable import NetPathDispatch

/// The NetworkManager-dispatcher contract as netpath builds it, variable by variable, against
/// NetworkManager-dispatcher(8) and `nm_dispatcher_utils_construct_envp`.
struct NetworkManagerInvocationTests {
    static func event(
        _ name: Event.Name,
        addresses: [String] = [],
        routes: [DefaultRoute] = [],
        carrier: Bool = true,
        address: String? = nil
    ) -> Event {
        let state = Interface(
            index: 4,
            name: "eth0",
            type: .wired,
            kind: "veth",
            carrier: carrier,
            mtu: 1500,
            addresses: addresses.map { InterfaceAddress(cidr: $0)! },
            defaultRoutes: routes
        )
        return Event(
            time: Date(),
            name: name,
            scope: .interface,
            interface: "eth0",
            interfaceType: .wired,
            interfaceState: state,
            address: address.map { InterfaceAddress(cidr: $0)! }
        )
    }

    static let uuid = NetworkManagerInvocation.connectionUUID("eth0")
    static let common = [
        "CONNECTION_UUID": uuid, "CONNECTION_ID": "eth0", "CONNECTION_EXTERNAL": "1", "DEVICE_IFACE": "eth0",
        "DEVICE_IP_IFACE": "eth0", "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    ]

    @Test("up with two IPv4 and two IPv6 addresses and default gateways: NetworkManager's variables, in its order")
    func upWithSeveralAddresses() throws {
        let event = Self.event(
            .up,
            addresses: ["192.0.2.10/24", "198.51.100.7/25", "2001:db8::10/64", "fe80::1/64"],
            routes: [.init(via: IPAddress("192.0.2.1")), .init(via: IPAddress("fe80::ff"))]
        )
        let invocation = try #require(
            NetworkManagerInvocation.invocation(script: "20-x", event: event, timeout: .seconds(5))
        )
        #expect(invocation.arguments == ["20-x", "eth0", "up"])
        #expect(invocation.standardInput.isEmpty)
        #expect(
            invocation.environment
                == Self.common.merging([
                    "NM_DISPATCHER_ACTION": "up",
                    "IP4_ADDRESS_0": "192.0.2.10/24 192.0.2.1",
                    "IP4_ADDRESS_1": "198.51.100.7/25 192.0.2.1",
                    "IP4_NUM_ADDRESSES": "2",
                    "IP4_GATEWAY": "192.0.2.1",
                    "IP4_NUM_ROUTES": "0",
                    "IP6_ADDRESS_0": "2001:db8::10/64 fe80::ff",
                    "IP6_ADDRESS_1": "fe80::1/64 fe80::ff",
                    "IP6_NUM_ADDRESSES": "2",
                    "IP6_GATEWAY": "fe80::ff",
                ]) { $1 }
        )
        let names = invocation.environmentBytes.map {
            String(decoding: $0.prefix { $0 != UInt8(ascii: "=") }, as: UTF8.self)
        }
        #expect(
            names == [
                "CONNECTION_UUID", "CONNECTION_ID", "CONNECTION_EXTERNAL", "DEVICE_IFACE", "DEVICE_IP_IFACE",
                "IP4_ADDRESS_0", "IP4_ADDRESS_1", "IP4_NUM_ADDRESSES", "IP4_GATEWAY", "IP4_NUM_ROUTES",
                "IP6_ADDRESS_0", "IP6_ADDRESS_1", "IP6_NUM_ADDRESSES", "IP6_GATEWAY", "PATH", "NM_DISPATCHER_ACTION",
            ]
        )
    }

    @Test("no gateway: every address says 0.0.0.0, IPv6 too, as NetworkManager writes it")
    func noGateway() throws {
        let event = Self.event(.up, addresses: ["192.0.2.10/24", "2001:db8::10/64"])
        let environment = try #require(
            NetworkManagerInvocation.invocation(script: "s", event: event, timeout: .seconds(1))
        )
        .environment
        #expect(environment["IP4_ADDRESS_0"] == "192.0.2.10/24 0.0.0.0")
        #expect(environment["IP4_GATEWAY"] == "0.0.0.0")
        #expect(environment["IP6_ADDRESS_0"] == "2001:db8::10/64 0.0.0.0")
        #expect(environment["IP6_GATEWAY"] == "0.0.0.0")
    }

    @Test("IPv4 only: no IP6_ variable at all, IP4_NUM_ROUTES is always there")
    func oneFamily() throws {
        let event = Self.event(.up, addresses: ["192.0.2.10/24"])
        let environment = try #require(
            NetworkManagerInvocation.invocation(script: "s", event: event, timeout: .seconds(1))
        )
        .environment
        #expect(environment.keys.filter { $0.hasPrefix("IP6_") }.isEmpty)
        #expect(environment["IP4_NUM_ROUTES"] == "0")
        #expect(environment["IP4_NUM_ADDRESSES"] == "1")
    }

    @Test("down (also when the interface goes away): the device is not activated, so no IP variables")
    func down() throws {
        let event = Self.event(
            .down,
            addresses: ["192.0.2.10/24"],
            routes: [.init(via: IPAddress("192.0.2.1"))],
            carrier: false
        )
        let invocation = try #require(
            NetworkManagerInvocation.invocation(script: "s", event: event, timeout: .seconds(1))
        )
        #expect(invocation.arguments == ["s", "eth0", "down"])
        #expect(invocation.environment == Self.common.merging(["NM_DISPATCHER_ACTION": "down"]) { $1 })
    }

    @Test("an address added to or removed from a usable interface is dhcp4-change or dhcp6-change by family")
    func addressChanges() throws {
        let up = ["192.0.2.10/24", "2001:db8::10/64"]
        let routes: [DefaultRoute] = [.init(via: IPAddress("192.0.2.1"))]
        let cases: [(Event.Name, String, String)] = [
            (.addressAdded, "192.0.2.10/24", "dhcp4-change"), (.addressRemoved, "198.51.100.9/24", "dhcp4-change"),
            (.addressAdded, "2001:db8::10/64", "dhcp6-change"), (.addressRemoved, "2001:db8::99/64", "dhcp6-change"),
        ]
        for (name, address, action) in cases {
            let event = Self.event(name, addresses: up, routes: routes, address: address)
            let invocation = try #require(
                NetworkManagerInvocation.invocation(script: "s", event: event, timeout: .seconds(1))
            )
            #expect(invocation.arguments == ["s", "eth0", action])
            #expect(invocation.environment["NM_DISPATCHER_ACTION"] == action)
            #expect(invocation.environment["IP4_ADDRESS_0"] == "192.0.2.10/24 192.0.2.1")
        }
    }

    @Test(
        "events with no NetworkManager action run no script: an address on an unusable link, carrier, changed, path events"
    )
    func noAction() {
        let silent: [Event] = [
            Self.event(.addressAdded, addresses: ["fe80::1/64"], address: "fe80::1/64"),
            Self.event(.carrierUp), Self.event(.carrierDown), Self.event(.added), Self.event(.removed),
            Self.event(.changed, addresses: ["192.0.2.10/24"], routes: [.init(via: IPAddress("192.0.2.1"))]),
            Event(time: Date(), name: .satisfied, scope: .path, interface: "eth0", policy: "default"),
        ]
        for event in silent {
            #expect(
                NetworkManagerInvocation.invocation(script: "s", event: event, timeout: .seconds(1)) == nil,
                "\(event.name)"
            )
        }
    }

    @Test("CONNECTION_UUID is a well-formed UUID that depends only on the interface name")
    func stableUUID() {
        let uuid = NetworkManagerInvocation.connectionUUID("eth0")
        #expect(uuid == NetworkManagerInvocation.connectionUUID("eth0"))
        #expect(uuid != NetworkManagerInvocation.connectionUUID("eth1"))
        let groups = uuid.split(separator: "-").map(\.count)
        #expect(groups == [8, 4, 4, 4, 12])
        #expect(uuid.allSatisfy { $0.isHexDigit && !$0.isUppercase || $0 == "-" })
        #expect(uuid.split(separator: "-")[2].first == "8")
    }

    @Test("an interface name with bytes that are not UTF-8 reaches argv and DEVICE_IFACE as the kernel's bytes")
    func kernelBytes() throws {
        var event = Self.event(.down)
        event.interface = #"eth\xff"#
        let invocation = try #require(
            NetworkManagerInvocation.invocation(script: "s", event: event, timeout: .seconds(1))
        )
        #expect(invocation.argumentBytes[1] == Array("eth".utf8) + [0xFF])
        #expect(invocation.environmentBytes.contains(Array("DEVICE_IFACE=eth".utf8) + [0xFF]))
    }
}
