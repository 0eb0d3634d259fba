// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPath
import TestSupport
import Testing

/// The shipped plugins inside the real netpathd, enabled by configuration.
@Suite(.enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct AgentPluginTests {
    @Test("event-log enabled by a rule logs the toggle's events as JSON lines, and SIGHUP reopens the file")
    func eventLogThroughTheAgent() async throws {
        try await NetworkNamespace.with(["plug", "peer"]) { namespaces in
            try AgentLifecycleTests.uplink(namespaces)
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
                "np-elog-\(UUID().uuidString.prefix(8))"
            )
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: dir) }
            let log = dir.appendingPathComponent("events.jsonl")
            let agent = try await AgentHarness(
                namespace: namespaces[0],
                config: """
                    [plugin.event-log]
                    path = "\(log.path)"

                    [[rule]]
                    name = "log-everything"
                    plugins = ["event-log"]
                    """
            )
            defer { agent.stop() }
            try await agent.awaitReady()
            var info = stat()
            #expect(stat(log.path, &info) == 0)
            #expect(info.st_mode & 0o777 == 0o640)

            try namespaces[1].ip("link", "set", "up0p", "down")
            let lines = try await agent.awaitLines(in: log, "the unsatisfied event in the log", count: 1) {
                $0.contains(#""event":"unsatisfied""#)
            }
            #expect(lines.count == 1)
            let all = try String(contentsOf: log, encoding: .utf8).split(separator: "\n")
            let events = try all.map { try JSONDecoder().decode(Event.self, from: Data($0.utf8)) }
            #expect(events.contains { $0.startup && $0.name == .satisfied })
            #expect(events.contains { !$0.startup && $0.name == .carrierDown && $0.interface == "up0" })

            // logrotate: move the file away, SIGHUP, and the next event lands in a new file.
            let rotated = dir.appendingPathComponent("events.jsonl.1")
            try FileManager.default.moveItem(at: log, to: rotated)
            agent.process.send(SIGHUP)
            _ = try await agent.notify.messages.next("READY=1 after the reload") { $0 == "READY=1" }
            _ = try await agent.awaitLines(in: log, "the reopened (empty) file", count: 0) { _ in true }
            try namespaces[1].ip("link", "set", "up0p", "up")
            _ = try await agent.awaitLines(in: log, "the satisfied event in the new file", count: 1) {
                $0.contains(#""event":"satisfied""#)
            }
            #expect(stat(log.path, &info) == 0 && info.st_mode & 0o777 == 0o640)
            #expect(try String(contentsOf: rotated, encoding: .utf8).contains("carrier-down"))
        }
    }

    @Test("a rule naming an unknown plugin, or a bad plugin table, is a configuration error with its line")
    func pluginConfigurationErrors() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "np-plugins-\(UUID().uuidString.prefix(8)).toml"
        )
        defer { try? FileManager.default.removeItem(at: file) }
        try """
        [plugin.event-log]
        pth = "/tmp/x"

        [[rule]]
        name = "r"
        plugins = ["event-logger"]
        """.write(to: file, atomically: true, encoding: .utf8)
        let result = try Command.run([BuiltProducts.path("netpathctl"), "check-config", file.path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("\(file.path):6:"), "\(result.stderr)")
        #expect(result.stderr.contains("event-logger"), "\(result.stderr)")

        // With the name right, the plugin's own validation reports its table's mistake.
        try """
        [plugin.event-log]
        pth = "/tmp/x"

        [[rule]]
        name = "r"
        plugins = ["event-log"]
        """.write(to: file, atomically: true, encoding: .utf8)
        let table = try Command.run([BuiltProducts.path("netpathctl"), "check-config", file.path])
        #expect(table.status == 1)
        #expect(table.stderr.contains("\(file.path):2:"), "\(table.stderr)")
        #expect(table.stderr.contains("pth"), "\(table.stderr)")

        // The agent refuses to start on the same file, with the same diagnostics.
        let agent = try Command.run([
            BuiltProducts.path("netpathd"), "--config", file.path, "--control-socket", "/tmp/np-never.sock",
        ])
        #expect(agent.status == 1)
        #expect(agent.stderr.contains("\(file.path):2:") && agent.stderr.contains("pth"), "\(agent.stderr)")
    }
}
