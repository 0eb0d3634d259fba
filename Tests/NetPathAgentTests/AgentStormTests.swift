// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathControl
import NetPathCore
import TestSupport
import Testing

/// The agent's memory under a storm while its hooks are stalled: every queue from the kernel to
/// the hooks is bounded, and the final state of every interface and policy still reaches them.
@Suite(.serialSuite, .enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct AgentStormTests {
    static let padding = 200

    @Test(
        "a stalled hook under a 100,000-route storm and 1,000 flaps: RSS stays bounded; every final state is dispatched after"
    )
    func stalledHooksUnderAStorm() async throws {
        try await NetworkNamespace.with(["storm", "peer"]) { namespaces in
            try AgentLifecycleTests.uplink(namespaces)
            try await Self.scenario(host: namespaces[0], peer: namespaces[1])
        }
    }

    static func scenario(host: NetworkNamespace, peer: NetworkNamespace) async throws {
        // Links that make each snapshot weigh something (a queue of them shows in RSS), and one
        // whose MTU marks how far the agent has got.
        try host.batch(
            (0..<padding).map { "link add pad\($0)a type veth peer name pad\($0)b" }
                + ["link add mark0 type veth peer name mark0p"]
        )
        let scratch = try ScratchDirectory.make("np-storm")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let gate = try HookGate(in: scratch)
        defer { gate.release() }
        // Every hook run waits at the gate, from the startup events on: a stalled dispatcher.
        let agent = try await AgentHarness(
            namespace: host,
            config: "[agent]\nhook_timeout = \"5m\"\n",
            extraHooks: ["05-gate": "#!/bin/sh\n\(gate.waitCommand)\n"]
        )
        defer {
            gate.release()
            agent.stop()
        }
        let pid = agent.process.processIdentifier
        try await awaitStatus(agent, "the agent's first state") { status in
            status.interfaces.contains { $0.name == "mark0" }
        }
        #expect(try String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8) == "netpathd\n")
        let initial = try peakKiB(pid)

        // 1,000 flaps of the uplink, ending down, one `ip` command each, so that each is a batch
        // of kernel messages, and a snapshot, of its own. Admin state, not the peer's: the kernel
        // itself merges carrier changes that come faster than its link watch (about a second).
        // Then a mark: once the agent shows it, it has taken the flaps in.
        let ip = "ip -n \(host.name) link set up0"
        try Command.check(["sh", "-c", "for i in $(seq 1000); do \(ip) down; \(ip) up; done; \(ip) down"])
        try await mark(host, agent, mtu: 1400)
        let afterFlaps = try peakKiB(pid)

        // 100,000 routes (through lo: up0 is down now), then a mark again.
        try host.batch((0..<100_000).map { "route add 10.\($0 >> 16).\(($0 >> 8) & 255).\($0 & 255)/32 dev lo" })
        try await mark(host, agent, mtu: 1300)
        let afterStorm = try peakKiB(pid)
        // Peaks (VmHWM): what a queue held at its fullest shows even after it drained. The flaps
        // change no lasting state, so whatever they add is queued work; 100,000 routes cost the
        // engine's table about 50 MiB (libnl-facts.md), and a debug build more.
        let growth = (flaps: (afterFlaps - initial) / 1024, storm: (afterStorm - afterFlaps) / 1024)
        #expect(growth.flaps < 16, "1,000 flaps grew the peak RSS by \(growth.flaps) MiB")
        #expect(growth.storm < 160, "the storm grew the peak RSS by \(growth.storm) MiB")

        gate.release()
        // Every subject's final state reaches the hook: up0 down without carrier, the path
        // unsatisfied, the mark's last change, and every padding link's startup state.
        try await agent.awaitHookRun("the path's final state", timeout: .seconds(60)) {
            $0 == "- unsatisfied - 0"
        }
        try await agent.awaitHookRun("up0's final carrier", timeout: .seconds(60)) { $0 == "- carrier-down up0 0" }
        try await agent.awaitHookRun("up0's final state", timeout: .seconds(60)) { $0 == "- down up0 0" }
        try await agent.awaitHookRun("the mark's last change", timeout: .seconds(60)) { $0 == "- changed mark0 0" }
        try await agent.awaitHookRun("every padding link's state", count: 2 * padding, timeout: .seconds(60)) {
            $0.hasPrefix("- down pad") && $0.hasSuffix(" 1")
        }
        let runs = agent.hookRuns()
        let up0 = runs.filter { $0.hasSuffix(" up0 0") }
        #expect(up0.last { $0.contains(" up ") || $0.contains(" down ") } == "- down up0 0", "\(up0.suffix(6))")
        #expect(up0.last { $0.contains("carrier") } == "- carrier-down up0 0", "\(up0.suffix(6))")
        let path = runs.filter { $0.contains("satisfied") && $0.hasSuffix(" 0") }
        #expect(path.last == "- unsatisfied - 0", "\(path.suffix(4))")
        // Stalled for the whole storm, the hooks ran a handful of events per subject, not every flap.
        #expect(up0.count < 20, "\(up0.count) runs for up0")
    }

    /// Sets mark0's MTU and waits until the agent's status shows it.
    static func mark(_ host: NetworkNamespace, _ agent: AgentHarness, mtu: UInt32) async throws {
        try host.ip("link", "set", "mark0", "mtu", "\(mtu)")
        try await awaitStatus(agent, "mark0 at MTU \(mtu)") { status in
            status.interfaces.contains { $0.name == "mark0" && $0.mtu == mtu }
        }
    }

    /// Asks for the agent's status until `predicate` holds, within a minute; until the control
    /// socket exists, a refused connection is one more try.
    static func awaitStatus(
        _ agent: AgentHarness,
        _ what: String,
        where predicate: (StatusReport) -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            if let status = try? ControlClient(path: agent.socketPath).request(.status).status, predicate(status) {
                return
            }
            guard ContinuousClock.now < deadline else {
                throw TestFailure("timed out after 60 s waiting for the agent's status to show \(what)")
            }
            _ = try? await agent.stderr.next("agent log activity", timeout: .milliseconds(100))
        }
    }

    /// The process's resident set (`VmRSS` in `/proc/PID/status`), in KiB.
    static func residentKiB(_ pid: Int32) throws -> Int { try status("VmRSS", pid) }

    /// The process's peak resident set so far (`VmHWM`), in KiB.
    static func peakKiB(_ pid: Int32) throws -> Int { try status("VmHWM", pid) }

    private static func status(_ key: String, _ pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(key + ":") }),
            let kib = Int(line.split(whereSeparator: { $0 == " " || $0 == "\t" })[1])
        else { throw TestFailure("no \(key) in /proc/\(pid)/status") }
        return kib
    }
}
