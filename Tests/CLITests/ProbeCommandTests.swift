// SPDX-License-Identifier: Apache-2.0

import Foundation
import TestSupport
import Testing

/// `netpathctl probe` without an agent behind it: the errors it gives.
struct ProbeCommandTests {
    @Test("--local on a configuration without [connectivity] probes nothing, and says which file")
    func localNeedsConnectivity() throws {
        let result = try Command.run([BuiltProducts.path("netpathctl"), "probe", "--local"])
        #expect(result.status != 0)
        #expect(
            result.stderr.contains("has no [connectivity] table: nothing is probed"),
            "\(result.stderr)"
        )
    }

    @Test("no agent at the socket: the error names it")
    func noAgent() throws {
        let socket = FileManager.default.temporaryDirectory.appendingPathComponent("np-probe-\(UUID().uuidString).sock")
        let result = try Command.run([BuiltProducts.path("netpathctl"), "probe", "eth0", "--socket", socket.path])
        #expect(result.status != 0)
        #expect(result.stderr.contains(socket.path), "\(result.stderr)")
    }
}
