import Foundation
import TestSupport
import Testing

/// The embedding example: a program registers its own plugin type in code and runs the agent.
@Suite(.enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct EmbeddedAgentTests {
    @Test("a plugin registered in code by an embedding program receives the path events of a veth toggle")
    func embeddedPluginReceivesEvents() async throws {
        try await NetworkNamespace.with(["embed", "peer"]) { namespaces in
            try AgentLifecycleTests.uplink(namespaces)
            let dir = try ScratchDirectory.make("np-embed")
            try FileManager.default.createDirectory(
                at: dir.appendingPathComponent("hooks.d"),
                withIntermediateDirectories: true
            )
            defer { try? FileManager.default.removeItem(at: dir) }
            let config = dir.appendingPathComponent("netpath.toml")
            try """
            [agent]
            hooks_dir = "\(dir.appendingPathComponent("hooks.d").path)"

            [plugin.primary-announcer]
            prefix = "announce:"

            [[rule]]
            name = "announce"
            on = ["satisfied", "unsatisfied", "changed"]
            plugins = ["primary-announcer"]
            """.write(to: config, atomically: true, encoding: .utf8)
            let program = try RunningProcess([
                "ip", "netns", "exec", namespaces[0].name, BuiltProducts.path("netpath-embedded-example"),
                "--config", config.path, "--control-socket", dir.appendingPathComponent("agent.sock").path,
            ])
            defer { program.terminate() }
            let lines = Recorder<String>()
            await lines.record(program.stdoutLines)
            let startup = try await lines.next("the startup path from the plugin") { $0.hasPrefix("announce:") }
            #expect(startup == "announce: default satisfied via up0 (other)")
            try namespaces[1].ip("link", "set", "up0p", "down")
            #expect(try await lines.next("unsatisfied from the plugin") == "announce: default unsatisfied")
            try namespaces[1].ip("link", "set", "up0p", "up")
            #expect(try await lines.next("satisfied again") == "announce: default satisfied via up0 (other)")
        }
    }
}
