// SPDX-License-Identifier: Apache-2.0

import NetPathCore
import Testing

@Suite("PathEvaluator")
struct PathEvaluatorTests {
    private func evaluate(_ policy: PathPolicy, _ interfaces: [Interface], dns: [IPAddress] = []) -> PathEvaluation {
        PathEvaluator(policy: policy).evaluate(SystemState(interfaces: interfaces, dnsServers: dns))
    }

    private func evaluate(_ interfaces: [Interface], dns: [IPAddress] = []) -> PathEvaluation {
        evaluate(.default, interfaces, dns: dns)
    }

    private func outcome(_ evaluation: PathEvaluation, _ name: String) -> PathEvaluation.Outcome? {
        evaluation.verdicts.first { $0.interface.name == name }?.outcome
    }

    @Test("path(for:), which skips the verdicts, gives the path evaluate(_:) gives, over many states and policies")
    func pathWithoutVerdictsIsThePath() {
        var generator = SystemRandomNumberGenerator()
        let types: [InterfaceType] = [.wired, .wifi, .cellular, .other]
        let policies = [
            PathPolicy.default, PathPolicy(prefer: [.wired, .wifi]), PathPolicy(require: [.wifi, .cellular]),
            PathPolicy(prohibit: [.cellular]), PathPolicy(metered: .deny), PathPolicy(requireConnectivity: .full),
        ]
        for _ in 0..<500 {
            var interfaces = [Sample.loopback]
            for index in 2..<Int32.random(in: 2...6, using: &generator) {
                interfaces.append(
                    Sample.uplink(
                        index,
                        "if\(index)",
                        types.randomElement(using: &generator)!,
                        metric: [100, 100, 300, 600].randomElement(using: &generator)!,
                        ipv4: Bool.random(using: &generator),
                        ipv6: Bool.random(using: &generator),
                        metered: Bool.random(using: &generator),
                        carrier: Int.random(in: 0..<4, using: &generator) > 0,
                        adminUp: Int.random(in: 0..<5, using: &generator) > 0
                    )
                )
            }
            let state = SystemState(
                interfaces: interfaces.shuffled(using: &generator),
                dnsServers: [Sample.gateway4(2)]
            )
            for policy in policies {
                let evaluator = PathEvaluator(policy: policy)
                let full = evaluator.evaluate(state)
                #expect(evaluator.path(for: state) == full.path)
                #expect(full.verdicts.count == interfaces.count, "evaluate(_:) lost its verdicts")
            }
        }
    }

    // MARK: Primary and order

    @Test func twoUplinksPrimaryIsTheLowestMetricLikeTheKernel() {
        let e = evaluate([Sample.loopback, Sample.eth0(metric: 600), Sample.wlan0(metric: 100)])
        #expect(e.path.status == .satisfied)
        #expect(e.path.unsatisfiedReason == nil)
        #expect(e.path.primary?.name == "wlan0")
        #expect(e.path.availableInterfaces.map(\.name) == ["wlan0", "eth0"])
        #expect(outcome(e, "wlan0") == .primary)
        #expect(outcome(e, "eth0") == .candidate(rank: 1, lostBecause: .higherMetric))
        #expect(outcome(e, "lo") == .rejected(.loopback))
        #expect(e.path.usesInterfaceType(.wifi))
        #expect(!e.path.usesInterfaceType(.wired))
    }

    @Test func preferOverridesTheKernelsChoice() {
        let policy = PathPolicy(prefer: [.wired, .wifi])
        let e = evaluate(policy, [Sample.eth0(metric: 600), Sample.wlan0(metric: 100)])
        #expect(e.path.primary?.name == "eth0")
        #expect(e.path.primaryIPv4?.name == "eth0")
        #expect(e.path.availableInterfaces.map(\.name) == ["eth0", "wlan0"])
        #expect(outcome(e, "wlan0") == .candidate(rank: 1, lostBecause: .lowerPreference))
    }

    @Test func preferOfAnAbsentTypeFallsBackToMetric() {
        let policy = PathPolicy(prefer: [.cellular])
        let e = evaluate(policy, [Sample.eth0(metric: 600), Sample.wlan0(metric: 100)])
        #expect(e.path.primary?.name == "wlan0")
    }

    @Test func equalMetricsAreBrokenByTheLowerIndex() {
        let e = evaluate([Sample.wlan0(metric: 100), Sample.eth0(metric: 100)])
        #expect(e.path.primary?.name == "eth0")
        #expect(outcome(e, "wlan0") == .candidate(rank: 1, lostBecause: .tieBreak))
    }

    @Test func inputOrderDoesNotChangeThePath() {
        let interfaces = [Sample.loopback, Sample.eth0(metric: 300), Sample.wlan0(metric: 300), Sample.wwan0()]
        let forward = evaluate(interfaces).path
        let backward = evaluate(interfaces.reversed()).path
        #expect(forward == backward)
    }

    @Test(
        "the candidates' order is the same whatever order the interfaces come in, with ties, metered links and preferences"
    )
    func candidateOrderIsAFunctionOfTheCandidates() {
        var generator = SystemRandomNumberGenerator()
        let policies = [
            PathPolicy.default, PathPolicy(name: "avoid", metered: .avoid),
            PathPolicy(name: "wired", prefer: [.wired, .wifi]),
        ]
        for _ in 0..<300 {
            let interfaces = (0..<Int.random(in: 0...7, using: &generator)).map { position in
                Sample.uplink(
                    Int32(position + 2),
                    "up\(position)",
                    [.wired, .wifi, .cellular].randomElement(using: &generator)!,
                    metric: [50, 100, 100, 600].randomElement(using: &generator)!,
                    ipv4: Bool.random(using: &generator),
                    ipv6: Bool.random(using: &generator),
                    metered: Bool.random(using: &generator)
                )
            }
            for policy in policies {
                let evaluation = evaluate(policy, interfaces)
                let shuffled = evaluate(policy, interfaces.shuffled(using: &generator))
                #expect(shuffled.path == evaluation.path)
                #expect(shuffled.verdicts.map(\.interface.name) == evaluation.verdicts.map(\.interface.name))
                // Each candidate is ranked behind the one before it, never ahead of it.
                let ranks = evaluation.verdicts.compactMap { verdict -> Int? in
                    switch verdict.outcome {
                    case .primary: 0
                    case .candidate(let rank, _): rank
                    default: nil
                    }
                }
                #expect(ranks == Array(ranks.indices))
                #expect(
                    evaluation.path.availableInterfaces.map(\.name)
                        == evaluation.verdicts.prefix(ranks.count).map(\.interface.name)
                )
            }
        }
    }

    @Test func verdictsListPrimaryThenCandidatesThenRejections() {
        let down = Sample.uplink(5, "eth1", .wired, carrier: false)
        let e = evaluate([Sample.loopback, down, Sample.eth0(metric: 600), Sample.wlan0(metric: 100)])
        #expect(e.verdicts.map(\.interface.name) == ["wlan0", "eth0", "lo", "eth1"])
        #expect(outcome(e, "eth1") == .rejected(.noCarrier))
        #expect(e.verdicts.allSatisfy { !$0.detail.isEmpty })
    }

    // MARK: Metered

    @Test func meteredAvoidWithOnlyLTEIsSatisfiedAndExpensive() {
        let e = evaluate(PathPolicy(metered: .avoid), [Sample.loopback, Sample.wwan0()])
        #expect(e.path.status == .satisfied)
        #expect(e.path.primary?.name == "wwan0")
        #expect(e.path.isExpensive)
        #expect(e.path.usesInterfaceType(.cellular))
    }

    @Test func meteredAvoidPrefersWifiOverALowerMetricLTE() {
        let e = evaluate(PathPolicy(metered: .avoid), [Sample.wlan0(metric: 600), Sample.wwan0(metric: 50)])
        #expect(e.path.primary?.name == "wlan0")
        #expect(!e.path.isExpensive)
        #expect(e.path.availableInterfaces.map(\.name) == ["wlan0", "wwan0"])
        #expect(outcome(e, "wwan0") == .candidate(rank: 1, lostBecause: .meteredAvoided))
    }

    @Test func meteredAvoidOutranksPrefer() {
        let policy = PathPolicy(metered: .avoid, prefer: [.cellular, .wifi])
        let e = evaluate(policy, [Sample.wlan0(), Sample.wwan0()])
        #expect(e.path.primary?.name == "wlan0")
    }

    @Test func meteredAllowKeepsTheKernelsChoiceAndReportsItExpensive() {
        let e = evaluate([Sample.wlan0(metric: 600), Sample.wwan0(metric: 50)])
        #expect(e.path.primary?.name == "wwan0")
        #expect(e.path.isExpensive)
    }

    @Test func meteredDenyWithOnlyLTEIsUnsatisfiedMeteredDenied() {
        let e = evaluate(PathPolicy(metered: .deny), [Sample.loopback, Sample.wwan0()])
        #expect(e.path.status == .unsatisfied)
        #expect(e.path.unsatisfiedReason == .meteredDenied)
        #expect(e.path.primary == nil)
        #expect(e.path.availableInterfaces.isEmpty)
        #expect(!e.path.isExpensive)
        #expect(outcome(e, "wwan0") == .rejected(.meteredDenied))
    }

    @Test func meteredDenyWithLTEAndWifiUsesOnlyWifi() {
        let e = evaluate(PathPolicy(metered: .deny), [Sample.wlan0(metric: 600), Sample.wwan0(metric: 50)])
        #expect(e.path.status == .satisfied)
        #expect(e.path.availableInterfaces.map(\.name) == ["wlan0"])
        #expect(outcome(e, "wwan0") == .rejected(.meteredDenied))
    }

    @Test func meteredTetherIsAvoidedLikeCellular() {
        let tether = Sample.uplink(6, "usb0", .wired, metric: 10, metered: true)
        let e = evaluate(PathPolicy(metered: .avoid), [tether, Sample.wlan0()])
        #expect(e.path.primary?.name == "wlan0")
    }

    // MARK: Types

    @Test func requireExcludesOtherTypes() {
        let policy = PathPolicy(require: [.wired, .wifi])
        let e = evaluate(policy, [Sample.wlan0(metric: 600), Sample.wwan0(metric: 50)])
        #expect(e.path.primary?.name == "wlan0")
        #expect(outcome(e, "wwan0") == .rejected(.wrongType))
    }

    @Test func requireWithNoRequiredTypePresentSaysTheTypeIsAbsent() {
        let e = evaluate(PathPolicy(require: [.wired]), [Sample.loopback, Sample.wlan0(), Sample.wwan0()])
        #expect(e.path.status == .unsatisfied)
        #expect(e.path.unsatisfiedReason == .requiredTypeAbsent, "nothing is prohibited: wired is missing")
    }

    @Test func requiredTypesAbsentAndTheRestProhibitedIsOnlyProhibitedTypes() {
        let policy = PathPolicy(require: [.wired, .cellular], prohibit: [.cellular])
        let e = evaluate(policy, [Sample.wlan0(), Sample.wwan0()])
        #expect(outcome(e, "wlan0") == .rejected(.wrongType))
        #expect(outcome(e, "wwan0") == .rejected(.prohibited))
        #expect(e.path.unsatisfiedReason == .onlyProhibitedTypes)
    }

    @Test func requiredTypePresentButDownIsNoInterface() {
        var eth0 = Sample.eth0()
        eth0.carrier = false
        let e = evaluate(PathPolicy(require: [.wired]), [eth0, Sample.wlan0()])
        #expect(e.path.unsatisfiedReason == .noInterface, "the wired link is there, without carrier")
    }

    @Test func prohibitWithOnlyProhibitedTypesIsOnlyProhibitedTypes() {
        let e = evaluate(PathPolicy(prohibit: [.cellular]), [Sample.loopback, Sample.wwan0()])
        #expect(e.path.status == .unsatisfied)
        #expect(e.path.unsatisfiedReason == .onlyProhibitedTypes)
        #expect(outcome(e, "wwan0") == .rejected(.prohibited))
    }

    @Test func prohibitLeavesTheOtherTypes() {
        let e = evaluate(PathPolicy(prohibit: [.cellular]), [Sample.wlan0(metric: 600), Sample.wwan0(metric: 50)])
        #expect(e.path.availableInterfaces.map(\.name) == ["wlan0"])
    }

    @Test func loopbackAloneIsNoInterface() {
        let e = evaluate([Sample.loopback])
        #expect(e.path.status == .unsatisfied)
        #expect(e.path.unsatisfiedReason == .noInterface)
    }

    @Test func emptyStateIsNoInterface() {
        let e = evaluate([])
        #expect(e.path.status == .unsatisfied)
        #expect(e.path.unsatisfiedReason == .noInterface)
        #expect(e.verdicts.isEmpty)
    }

    // MARK: Link and address state

    @Test func carrierDownIsUnsatisfiedNoInterface() {
        let e = evaluate([Sample.loopback, Sample.uplink(2, "eth0", .wired, carrier: false)])
        #expect(e.path.status == .unsatisfied)
        #expect(e.path.unsatisfiedReason == .noInterface)
        #expect(outcome(e, "eth0") == .rejected(.noCarrier))
    }

    @Test func adminDownIsUnsatisfiedNoInterface() {
        let e = evaluate([Sample.uplink(2, "eth0", .wired, carrier: false, adminUp: false)])
        #expect(e.path.unsatisfiedReason == .noInterface)
        #expect(outcome(e, "eth0") == .rejected(.adminDown))
    }

    @Test(arguments: [
        [InterfaceAddress](),
        ["169.254.33.7/16"],
        ["fe80::2/64"],
        [InterfaceAddress("2001:db8:2::2", prefixLength: 64, isTentative: true)],
        [InterfaceAddress("192.0.2.2", prefixLength: 24, isDADFailed: true)],
    ])
    func connectedWithoutUsableAddressRequiresConnection(_ addresses: [InterfaceAddress]) {
        let pending = Interface(index: 2, name: "eth0", type: .wired, addresses: addresses)
        let e = evaluate([Sample.loopback, pending])
        #expect(e.path.status == .requiresConnection)
        #expect(e.path.unsatisfiedReason == nil)
        #expect(e.path.primary == nil)
        #expect(outcome(e, "eth0") == .rejected(.noAddress))
    }

    @Test func pendingLinkDoesNotHideASatisfiedOne() {
        let pending = Interface(index: 7, name: "eth1", type: .wired)
        let e = evaluate([pending, Sample.wlan0()])
        #expect(e.path.status == .satisfied)
        #expect(e.path.primary?.name == "wlan0")
    }

    @Test func addressedWithoutDefaultRouteIsUnsatisfiedNoRoute() {
        let lan = Interface(index: 2, name: "eth0", type: .wired, addresses: ["192.168.1.5/24"])
        let e = evaluate([lan])
        #expect(e.path.status == .unsatisfied)
        #expect(e.path.unsatisfiedReason == .noRoute)
        #expect(outcome(e, "eth0") == .rejected(.noDefaultRoute))
    }

    /// An interface's default routes are those of tables a rule reaches (the Linux layer drops
    /// the rest: KernelTableRuleTests), so one in table 100 carries the path like main's.
    @Test func defaultRouteOutsideTheMainTableCounts() {
        let lan = Interface(
            index: 2,
            name: "eth0",
            type: .wired,
            addresses: ["192.168.1.5/24"],
            defaultRoutes: [DefaultRoute(via: "192.168.1.1", table: 100)]
        )
        #expect(evaluate([lan]).path.primary?.name == "eth0")
    }

    @Test func defaultRouteOfAFamilyWithoutUsableAddressDoesNotCount() {
        // An IPv6 default route learned from an RA while the global address is still tentative.
        let eth0 = Interface(
            index: 2,
            name: "eth0",
            type: .wired,
            addresses: [InterfaceAddress("2001:db8:2::2", prefixLength: 64, isTentative: true), "192.168.1.5/24"],
            defaultRoutes: [DefaultRoute(via: "fe80::1")]
        )
        let e = evaluate([eth0])
        #expect(e.path.status == .unsatisfied)
        #expect(e.path.unsatisfiedReason == .noRoute)
    }

    // MARK: Families, gateways, DNS

    @Test func primariesAreChosenPerFamily() {
        let eth0 = Sample.uplink(2, "eth0", .wired, metric: 100)  // IPv4 only
        let wlan0 = Sample.uplink(3, "wlan0", .wifi, metric: 600, ipv6: true)
        let e = evaluate([eth0, wlan0])
        #expect(e.path.primary?.name == "eth0")
        #expect(e.path.primaryIPv4?.name == "eth0")
        #expect(e.path.primaryIPv6?.name == "wlan0")
        #expect(e.path.supportsIPv4)
        #expect(e.path.supportsIPv6)
        #expect(e.path.gateways == [Sample.gateway4(2), Sample.gateway6(3)])
        #expect(e.path.usesInterfaceType(.wifi))
    }

    @Test func perFamilyPrimaryUsesThatFamilysMetric() {
        let eth0 = Sample.uplink(2, "eth0", .wired, metric: 100, ipv6: true, ipv6Metric: 1024)
        let wlan0 = Sample.uplink(3, "wlan0", .wifi, metric: 600, ipv6: true, ipv6Metric: 600)
        let e = evaluate([eth0, wlan0])
        #expect(e.path.primaryIPv4?.name == "eth0")
        #expect(e.path.primaryIPv6?.name == "wlan0")
        #expect(e.path.primary?.name == "eth0")
    }

    @Test func ipv6OnlyPathSupportsOnlyIPv6() {
        let eth0 = Sample.uplink(2, "eth0", .wired, ipv4: false, ipv6: true)
        let e = evaluate([eth0])
        #expect(e.path.status == .satisfied)
        #expect(!e.path.supportsIPv4)
        #expect(e.path.supportsIPv6)
        #expect(e.path.primaryIPv4 == nil)
        #expect(e.path.gateways == [Sample.gateway6(2)])
    }

    @Test func onLinkDefaultRouteHasNoGateway() {
        let modem = Interface(
            index: 4,
            name: "wwan0",
            type: .cellular,
            isMetered: true,
            addresses: ["100.64.7.9/30"],
            defaultRoutes: [DefaultRoute(family: .ipv4, metric: 700)]
        )
        let e = evaluate([modem])
        #expect(e.path.status == .satisfied)
        #expect(e.path.gateways.isEmpty)
    }

    @Test func loopbackResolverSupportsDNSOnAnySatisfiedPath() {
        let ipv6Only = Sample.uplink(2, "eth0", .wired, ipv4: false, ipv6: true)
        #expect(evaluate([Sample.loopback, ipv6Only], dns: ["127.0.0.53"]).path.supportsDNS)
        #expect(evaluate([Sample.loopback, Sample.eth0()], dns: ["::1"]).path.supportsDNS)
    }

    @Test func remoteResolverNeedsItsFamily() {
        #expect(evaluate([Sample.eth0()], dns: ["192.0.2.53"]).path.supportsDNS)
        #expect(!evaluate([Sample.eth0()], dns: ["2001:db8::53"]).path.supportsDNS)
        #expect(evaluate([Sample.eth0()], dns: ["2001:db8::53", "192.0.2.53"]).path.supportsDNS)
    }

    @Test func noResolverOrNoPathMeansNoDNS() {
        #expect(!evaluate([Sample.eth0()]).path.supportsDNS)
        let down = Sample.uplink(2, "eth0", .wired, carrier: false)
        #expect(!evaluate([Sample.loopback, down], dns: ["127.0.0.53"]).path.supportsDNS)
    }

    @Test func constrainedPrimaryMakesThePathConstrained() {
        var wwan0 = Sample.wwan0()
        wwan0.isConstrained = true
        #expect(evaluate([wwan0]).path.isConstrained)
        #expect(!evaluate(PathPolicy(metered: .avoid), [wwan0, Sample.wlan0()]).path.isConstrained)
    }

    @Test func pathCarriesThePolicyName() {
        #expect(evaluate(PathPolicy(name: "uplink"), [Sample.eth0()]).path.policy == "uplink")
    }

    // MARK: Targets

    private func targetState(_ interfaces: [Interface], _ reachability: SystemState.TargetReachability?)
        -> SystemState
    {
        SystemState(interfaces: interfaces, targets: reachability.map { ["vpn.example.org": $0] } ?? [:])
    }

    @Test func targetCountsOnlyInterfacesThatRouteToIt() {
        let reach = SystemState.TargetReachability(
            addresses: ["203.0.113.7"],
            routes: [.init(interfaceIndex: 3, prefixLength: 24, metric: 600, gateway: Sample.gateway4(3))]
        )
        let policy = PathPolicy(target: "vpn.example.org")
        let e = PathEvaluator(policy: policy).evaluate(targetState([Sample.eth0(), Sample.wlan0()], reach))
        #expect(e.path.status == .satisfied)
        #expect(e.path.availableInterfaces.map(\.name) == ["wlan0"])
        #expect(e.path.gateways == [Sample.gateway4(3)])
        #expect(outcome(e, "eth0") == .rejected(.noRouteToTarget))
    }

    @Test func targetRouteCountsWithoutADefaultRoute() {
        // A site-to-site link that only carries a specific prefix.
        let lan = Interface(index: 5, name: "eth1", type: .wired, addresses: ["198.51.100.2/24"])
        let reach = SystemState.TargetReachability(
            addresses: ["198.51.100.80"],
            routes: [.init(interfaceIndex: 5, prefixLength: 24)]
        )
        let path = PathEvaluator(policy: PathPolicy(target: "vpn.example.org")).path(for: targetState([lan], reach))
        #expect(path.status == .satisfied)
        #expect(path.primary?.name == "eth1")
        #expect(path.gateways.isEmpty)
    }

    @Test func targetRoutesOrderCandidatesByTheirMetric() {
        let reach = SystemState.TargetReachability(
            addresses: ["203.0.113.7"],
            routes: [
                .init(interfaceIndex: 2, prefixLength: 0, metric: 900),
                .init(interfaceIndex: 3, prefixLength: 0, metric: 100),
            ]
        )
        let path = PathEvaluator(policy: PathPolicy(target: "vpn.example.org"))
            .path(for: targetState([Sample.eth0(metric: 100), Sample.wlan0(metric: 600)], reach))
        #expect(path.availableInterfaces.map(\.name) == ["wlan0", "eth0"])
    }

    @Test(arguments: [
        SystemState.TargetReachability(addresses: ["203.0.113.7"], routes: []),
        SystemState.TargetReachability(
            addresses: ["2001:db8:ffff::7"],
            routes: [.init(interfaceIndex: 2, prefixLength: 0)]
        ),
    ])
    func unreachableTargetIsUnsatisfiedTargetUnreachable(_ reach: SystemState.TargetReachability) {
        let path = PathEvaluator(policy: PathPolicy(target: "vpn.example.org")).path(
            for: targetState([Sample.eth0()], reach)
        )
        #expect(path.status == .unsatisfied)
        #expect(path.unsatisfiedReason == .targetUnreachable)
    }

    @Test(arguments: [
        (SystemState.TargetReachability(addresses: [], routes: [], resolution: .pending), "is still being looked up"),
        (
            SystemState.TargetReachability(
                addresses: [],
                routes: [.init(interfaceIndex: 2, prefixLength: 0)],
                resolution: .failed(reason: "Temporary failure in name resolution")
            ), "unresolved: Temporary failure in name resolution"
        ),
        // Traces recorded before resolution was kept: no address meant a failed lookup.
        (SystemState.TargetReachability(addresses: [], routes: []), "unresolved: no address"),
        (nil, "is still being looked up"),
    ])
    func unresolvedTargetIsUnsatisfiedTargetUnresolvedAndExplainSaysWhy(
        _ reach: SystemState.TargetReachability?,
        detail: String
    ) {
        let e = PathEvaluator(policy: PathPolicy(target: "vpn.example.org")).evaluate(
            targetState([Sample.eth0()], reach)
        )
        #expect(e.path.status == .unsatisfied)
        #expect(e.path.unsatisfiedReason == .targetUnresolved)
        #expect(outcome(e, "eth0") == .rejected(.targetUnresolved))
        let verdict = e.verdicts.first { $0.interface.name == "eth0" }
        #expect(verdict?.detail.hasPrefix("target vpn.example.org is unresolved") == true, "\(verdict?.detail ?? "-")")
        #expect(verdict?.detail.contains(detail) == true, "\(verdict?.detail ?? "-")")
    }

    @Test func unresolvedTargetsFailureWithControlCharactersIsEscapedInTheDetail() {
        let reach = SystemState.TargetReachability(addresses: [], routes: [], resolution: .failed(reason: "bad\nline"))
        let e = PathEvaluator(policy: PathPolicy(target: "vpn.example.org")).evaluate(
            targetState([Sample.eth0()], reach)
        )
        let detail = e.verdicts.first { $0.interface.name == "eth0" }?.detail ?? ""
        #expect(!detail.contains("\n") && detail.hasSuffix(#"bad\nline"#), "\(detail)")
    }

    @Test func emptyTargetMeansNoTarget() {
        #expect(PathPolicy(target: "").target == nil)
        #expect(evaluate(PathPolicy(target: ""), [Sample.eth0()]).path.status == .satisfied)
    }
}
