// SPDX-License-Identifier: Apache-2.0

import Foundation
import TestSupport
import Testing

/// `netpathd --namespace NAME` follows another network namespace's links, but stays in its own:
/// its hooks run there, whichever thread decided to run them (the engine's thread, which entered
/// the followed namespace, must not spawn them).
@Suite(.enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct AgentNamespaceTests {
    /// The inode of network namespace `name` (`/run/netns/NAME`), as `/proc/PID/ns/net` names it.
    static func inode(_ namespace: NetworkNamespace) throws -> String {
        let attributes = try FileManager.default.attributesOfItem(atPath: "/run/netns/\(namespace.name)")
        return "net:[\(try #require(attributes[.systemFileNumber] as? Int))]"
    }

    @Test("hooks of a followed namespace's link changes run in the agent's own namespace")
    func hooksRunInTheAgentsNamespace() async throws {
        try await NetworkNamespace.with(["home", "followed", "peer"]) { namespaces in
            let (home, followed, peer) = (namespaces[0], namespaces[1], namespaces[2])
            try followed.addVeth("fl0", peer: "fl0p", in: peer)
            try followed.ip("link", "set", "fl0", "up")
            try peer.ip("link", "set", "fl0p", "up")
            let scratch = try ScratchDirectory.make("np-nshook")
            defer { try? FileManager.default.removeItem(at: scratch) }
            chmod(scratch.path, 0o755)
            let hook = """
                #!/bin/sh
                [ "$1" = fl0 ] || exit 0
                readlink /proc/self/ns/net >> \(scratch.path)/$2
                """
            let agent = try await AgentHarness(
                namespace: home,
                config: "[agent]\nsettle = \"0s\"\nstartup_events = false\n",
                arguments: ["--namespace", followed.name],
                extraHooks: ["20-namespace": hook]
            )
            defer { agent.stop() }
            try await agent.awaitReady()

            // Several changes: each finds the loop idle, the case the engine's thread would step.
            // Several changes, each awaited (the kernel coalesces carrier flips within a second of
            // each other): each finds the loop idle, the case the engine's thread would step.
            for round in 1...3 {
                for (state, event) in [("down", "carrier-down"), ("up", "carrier-up")] {
                    try peer.ip("link", "set", "fl0p", state)
                    try await agent.awaitHookRun("\(event) \(round) of fl0", count: round) {
                        $0.contains(" \(event) fl0 ")
                    }
                    _ = try await agent.awaitLines(
                        in: scratch.appendingPathComponent(event),
                        "20-namespace's line for \(event) \(round)",
                        count: round
                    ) { _ in true }
                }
            }
            let seen = Set(
                try ["carrier-down", "carrier-up"].flatMap { name in
                    try String(contentsOfFile: scratch.appendingPathComponent(name).path, encoding: .utf8)
                        .split(separator: "\n").map(String.init)
                }
            )
            let (homeInode, followedInode) = (try Self.inode(home), try Self.inode(followed))
            #expect(seen == [homeInode], "hooks ran in \(seen); home is \(homeInode), followed \(followedInode)")
        }
    }
}
