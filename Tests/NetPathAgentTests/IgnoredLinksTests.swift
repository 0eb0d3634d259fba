// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathControl
import NetPathCore
import TestSupport
import Testing

/// `[agent] ignore` on a real kernel: container links come and go by the hundred and netpathd
/// runs no hook for them, lists them only as ignored, and keeps the real uplink's events flowing.
@Suite(.serialSuite, .enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct IgnoredLinksTests {
    /// A host end as Docker names it: `veth` and 7 hex digits.
    static func hostEnd(_ i: Int) -> String { "veth" + String(format: "%07x", 0xa11ce + i * 7919) }

    /// `docker0` and `count` veth pairs as Docker makes them: the host end enslaved to docker0 and
    /// up, the other end in `containers` (one `ip -batch`).
    static func addContainerLinks(_ count: Int, host: NetworkNamespace, containers: NetworkNamespace) throws {
        var lines = ["link add docker0 type bridge", "link set docker0 up"]
        for i in 0..<count {
            lines.append("link add \(hostEnd(i)) type veth peer name c\(i) netns \(containers.name)")
            lines.append("link set \(hostEnd(i)) master docker0 up")
        }
        try host.batch(lines)
    }

    static func deleteContainerLinks(_ count: Int, host: NetworkNamespace) throws {
        try host.batch((0..<count).map { "link del \(hostEnd($0))" } + ["link del docker0"])
    }

    /// `body` on a thread of its own (an `ip -batch` blocks), while the caller goes on.
    static func inBackground(_ body: @escaping @Sendable () throws -> Void) -> Task<Void, any Error> {
        Task.detached { try body() }
    }

    /// The agent's status, listing the ignored links.
    static func status(_ agent: AgentHarness) throws -> StatusReport {
        guard let status = try ControlClient(path: agent.socketPath).request(.status, all: true).status else {
            throw TestFailure("the agent sent no status")
        }
        return status
    }

    /// Flips the uplink's carrier (its peer's admin state) and waits for its hook.
    static func flipUplink(_ peer: NetworkNamespace, _ agent: AgentHarness, round: Int) async throws {
        for (state, event) in [("down", "carrier-down"), ("up", "carrier-up")] {
            try peer.ip("link", "set", "up0p", state)
            try await agent.awaitHookRun("up0's \(event) \(round)", count: round, timeout: .seconds(20)) {
                $0 == "- \(event) up0 0"
            }
        }
    }

    @Test(
        "500 container veth pairs created and deleted under the default config: no hook runs for them, status shows only the real uplinks, and the uplink's events flow meanwhile"
    )
    func containerBurstUnderTheDefaults() async throws {
        let pairs = 500
        try await NetworkNamespace.with(["ign", "peer", "ctr"]) { namespaces in
            let (host, peer, containers) = (namespaces[0], namespaces[1], namespaces[2])
            try AgentLifecycleTests.uplink([host, peer])
            let agent = try await AgentHarness(namespace: host, config: "[agent]\nsettle = \"0s\"\n")
            defer { agent.stop() }
            try await agent.awaitReady()

            let adding = Self.inBackground { try Self.addContainerLinks(pairs, host: host, containers: containers) }
            try await Self.flipUplink(peer, agent, round: 1)
            try await adding.value
            try await AgentStormTests.awaitStatus(agent, "\(pairs + 1) links ignored") { $0.ignoredCount == pairs + 1 }
            let during = try Self.status(agent)
            #expect(during.interfaces.map(\.name) == ["lo", "up0"])
            #expect(
                during.ignored?.first { $0.name == "docker0" }?.reason == #"name matches "docker0" in [agent] ignore"#
            )
            #expect(
                during.ignored?.first { $0.name == Self.hostEnd(0) }?.reason
                    == #"name matches "veth*" in [agent] ignore"#
            )

            let deleting = Self.inBackground { try Self.deleteContainerLinks(pairs, host: host) }
            try await Self.flipUplink(peer, agent, round: 2)
            try await deleting.value
            try await AgentStormTests.awaitStatus(agent, "no link ignored") { $0.ignoredCount == 0 }
            #expect(try Self.status(agent).interfaces.map(\.name) == ["lo", "up0"])

            // A last change of the uplink: by the time its hook ran, any event of the burst would
            // have been dispatched long before.
            try await Self.flipUplink(peer, agent, round: 3)
            let afterStartup = agent.hookRuns().filter { $0.hasSuffix(" 0") }
            let strangers = afterStartup.filter { !$0.contains(" up0 ") && !$0.contains(" - ") }
            #expect(strangers.isEmpty, "hooks ran for links netpath ignores: \(strangers.prefix(10))")
            #expect(!agent.hookRuns().contains { $0.contains(" veth") || $0.contains("docker0") })
        }
    }

    @Test("ignore = [] tracks the container links; a reload back to the default ignores them again")
    func anEmptyListBringsThemBack() async throws {
        let pairs = 20
        try await NetworkNamespace.with(["ign", "peer", "ctr"]) { namespaces in
            let (host, peer, containers) = (namespaces[0], namespaces[1], namespaces[2])
            try AgentLifecycleTests.uplink([host, peer])
            try Self.addContainerLinks(pairs, host: host, containers: containers)
            let agent = try await AgentHarness(namespace: host, config: "[agent]\nignore = []\n")
            defer { agent.stop() }
            try await agent.awaitReady()
            let tracked = try Self.status(agent)
            #expect(tracked.ignored == [] && tracked.ignoredCount == 0)
            #expect(Set(tracked.interfaces.map(\.name)).isSuperset(of: (0..<pairs).map(Self.hostEnd) + ["docker0"]))
            #expect(
                agent.hookRuns().contains("- up \(Self.hostEnd(3)) 1")
                    || agent.hookRuns().contains("- down \(Self.hostEnd(3)) 1")
            )

            // Back to the default: a reload re-reads the kernel with the new list.
            try agent.rewriteConfig("[agent]\n")
            agent.process.send(SIGHUP)
            try await AgentStormTests.awaitStatus(agent, "the container links ignored after the reload") {
                $0.ignoredCount == pairs + 1 && $0.interfaces.map(\.name) == ["lo", "up0"]
            }
            // And cleared again: they come back with their state.
            try agent.rewriteConfig("[agent]\nignore = []\n")
            agent.process.send(SIGHUP)
            try await AgentStormTests.awaitStatus(agent, "the container links tracked again") {
                $0.ignoredCount == 0 && $0.interfaces.contains { $0.name == Self.hostEnd(7) && $0.adminUp }
            }
        }
    }

    @Test(
        "a glob and a link kind in ignore: those links are ignored and listed with why by status --all and explain; the defaults no longer apply"
    )
    func aGlobAndAKind() async throws {
        try await NetworkNamespace.with(["ign", "peer", "ctr"]) { namespaces in
            let (host, peer, containers) = (namespaces[0], namespaces[1], namespaces[2])
            try AgentLifecycleTests.uplink([host, peer])
            try host.batch(
                (0..<5).map { "link add pod\($0) type veth peer name p\($0) netns \(containers.name)" }
                    + [
                        "link add lanbr0 type bridge",
                        "link add veth1234567 type veth peer name q0 netns \(containers.name)",
                    ]
            )
            let agent = try await AgentHarness(
                namespace: host,
                config: "[agent]\nignore = [\"pod*\", \"kind:bridge\"]\n"
            )
            defer { agent.stop() }
            try await agent.awaitReady()
            let status = try Self.status(agent)
            #expect(status.ignored?.map(\.name).sorted() == ["lanbr0", "pod0", "pod1", "pod2", "pod3", "pod4"])
            #expect(
                status.ignored?.first { $0.name == "lanbr0" }?.reason
                    == #"link kind bridge ("kind:bridge" in [agent] ignore)"#
            )
            #expect(status.interfaces.map(\.name).contains("veth1234567"))

            let netpathctl = BuiltProducts.path("netpathctl")
            let brief = try Command.check([netpathctl, "status", "--socket", agent.socketPath])
            #expect(brief.contains("6 links ignored ([agent] ignore; netpathctl status --all lists them)"), "\(brief)")
            #expect(!brief.contains("pod0"))
            // JSON: the count always, the list only when asked for.
            let counted =
                try JSONSerialization.jsonObject(
                    with: Data(try Command.check([netpathctl, "status", "--json", "--socket", agent.socketPath]).utf8)
                ) as? [String: Any]
            #expect(
                counted?["ignored_count"] as? Int == 6 && counted?["ignored"] == nil,
                "\(String(describing: counted))"
            )
            let listed =
                try JSONSerialization.jsonObject(
                    with: Data(
                        try Command.check([netpathctl, "status", "--json", "--all", "--socket", agent.socketPath]).utf8
                    )
                ) as? [String: Any]
            #expect((listed?["ignored"] as? [Any])?.count == 6, "\(String(describing: listed))")
            let all = try Command.check([netpathctl, "status", "--all", "--socket", agent.socketPath])
            let podLine = all.split(separator: "\n").first { $0.contains(" pod2 ") }
            #expect(podLine?.contains(#"name matches "pod*" in [agent] ignore"#) == true, "\(all)")
            // Without an agent, from the kernel and the same file: the same list.
            let local = try Command.check([
                "ip", "netns", "exec", host.name, netpathctl, "status", "--local", "--all", "--config",
                agent.configFile.path,
            ])
            #expect(local.contains("6 links ignored ([agent] ignore):"), "\(local)")
            #expect(local.split(separator: "\n").contains { $0.contains(" lanbr0 ") && $0.contains("kind:bridge") })
            let explain = try Command.check([netpathctl, "explain", "--socket", agent.socketPath])
            #expect(explain.contains("Ignored links (6;"), "\(explain)")
            #expect(explain.contains("lanbr0"))
        }
    }
}
