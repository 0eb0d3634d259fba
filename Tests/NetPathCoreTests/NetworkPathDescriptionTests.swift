// SPDX-License-Identifier: Apache-2.0

import NetPathCore
import Testing

/// `print(path)` is one readable line: the policy, the status and why, what a satisfied path uses.
struct NetworkPathDescriptionTests {
    @Test("a satisfied path names its primary, the others, families, gateways and costs")
    func satisfied() {
        let eth0 = NetworkPath.PathInterface(name: "eth0", index: 2, type: .wired, isMetered: true)
        let wlan0 = NetworkPath.PathInterface(name: "wlan0", index: 3, type: .wifi)
        let path = NetworkPath(
            status: .satisfied,
            availableInterfaces: [eth0, wlan0],
            isConstrained: true,
            supportsIPv4: true,
            supportsDNS: true,
            gateways: ["192.0.2.1", "fe80::1"],
            origin: .kernel
        )
        #expect(
            path.description
                == "default: satisfied via eth0 (wired, metered), also wlan0 (wifi); IPv4, DNS; "
                + "gateways 192.0.2.1, fe80::1; expensive; constrained; from the kernel"
        )
        #expect("\(path)" == path.description, "string interpolation and print use it")
    }

    @Test("an unsatisfied path says why; requires-connection says what it waits for")
    func notSatisfied() {
        let offline = NetworkPath(policy: "wired", status: .unsatisfied, unsatisfiedReason: .requiredTypeAbsent)
        #expect(offline.description == "wired: unsatisfied (required-type-absent)")
        let pending = NetworkPath(status: .requiresConnection)
        #expect(pending.description == "default: requires-connection (a link waits for an address)")
    }

    @Test("a name with a control character stays on one line")
    func controlCharactersAreEscaped() {
        let odd = NetworkPath.PathInterface(name: "eth\n0", index: 2, type: .wired)
        let path = NetworkPath(policy: "up\u{1B}link", status: .satisfied, availableInterfaces: [odd])
        #expect(path.description == #"up\u001Blink: satisfied via eth\n0 (wired)"#)
        #expect(!path.description.contains("\n"))
    }

    @Test("a probed path says its connectivity, and a portal's URL")
    func connectivity() {
        var path = NetworkPath(
            status: .satisfied,
            availableInterfaces: [.init(name: "eth0", index: 2, type: .wired)],
            supportsIPv4: true
        )
        #expect(path.description == "default: satisfied via eth0 (wired); IPv4")
        path.connectivity = .portal
        path.portalURL = "http://portal.example/login"
        #expect(
            path.description
                == "default: satisfied via eth0 (wired); IPv4; connectivity portal http://portal.example/login"
        )
    }
}
