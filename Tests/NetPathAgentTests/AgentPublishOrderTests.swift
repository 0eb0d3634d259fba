// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathControl
import NetPathCore
import TestSupport
import Testing

/// The agent publishes a state before it starts the hooks of that state's events: a hook that
/// asks `netpathctl status` sees the change it was started for, never the state before it, even
/// when one kernel batch starts many hooks.
@Suite(.enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct AgentPublishOrderTests {
    static let links = 40

    @Test(
        "hooks started for the carrier-down of 40 links in one batch each see their link without carrier in netpathctl status"
    )
    func hooksSeeTheirOwnState() async throws {
        try await NetworkNamespace.with(["order", "peer"]) { namespaces in
            let (ns, peer) = (namespaces[0], namespaces[1])
            try ns.batch((0..<Self.links).map { "link add lk\($0) type veth peer name lk\($0)p netns \(peer.name)" })
            try ns.batch((0..<Self.links).map { "link set lk\($0) up" })
            try peer.batch((0..<Self.links).map { "link set lk\($0)p up" })
            let scratch = try ScratchDirectory.make("np-order")
            defer { try? FileManager.default.removeItem(at: scratch) }
            chmod(scratch.path, 0o755)
            // The harness's hooks.d sits beside its run/ directory, where the control socket is.
            let hook = """
                #!/bin/sh
                [ "$2" = carrier-down ] || exit 0
                \(BuiltProducts.path("netpathctl")) status --json --socket "$(dirname "$0")/../run/netpathd.sock" > \(scratch.path)/$1.part
                mv \(scratch.path)/$1.part \(scratch.path)/$1.json
                """
            let agent = try await AgentHarness(namespace: ns, config: "", extraHooks: ["20-status": hook])
            defer { agent.stop() }
            try await agent.awaitReady()

            try peer.batch((0..<Self.links).map { "link set lk\($0)p down" })
            for index in 0..<Self.links {
                let answer = scratch.appendingPathComponent("lk\(index).json")
                try await waitUntil("lk\(index)'s hook answered", timeout: .seconds(30)) {
                    FileManager.default.fileExists(atPath: answer.path)
                }
                let report = try JSONDecoder().decode(StatusReport.self, from: Data(contentsOf: answer))
                let link = try #require(report.interfaces.first { $0.name == "lk\(index)" })
                #expect(!link.carrier, "the hook for lk\(index)'s carrier-down saw it with its carrier")
            }
        }
    }
}
