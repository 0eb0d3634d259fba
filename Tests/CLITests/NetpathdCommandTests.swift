// SPDX-License-Identifier: Apache-2.0

import Foundation
import TestSupport
import Testing

/// `netpathd` refusing to start, as an administrator reads it: the same diagnostics as
/// `netpathctl check-config`, and a last line that says which kind of problem it was.
struct NetpathdCommandTests {
    static func netpathd(_ arguments: [String]) throws -> Command.Result {
        // Every case here fails while loading the configuration, before anything needs root.
        try Command.run(["timeout", "30", BuiltProducts.path("netpathd")] + arguments)
    }

    @Test("a missing configuration file is reported as not found, not as a configuration with errors")
    func missingConfiguration() throws {
        let result = try Self.netpathd(["--config", "/nonexistent-np/netpath.toml"])
        #expect(result.status == 1)
        #expect(
            result.stderr == """
                /nonexistent-np/netpath.toml: error: configuration file not found
                netpathd: not started: the configuration file was not found

                """
        )
    }

    @Test(
        "what check-config refuses, netpathd refuses with the same line: a metrics host name, an unknown control_group",
        arguments: [
            "[agent]\nmetrics = \"localhost:9479\"\n", "[agent]\ncontrol_group = \"nptest-no-such-group\"\n",
        ]
    )
    func sameDiagnosticsAsCheckConfig(_ text: String) throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("np-agent-\(UUID().uuidString).toml")
        try text.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let check = try Command.run([BuiltProducts.path("netpathctl"), "check-config", file.path])
        #expect(check.status == 1)
        let result = try Self.netpathd(["--config", file.path])
        #expect(result.status == 1)
        #expect(result.stderr == check.stderr + "netpathd: not started: the configuration has errors\n")
    }
}
