// SPDX-License-Identifier: Apache-2.0

import Foundation
import Logging
import NetPathAgent
import NetPathCore
import NetPathTesting
import ServiceLifecycle
import Synchronization
import TestSupport
import Testing

/// A resume from suspend, simulated by boot clocks that jump: the agent re-reads the kernel's
/// state and probes connectivity at once, and says so in its log.
@Suite(.serialSuite, .enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct ResumeTests {
    @Test("boot time jumping ahead of monotonic time makes the agent re-read the kernel and probe at once")
    func resumeRereadsAndProbes() async throws {
        try await NetworkNamespace.with(["resume", "peer"]) { namespaces in
            // One uplink, without IPv6 link-local addresses: their arrival after DAD would be a
            // change of addresses, and a probe of its own.
            let (ns, peer) = (namespaces[0], namespaces[1])
            try ns.addVeth("wired0", peer: "wired0p", in: peer)
            try ns.ip("link", "set", "wired0", "addrgenmode", "none")
            try peer.ip("link", "set", "wired0p", "addrgenmode", "none")
            try peer.ip("link", "set", "wired0p", "up")
            try ns.ip("link", "set", "wired0", "up")
            try ns.ip("addr", "add", "10.1.0.10/24", "dev", "wired0")
            try ns.ip("route", "add", "default", "via", "10.1.0.1", "dev", "wired0")
            let directory = try ScratchDirectory.make("np-resume")
            defer { try? FileManager.default.removeItem(at: directory) }
            chmod(directory.path, 0o755)
            let file = directory.appendingPathComponent("netpath.toml")
            // A probe interval of an hour: any probe after the first is the resume's.
            try """
            [agent]
            hooks_dir = "\(directory.path)/hooks.d"

            [connectivity]
            interval = "1h"
            """.write(to: file, atomically: true, encoding: .utf8)
            let prober = ScriptedConnectivityProber(default: .full)
            let clocks = JumpingClocks()
            let log = RecordingLog()
            let agent = try Agent(
                options: AgentOptions(
                    configPath: file.path,
                    namespace: namespaces[0].name,
                    controlSocketPath: directory.appendingPathComponent("agent.sock").path,
                    readyWaitLimit: .seconds(1),
                    logger: Logger(label: "test.resume") { _ in log.handler },
                    connectivityProber: { prober },
                    bootClocks: clocks,
                    resumeCheckInterval: .milliseconds(50)
                )
            )
            let group = ServiceGroup(
                configuration: .init(services: [.init(service: agent)], logger: Logger(label: "test.group"))
            )
            let task = Task { try await group.run() }
            defer { prober.releaseAll() }
            do {
                try await waitUntil("the uplink probed once") { prober.probeCount("wired0") == 1 }
                // Quiet: no probe is due for an hour, and no re-read is asked for.
                try await Task.sleep(for: .milliseconds(300))
                #expect(prober.probeCount("wired0") == 1)
                #expect(!log.contains("kernel state re-read"))

                clocks.suspend(for: .seconds(600))
                try await waitUntil("a probe after the resume") { prober.probeCount("wired0") >= 2 }
                try await waitUntil("the kernel's state re-read") {
                    log.contains("kernel state re-read: resumed from suspend")
                }
                #expect(log.contains("resumed after a suspend of about 600 s"))
            } catch {
                await group.triggerGracefulShutdown()
                _ = try? await task.value
                throw error
            }
            await group.triggerGracefulShutdown()
            _ = try? await task.value
        }
    }
}
