// SPDX-License-Identifier: Apache-2.0

import NetPathCore
import Testing

@testable import NetPathDispatch

/// The argv and environment of a networkd-dispatcher script, as networkd-dispatcher(8) builds
/// them, variable by variable.
struct NetworkdInvocationTests {
    static let routable = NetworkdState(operational: .routable, administrative: .configured)

    static func interface(_ addresses: [String], gateways: [String] = [], mac: String = "02:00:00:00:00:01")
        -> Interface
    {
        Interface(
            index: 4,
            name: "eth0",
            type: .wired,
            kind: "veth",
            mac: mac,
            addresses: addresses.map { InterfaceAddress(cidr: $0)! },
            defaultRoutes: gateways.map { DefaultRoute(via: IPAddress($0)!) }
        )
    }

    @Test("argv is the script's path alone; the environment is exactly networkd-dispatcher's variables and PATH")
    func argumentsAndEnvironment() {
        let eth0 = Self.interface(
            ["192.0.2.10/24", "198.51.100.10/24", "2001:db8::10/64", "2001:db8:1::10/64", "fe80::1/64"],
            gateways: ["192.0.2.1", "2001:db8::1"]
        )
        let invocation = NetworkdInvocation.invocation(
            script: "50-vpn",
            path: "/etc/networkd-dispatcher/routable.d/50-vpn",
            interface: "eth0",
            entering: "routable",
            now: Self.routable,
            interfaceState: eth0,
            timeout: .seconds(5)
        )
        #expect(invocation.arguments == ["/etc/networkd-dispatcher/routable.d/50-vpn"])
        #expect(invocation.standardInput.isEmpty)
        #expect(
            invocation.environment == [
                "IFACE": "eth0",
                "STATE": "routable",
                "OperationalState": "routable",
                "AdministrativeState": "configured",
                "ADDR": "192.0.2.10",
                "IP_ADDRS": "192.0.2.10 198.51.100.10",
                "IP6_ADDRS": "2001:db8::10 2001:db8:1::10",
                "ESSID": "",
                "json": """
                {"Address": ["192.0.2.10", "198.51.100.10", "2001:db8::10", "2001:db8:1::10", "fe80::1"], \
                "AdministrativeState": "configured", "Gateway": ["192.0.2.1", "2001:db8::1"], \
                "HW Address": "02:00:00:00:00:01", "InterfaceName": "eth0", "OperationalState": "routable", \
                "State": "routable (configured)", "Type": "ether"}
                """,
                "PATH": HookInvocation.path,
            ]
        )
        let written = invocation.environmentBytes.map { String(decoding: $0, as: UTF8.self) }
        #expect(written.prefix(2) == ["ADDR=192.0.2.10", "ESSID="])
        #expect(written.count == 10)
    }

    @Test("STATE is the state entered, the state variables are the interface's now")
    func stateEnteredAndStateNow() {
        let environment = NetworkdInvocation.environment(
            interface: "eth0",
            entering: "configured",
            now: Self.routable,
            interfaceState: Self.interface(["192.0.2.10/24"])
        )
        #expect(environment["STATE"] == "configured")
        #expect(environment["OperationalState"] == "routable")
        #expect(environment["AdministrativeState"] == "configured")
    }

    @Test(
        "ADDR is the first listed address: IPv6 (link-local too) when there is no IPv4; loopback and link-local are left out of the lists"
    )
    func addressLists() {
        let v6 = NetworkdInvocation.environment(
            interface: "eth0",
            entering: "degraded",
            now: NetworkdState(operational: .degraded, administrative: .configuring),
            interfaceState: Self.interface(["fe80::1/64"])
        )
        #expect(v6["ADDR"] == "fe80::1")
        #expect(v6["IP_ADDRS"] == "")
        #expect(v6["IP6_ADDRS"] == "")
        let lo = NetworkdInvocation.environment(
            interface: "lo",
            entering: "carrier",
            now: NetworkdState(operational: .carrier, administrative: .configuring),
            interfaceState: Self.interface(["127.0.0.1/8", "::1/128"], mac: "")
        )
        #expect(lo["ADDR"] == "127.0.0.1")
        #expect(lo["IP_ADDRS"] == "")
        #expect(lo["IP6_ADDRS"] == "::1")
        let none = NetworkdInvocation.environment(
            interface: "eth0",
            entering: "no-carrier",
            now: NetworkdState(operational: .noCarrier, administrative: .configuring),
            interfaceState: Self.interface([])
        )
        #expect(none["ADDR"] == "")
        #expect(none["json"]?.contains(#""Address""#) == false, "no Address key without addresses, as networkctl")
    }

    @Test("tentative and DAD-failed addresses are not listed")
    func onlyReadyAddresses() {
        var eth0 = Self.interface(["192.0.2.10/24"])
        eth0.addresses += [
            InterfaceAddress(IPAddress("2001:db8::10"), prefixLength: 64, isTentative: true),
            InterfaceAddress(IPAddress("2001:db8::11"), prefixLength: 64, isDADFailed: true),
        ]
        let environment = NetworkdInvocation.environment(
            interface: "eth0",
            entering: "routable",
            now: Self.routable,
            interfaceState: eth0
        )
        #expect(environment["IP6_ADDRS"] == "")
    }

    @Test("json escapes quotes, control characters and non-ASCII as Python's json.dumps does")
    func jsonEscaping() {
        #expect(NetworkdInvocation.quoted("a\"b\\c") == #""a\"b\\c""#)
        #expect(NetworkdInvocation.quoted("x\u{1}\n\u{7F}é") == #""x\u0001\n\u007f\u00e9""#)
        let json = NetworkdInvocation.json(interface: "bad\u{1B}name", now: Self.routable, interfaceState: nil)
        #expect(!json.containsControlCharacters)
        #expect(json.contains(#""InterfaceName": "bad\u001bname""#))
    }

    @Test("Type is networkctl's: ether, wlan, loopback, a DEVTYPE it shows, none without a MAC")
    func linkTypes() {
        func type(_ type: InterfaceType, kind: String = "", mac: String = "02:00:00:00:00:01") -> String {
            NetworkdInvocation.linkType(Interface(index: 2, name: "x", type: type, kind: kind, mac: mac))
        }
        #expect(type(.wired, kind: "veth") == "ether")
        #expect(type(.wifi, kind: "wlan") == "wlan")
        #expect(type(.loopback, mac: "00:00:00:00:00:00") == "loopback")
        #expect(type(.other, kind: "bridge") == "bridge")
        #expect(type(.other, kind: "tun", mac: "") == "none")
    }
}
