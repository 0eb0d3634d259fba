// SPDX-License-Identifier: Apache-2.0

import NetPathCore
import Testing

@testable import NetPathControl

/// What `wait-online` counts as online, option by option, judged on status documents.
struct OnlineConditionTests {
    static let eth0 = Interface(
        index: 2,
        name: "eth0",
        type: .wired,
        operState: .up,
        addresses: ["192.0.2.10/24"],
        defaultRoutes: [.init(via: "192.0.2.1")]
    )
    /// Carrier and only an IPv6 link-local address: networkd's `degraded`.
    static let wlan0 = Interface(index: 3, name: "wlan0", type: .wifi, operState: .up, addresses: ["fe80::1/64"])
    static let lo = Interface(index: 1, name: "lo", type: .loopback, operState: .unknown, addresses: ["127.0.0.1/8"])

    static func satisfied(_ policy: String = "default", connectivity: Connectivity = .unknown, ipv6: Bool = false)
        -> NetworkPath
    {
        NetworkPath(
            policy: policy,
            status: .satisfied,
            availableInterfaces: [.init(eth0)],
            supportsIPv4: true,
            supportsIPv6: ipv6,
            supportsDNS: true,
            connectivity: connectivity
        )
    }

    static func unsatisfied(_ policy: String) -> NetworkPath {
        NetworkPath(policy: policy, status: .unsatisfied, unsatisfiedReason: .requiredTypeAbsent)
    }

    static func status(_ paths: [NetworkPath], probing: Bool? = true) -> StatusReport {
        StatusReport(interfaces: [lo, eth0, wlan0], paths: paths, probing: probing)
    }

    @Test("by default any satisfied policy is online, whatever its connectivity")
    func anyPolicy() {
        let condition = OnlineCondition()
        #expect(
            condition.evaluate(Self.status([Self.unsatisfied("wifi"), Self.satisfied()]))
                == .online("policy default via eth0 (wired)")
        )
        #expect(
            condition.evaluate(Self.status([Self.unsatisfied("wifi")]))
                == .waiting("policy wifi is unsatisfied (required-type-absent)")
        )
    }

    @Test("--policy: all named must be online; with --any one suffices; an unknown name is impossible")
    func namedPolicies() {
        var condition = OnlineCondition()
        condition.policies = ["default", "wifi"]
        let document = Self.status([Self.satisfied(), Self.unsatisfied("wifi")])
        #expect(condition.evaluate(document) == .waiting("policy wifi is unsatisfied (required-type-absent)"))
        condition.any = true
        #expect(condition.evaluate(document) == .online("policy default via eth0 (wired)"))
        condition.policies = ["wfi"]
        #expect(
            condition.evaluate(document)
                == .impossible("netpathd has no policy named \"wfi\" (its policies: default, wifi)")
        )
    }

    @Test("--connectivity: unknown never counts, portal meets portal, full meets all; without probing it is impossible")
    func connectivity() {
        var condition = OnlineCondition()
        condition.connectivity = .full
        #expect(
            condition.evaluate(Self.status([Self.satisfied(connectivity: .portal)]))
                == .waiting("policy default via eth0 (wired) has connectivity portal, not full")
        )
        #expect(
            condition.evaluate(Self.status([Self.satisfied(connectivity: .unknown)]))
                == .waiting("policy default via eth0 (wired) has connectivity unknown, not full")
        )
        #expect(
            condition.evaluate(Self.status([Self.satisfied(connectivity: .full)]))
                == .online("policy default via eth0 (wired)")
        )
        condition.connectivity = .portal
        #expect(
            condition.evaluate(Self.status([Self.satisfied(connectivity: .portal)]))
                == .online("policy default via eth0 (wired)")
        )
        condition.connectivity = .limited
        #expect(
            condition.evaluate(Self.status([Self.satisfied(connectivity: .full)]))
                == .online("policy default via eth0 (wired)")
        )
        #expect(
            condition.evaluate(Self.status([Self.satisfied(connectivity: .full)], probing: false))
                == .impossible(
                    "--connectivity limited needs connectivity probing, and netpathd's configuration has no [connectivity] table (docs/connectivity.md)"
                )
        )
        // An agent older than `probing` is not refused: the wait decides.
        #expect(
            condition.evaluate(Self.status([Self.satisfied(connectivity: .full)], probing: nil))
                == .online("policy default via eth0 (wired)")
        )
    }

    @Test("the library's waitForConnectivity and --connectivity share one definition")
    func oneDefinition() {
        for connectivity in Connectivity.allCases {
            for required in [Connectivity.limited, .portal, .full] {
                let path = Self.satisfied(connectivity: connectivity)
                var condition = OnlineCondition()
                condition.connectivity = required
                let online = condition.evaluate(Self.status([path])) == .online("policy default via eth0 (wired)")
                #expect(online == path.isOnline(requiring: required), "\(connectivity) for \(required)")
            }
        }
    }

    @Test("-4, -6 and --dns ask the counted paths; -6 and -4 together ask for both")
    func families() {
        var condition = OnlineCondition()
        condition.ipv4 = true
        condition.ipv6 = true
        #expect(
            condition.evaluate(Self.status([Self.satisfied()]))
                == .waiting("policy default via eth0 (wired) has no IPv6")
        )
        #expect(
            condition.evaluate(Self.status([Self.satisfied(ipv6: true)])) == .online("policy default via eth0 (wired)")
        )
        condition = OnlineCondition()
        condition.dns = true
        var noDNS = Self.satisfied()
        noDNS.supportsDNS = false
        #expect(condition.evaluate(Self.status([noDNS])) == .waiting("policy default via eth0 (wired) has no DNS"))
    }

    @Test("-i IFACE[:MIN[:MAX]]: each named interface in its range (networkd's degraded:routable by default)")
    func interfaces() throws {
        var condition = OnlineCondition()
        let satisfied = Self.status([Self.satisfied()])
        condition.interfaces = [try .init(parsing: "wlan0")]
        #expect(condition.evaluate(satisfied) == .online("policy default via eth0 (wired)"))
        condition.interfaces = [try .init(parsing: "wlan0:routable")]
        #expect(condition.evaluate(satisfied) == .waiting("wlan0 is degraded, not routable:routable"))
        condition.interfaces = [try .init(parsing: "eth0:carrier:degraded")]
        #expect(condition.evaluate(satisfied) == .waiting("eth0 is routable, not carrier:degraded"))
        condition.interfaces = [try .init(parsing: "eth0"), try .init(parsing: "usb0")]
        #expect(condition.evaluate(satisfied) == .waiting("usb0 is missing"))
        condition.any = true
        #expect(condition.evaluate(satisfied) == .online("policy default via eth0 (wired)"))
        // -o applies to the -i interfaces without a range of their own.
        condition = OnlineCondition()
        condition.interfaces = [try .init(parsing: "wlan0")]
        condition.operationalState = try .init(parsing: "routable")
        #expect(condition.evaluate(satisfied) == .waiting("wlan0 is degraded, not routable:routable"))
        // -4 on an interface: a usable IPv4 address.
        condition.operationalState = nil
        condition.ipv4 = true
        #expect(condition.evaluate(satisfied) == .waiting("wlan0 has no IPv4 address"))
    }

    @Test("-o without -i: at least one interface other than loopback and --ignore's is in the range")
    func operationalStateAlone() throws {
        var condition = OnlineCondition()
        condition.operationalState = try .init(parsing: "routable")
        let satisfied = Self.status([Self.satisfied()])
        #expect(condition.evaluate(satisfied) == .online("policy default via eth0 (wired)"))
        condition.ignored = [try Glob("eth*")]
        #expect(condition.evaluate(satisfied) == .waiting("wlan0 is degraded, not routable:routable"))
        condition.ignored = [try Glob("*")]
        #expect(condition.evaluate(satisfied) == .waiting("no interface but loopback and ignored ones"))
    }

    @Test("ranges parse as networkctl names the states, in its order")
    func ranges() throws {
        #expect(
            try OnlineCondition.OperationalRange(parsing: "degraded") == .init(minimum: .degraded, maximum: .routable)
        )
        #expect(
            try OnlineCondition.OperationalRange(parsing: "no-carrier:carrier")
                == .init(minimum: .noCarrier, maximum: .carrier)
        )
        #expect(throws: OnlineCondition.SyntaxError.self) { try OnlineCondition.OperationalRange(parsing: "up") }
        #expect(throws: OnlineCondition.SyntaxError.self) {
            try OnlineCondition.OperationalRange(parsing: "routable:off")
        }
        #expect(throws: OnlineCondition.SyntaxError.self) { try OnlineCondition.InterfaceRequirement(parsing: "") }
        #expect(NetworkdState.Operational.allCases.sorted() == NetworkdState.Operational.allCases)
        #expect(NetworkdState.Operational.off < .noCarrier && NetworkdState.Operational.degraded < .routable)
    }
}
