// SPDX-License-Identifier: Apache-2.0

import Dispatch
import Foundation
import NetPath
import TestSupport
import Testing

/// The source of PathMonitor.shared: the agent when it answers, the kernel otherwise, and each
/// path says which. Uses AgentPathSourceTests' uplinks: the agent's overrides make eth0 wired and
/// preferred; evaluated locally, without overrides, the lower metric (wlan0, type other) wins.
@Suite(.enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct AgentOrKernelPathSourceTests {
    @Test("it follows a running agent, says so in the path, and carries on from the kernel when the agent stops")
    func followsTheAgentThenTheKernel() async throws {
        try await NetworkNamespace.with(["shared", "peer"]) { namespaces in
            let (namespace, peer) = (namespaces[0], namespaces[1])
            try AgentPathSourceTests.makeUplinks(namespace, peer: peer)
            let agent = try await AgentProcess(namespace: namespace, config: AgentPathSourceTests.config)
            defer { agent.stop() }
            try await agent.awaitReady()
            let source = AgentOrKernelPathSource(
                agent: AgentPathSource(socketPath: agent.socketPath),
                kernel: KernelPathSource(options: .init(namespace: namespace.name))
            )
            let monitor = PathMonitor(policy: .default, source: source)
            let recorder = Recorder<NetworkPath>()
            await recorder.record(monitor.paths)
            defer { Task { await recorder.stop() } }

            let first = try await recorder.next("the agent's path")
            #expect(
                first.origin == .agent && first.primary?.name == "eth0" && first.primary?.type == .wired,
                "\(first)"
            )

            agent.process.send(SIGTERM)
            let local = try await recorder.next("the kernel's path once the agent stops") { $0.origin == .kernel }
            #expect(local.primary?.name == "wlan0" && local.primary?.type == .other, "\(local)")
            #expect(monitor.failure == nil, "the iteration goes on: \(String(describing: monitor.failure))")

            try peer.ip("link", "set", "wlan0p", "down")
            let after = try await recorder.next("a kernel change after the switch") { $0.primary?.name == "eth0" }
            #expect(after.origin == .kernel)
            await recorder.stop()
        }
    }

    @Test("with no agent answering, the kernel's path, saying so")
    func noAgentMeansTheKernel() async throws {
        try await NetworkNamespace.with(["shared-none", "peer"]) { namespaces in
            try AgentPathSourceTests.makeUplinks(namespaces[0], peer: namespaces[1])
            let missing = FileManager.default.temporaryDirectory.appendingPathComponent(
                "np-none-\(UUID().uuidString.prefix(8)).sock"
            ).path
            let source = AgentOrKernelPathSource(
                agent: AgentPathSource(socketPath: missing),
                kernel: KernelPathSource(options: .init(namespace: namespaces[0].name))
            )
            let monitor = PathMonitor(policy: .default, source: source)
            monitor.start(queue: DispatchQueue(label: "shared-none"))
            defer { monitor.cancel() }
            let path = try #require(monitor.currentPath)
            #expect(path.origin == .kernel && path.primary?.name == "wlan0", "\(path)")
            #expect(String(describing: path).hasSuffix("; from the kernel"))
        }
    }
}
