// SPDX-License-Identifier: Apache-2.0

import NetPathCore
import Testing

@testable import NetPathConfig

@Suite struct RuleMatcherTests {
    static let rules = """
        [agent]
        hook_timeout = "20s"

        [[policy]]
        name = "uplink"
        metered = "avoid"
        prefer = ["wired", "wifi", "cellular"]

        [[policy]]
        name = "lan"
        require = ["wired"]

        [[rule]]
        name = "backups-pause-on-metered"
        on = ["changed", "satisfied"]
        policy = "uplink"
        metered = true
        run = ["50-backups"]
        plugins = ["event-log"]
        timeout = "10s"

        [[rule]]
        name = "modem-off"
        on = ["up"]
        type = ["wired"]
        run = ["20-modem-off"]

        [[rule]]
        name = "wlan-anything"
        interface = "wlan*"

        [plugin.event-log]
        path = "/tmp/events"
        """

    var matcher: RuleMatcher {
        get throws { RuleMatcher(configuration: try #require(ConfigurationFixtures.load(Self.rules))) }
    }

    static func interfaceEvent(_ name: Event.Name, _ interface: Interface) -> Event {
        Event(
            time: StateFixtures.time,
            name: name,
            scope: .interface,
            interface: interface.name,
            interfaceType: interface.type,
            interfaceState: interface
        )
    }

    static func pathEvent(_ name: Event.Name, policy: PathPolicy, state: SystemState) -> Event {
        let path = PathEvaluator(policy: policy).path(for: state)
        return Event(
            time: StateFixtures.time,
            name: name,
            scope: .path,
            interface: path.primary?.name,
            interfaceType: path.primary?.type,
            policy: policy.name,
            path: path
        )
    }

    @Test func withoutRulesEveryEventGoesToEveryHookAndConfiguredPlugin() throws {
        let configuration = try #require(ConfigurationFixtures.load("[plugin.event-log]\npath = \"/x\""))
        let matcher = RuleMatcher(configuration: configuration)
        for name in Event.Name.allCases {
            let event = Event(time: StateFixtures.time, name: name, scope: name.scopes[0], interface: "eth0")
            #expect(
                matcher.targets(for: event) == [
                    DispatchTarget(rule: nil, hooks: .all, plugins: ["event-log"], timeout: .seconds(30))
                ]
            )
        }
        let verdicts = matcher.explain(Self.interfaceEvent(.up, StateFixtures.wired()))
        #expect(
            verdicts.map(\.description) == [
                "dispatcher mode: no rules are configured: every event goes to every hook; plugins event-log; timeout 30s"
            ]
        )
    }

    @Test func anInterfaceEventMatchesByNameAndType() throws {
        let targets = try matcher.targets(for: Self.interfaceEvent(.up, StateFixtures.wired()))
        #expect(targets == [DispatchTarget(rule: "modem-off", hooks: .named(["20-modem-off"]), timeout: .seconds(20))])
    }

    @Test func aGlobRuleWithoutOnMatchesEveryEventOfTheInterface() throws {
        let matcher = try matcher
        for name in [Event.Name.added, .carrierDown, .addressAdded, .changed, .removed] {
            #expect(
                matcher.targets(for: Self.interfaceEvent(name, StateFixtures.wifi())).map(\.rule) == ["wlan-anything"]
            )
        }
        #expect(matcher.targets(for: Self.interfaceEvent(.down, StateFixtures.wired())).isEmpty)
    }

    @Test func aPathEventMatchesAgainstItsPrimaryAndIsExpensive() throws {
        let uplink = try #require(ConfigurationFixtures.load(Self.rules)?.policy(named: "uplink"))
        let matcher = try matcher
        // Only the modem: the path is expensive, its primary is wwan0.
        let metered = Self.pathEvent(.satisfied, policy: uplink, state: StateFixtures.state(StateFixtures.lte()))
        #expect(
            matcher.targets(for: metered) == [
                DispatchTarget(
                    rule: "backups-pause-on-metered",
                    hooks: .named(["50-backups"]),
                    plugins: ["event-log"],
                    timeout: .seconds(10)
                )
            ]
        )
        // Wi-Fi too: not expensive, and the primary is wlan0, which the glob rule matches.
        let unmetered = Self.pathEvent(
            .changed,
            policy: uplink,
            state: StateFixtures.state(StateFixtures.lte(), StateFixtures.wifi())
        )
        #expect(matcher.targets(for: unmetered).map(\.rule) == ["wlan-anything"])
    }

    @Test func theExplanationNamesTheFirstFailingCriterion() throws {
        let configuration = try #require(ConfigurationFixtures.load(Self.rules))
        let matcher = RuleMatcher(configuration: configuration)
        let lan = try #require(configuration.policy(named: "lan"))
        let uplink = try #require(configuration.policy(named: "uplink"))

        let up = matcher.explain(Self.interfaceEvent(.up, StateFixtures.wifi()))
        #expect(
            up.map(\.description) == [
                #"rule "backups-pause-on-metered": "up" is not in on ["changed", "satisfied"]"#,
                #"rule "modem-off": interface "wlan0" has type wifi, not in type ["wired"]"#,
                #"rule "wlan-anything": matches: every hook; timeout 20s"#,
            ]
        )
        #expect(up.map(\.failed) == [.event, .type, nil])

        let otherPolicy = matcher.explain(
            Self.pathEvent(.satisfied, policy: lan, state: StateFixtures.state(StateFixtures.wired()))
        )
        #expect(otherPolicy[0].reason == #"the event is for policy "lan", not "uplink""#)
        #expect(otherPolicy[2].reason == #"primary interface "eth0" does not match "wlan*""#)

        let cheap = matcher.explain(
            Self.pathEvent(.satisfied, policy: uplink, state: StateFixtures.state(StateFixtures.wired()))
        )
        #expect(cheap[0].reason == "the path is not expensive; the rule wants metered = true")
        #expect(cheap[0].failed == .metered)

        let none = matcher.explain(Self.pathEvent(.unsatisfied, policy: uplink, state: StateFixtures.state()))
        #expect(none[2].reason == #"the path has no primary interface to match "wlan*""#)
    }

    @Test func namingAPolicyRestrictsARuleOnBothScopesToPathEvents() throws {
        let text = """
            [[rule]]
            name = "changes"
            on = ["changed"]
            policy = "default"
            """
        let matcher = RuleMatcher(configuration: try #require(ConfigurationFixtures.load(text)))
        let interfaceChange = Self.interfaceEvent(.changed, StateFixtures.wired())
        #expect(matcher.targets(for: interfaceChange).isEmpty)
        #expect(matcher.explain(interfaceChange)[0].failed == .policy)
        #expect(
            matcher.targets(for: Event(time: StateFixtures.time, name: .changed, scope: .path, policy: "default")).count
                == 1
        )
        let other = Event(time: StateFixtures.time, name: .changed, scope: .path, policy: "other")
        #expect(matcher.targets(for: other).isEmpty)
    }

    @Test func rulesMatchInFileOrderAndEachGivesATarget() throws {
        let text = """
            [[rule]]
            name = "b"
            run = ["10-b"]
            [[rule]]
            name = "a"
            """
        let matcher = RuleMatcher(configuration: try #require(ConfigurationFixtures.load(text)))
        let targets = matcher.targets(for: Self.interfaceEvent(.down, StateFixtures.wired()))
        #expect(targets.map(\.rule) == ["b", "a"])
        #expect(targets.map(\.hooks) == [.named(["10-b"]), .all])
    }

    @Test("a rule's connectivity matches connectivity-changed by its new state, and other events by the current one")
    func connectivityFilter() throws {
        let configuration = try #require(
            ConfigurationFixtures.load(
                "[[rule]]\nname = \"portal\"\non = [\"connectivity-changed\", \"up\"]\nconnectivity = [\"portal\"]\n"
            )
        )
        let matcher = RuleMatcher(configuration: configuration)
        var eth0 = Interface(index: 2, name: "eth0", type: .wired)
        eth0.connectivity = .full
        let changed = Event(
            time: .now,
            name: .connectivityChanged,
            scope: .interface,
            interface: "eth0",
            interfaceState: eth0,
            connectivity: .portal,
            previousConnectivity: .full
        )
        #expect(matcher.targets(for: changed).map(\.rule) == ["portal"])
        var back = changed
        back.connectivity = .full
        back.previousConnectivity = .portal
        #expect(matcher.targets(for: back).isEmpty)
        let verdict = try #require(matcher.explain(back).first)
        #expect(verdict.failed == .connectivity)
        #expect(verdict.reason == "interface \"eth0\"'s connectivity is full, not in connectivity [\"portal\"]")
        let up = Event(time: .now, name: .up, scope: .interface, interface: "eth0", interfaceState: eth0)
        #expect(matcher.targets(for: up).isEmpty)
    }
}
