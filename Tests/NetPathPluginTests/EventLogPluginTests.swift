// SPDX-License-Identifier: Apache-2.0

import EventLogPlugin
import Foundation
import Logging
import NetPathCore
import NetPathPlugin
import TestSupport
import Testing

/// `event-log`: JSON lines that decode back into the events, mode 0640, reopen for rotation.
struct EventLogPluginTests {
    static func events(from file: String) throws -> [Event] {
        let text = try String(contentsOfFile: file, encoding: .utf8)
        let decoder = JSONDecoder()
        return try text.split(separator: "\n").map { try decoder.decode(Event.self, from: Data($0.utf8)) }
    }

    static func mode(of file: String) throws -> Int {
        ((try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions]) as? Int ?? -1) & 0o777
    }

    @Test("writes one JSON line per event, decoding back into equal events; rotation by reopen")
    func writesAndRotates() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "np-eventlog-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/events.jsonl"

        let table = try ConfigurationLoaderShim.table("path = \(TOMLQuoted(path))", name: "event-log")
        let settings = PluginConfiguration(name: "event-log", table: table, file: "netpath.toml")
        let plugin = try EventLogPlugin(configuration: settings)
        let runner = PluginRunner(
            plugins: [LoadedPlugin(plugin, configuration: settings)],
            logger: Logger(label: "test.event-log")
        )
        await runner.startAll()
        #expect(try Self.mode(of: path) == 0o640)

        var wired = Interface(
            index: 2,
            name: "eth0",
            type: .wired,
            addresses: ["192.0.2.10/24"],
            defaultRoutes: [.init(via: IPAddress("192.0.2.1"), metric: 100)]
        )
        wired.classifiedBy = ["arptype=1"]
        let first: [Event] = [
            Event(
                time: Events.epoch,
                name: .up,
                scope: .interface,
                interface: "eth0",
                interfaceType: .wired,
                interfaceState: wired
            ),
            Event(
                time: Events.epoch.addingTimeInterval(0.000_001),
                name: .addressAdded,
                scope: .interface,
                interface: "eth0",
                interfaceType: .wired,
                interfaceState: wired,
                address: wired.addresses[0]
            ),
            Event(
                time: Events.epoch.addingTimeInterval(1.5),
                name: .satisfied,
                scope: .path,
                interface: "eth0",
                interfaceType: .wired,
                policy: "default",
                path: NetworkPath(
                    status: .satisfied,
                    availableInterfaces: [.init(wired)],
                    supportsIPv4: true,
                    gateways: [IPAddress("192.0.2.1")]
                )
            ),
            Event(
                time: Events.epoch.addingTimeInterval(2),
                name: .changed,
                scope: .interface,
                interface: "eth0",
                interfaceState: wired,
                changes: ["mtu", "default_routes"]
            ),
        ]
        // An interface's events and the path's, delivered in order per subject.
        for event in first { runner.deliver(event, to: ["event-log"]) }
        await runner.waitUntilIdle()
        let written = try Self.events(from: path)
        #expect(written.filter { $0.scope == .interface } == first.filter { $0.scope == .interface })
        #expect(written.filter { $0.scope == .path } == first.filter { $0.scope == .path })
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(lines.allSatisfy { $0.hasPrefix("{") && $0.contains("\"version\":1") })

        // logrotate renames the file, then the agent (on SIGHUP) asks the plugin to reopen.
        let rotated = path + ".1"
        try FileManager.default.moveItem(atPath: path, toPath: rotated)
        try plugin.reopen()
        let later = Event(
            time: Events.epoch.addingTimeInterval(3),
            name: .down,
            scope: .interface,
            interface: "eth0",
            interfaceState: wired
        )
        runner.deliver(later, to: ["event-log"])
        await runner.waitUntilIdle()
        #expect(try Self.events(from: path) == [later])
        #expect(try Self.mode(of: path) == 0o640)
        #expect(try Self.events(from: rotated).count == first.count)

        // The runner's reopenAll (what the agent calls) works the same way.
        try FileManager.default.moveItem(atPath: path, toPath: path + ".2")
        await runner.reopenAll()
        runner.deliver(later, to: ["event-log"])
        await runner.stopAll()
        #expect(try Self.events(from: path) == [later])
    }

    @Test("a relative or missing path is a configuration error naming the line")
    func pathIsValidated() throws {
        let relative = try ConfigurationLoaderShim.table("path = \"events.jsonl\"", name: "event-log")
        #expect {
            try EventLogPlugin(
                configuration: PluginConfiguration(name: "event-log", table: relative, file: "netpath.toml")
            )
        } throws: {
            "\($0)" == "netpath.toml:2:8: error: plugin.event-log.path must be an absolute path, found \"events.jsonl\""
        }

        #expect {
            try EventLogPlugin(
                configuration: PluginConfiguration(
                    name: "event-log",
                    table: nil,
                    file: "netpath.toml",
                    fallback: .init(line: 9, column: 1)
                )
            )
        } throws: {
            "\($0)".hasPrefix(
                "netpath.toml:9:1: error: plugin \"event-log\" needs a [plugin.event-log] table with path"
            )
        }
    }
}

/// `s` as a TOML basic string.
func TOMLQuoted(_ s: String) -> String {
    "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
}
