// SPDX-License-Identifier: Apache-2.0

import Logging
import NetPathCore
import NetPathLinux
import NetPathPlugin
import TestSupport
import Testing

/// A plugin registered in code receives the kernel's events through the real pipeline.
@Suite(.enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct PluginDeliveryTests {
    @Test("a plugin registered in code receives a veth toggle's events, typed, in order, with their state")
    func vethToggle() async throws {
        try await NetworkNamespace.with(["deliver", "deliverpeer"]) { namespaces in
            let (ns, peer) = (namespaces[0], namespaces[1])
            try ns.addVeth("lan0", peer: "lan0p", in: peer)
            try peer.ip("link", "set", "lan0p", "up")
            try ns.ip("addr", "add", "198.51.100.10/24", "dev", "lan0")
            let index = try ns.index(of: "lan0")

            let received = Received()
            var registry = PluginRegistry()
            registry.register(name: "recorder") { _ in RecordingPlugin(received: received) }
            let settings = PluginConfiguration(name: "recorder", table: nil, file: "netpath.toml")
            let entry = try #require(registry.entry(named: "recorder"))
            let runner = PluginRunner(
                plugins: [LoadedPlugin(entry: entry, configuration: settings, plugin: try entry.make(settings))],
                logger: Logger(label: "test.delivery")
            )
            let pipeline = try await Pipeline(
                namespace: ns,
                overrides: [InterfaceOverride(match: try Glob("lan*"), type: .wired)],
                policies: [.default],
                runner: runner,
                plugins: ["recorder"]
            )
            defer { pipeline.stop() }
            await runner.startAll()
            try await received.wait("the startup events") { events in
                events.contains { $0.startup && $0.scope == .path }
            }
            let startupCount = received.events.count

            // Up: carrier, then usable once the default route exists; the path is satisfied.
            try ns.ip("link", "set", "lan0", "up")
            try await received.wait("carrier-up") {
                $0.contains { $0.name == .carrierUp && $0.interfaceState?.index == index }
            }
            try ns.ip("route", "add", "default", "via", "198.51.100.1", "dev", "lan0")
            try await received.wait("up and satisfied") { events in
                events.contains { $0.name == .up && $0.interface == "lan0" && !$0.startup }
                    && events.contains { $0.name == .satisfied && !$0.startup }
            }
            // Down: the interface goes down and the path unsatisfied.
            try ns.ip("link", "set", "lan0", "down")
            try await received.wait("down and unsatisfied") { events in
                events.contains { $0.name == .down && $0.interface == "lan0" && !$0.startup }
                    && events.contains { $0.name == .unsatisfied && !$0.startup }
            }
            await runner.stopAll()

            let live = Array(received.all.dropFirst(startupCount))
            let interfaceEvents = live.filter {
                $0.event.scope == .interface && $0.event.interfaceState?.index == index
            }
            let names = interfaceEvents.map(\.event.name)
            // In order: carrier-up … up … down, with the link's state at each step.
            let carrierUp = try #require(names.firstIndex(of: .carrierUp))
            let up = try #require(names.firstIndex(of: .up))
            let down = try #require(names.lastIndex(of: .down))
            #expect(carrierUp < up && up < down, "\(names)")
            let upState = try #require(interfaceEvents[up].event.interfaceState)
            #expect(upState.adminUp && upState.carrier && upState.type == .wired)
            #expect(upState.defaultRoutes.map(\.gateway) == [IPAddress("198.51.100.1")])
            #expect(interfaceEvents[up].event.interfaceType == .wired)
            let downState = try #require(interfaceEvents[down].event.interfaceState)
            #expect(!downState.adminUp)
            // The context's state was at least as new as the event when the plugin ran.
            #expect(interfaceEvents[up].state["lan0"]?.carrier == true)

            let pathEvents = live.filter { $0.event.scope == .path }.map(\.event)
            let satisfied = try #require(pathEvents.firstIndex { $0.name == .satisfied })
            let unsatisfied = try #require(pathEvents.lastIndex { $0.name == .unsatisfied })
            #expect(satisfied < unsatisfied)
            #expect(pathEvents[satisfied].path?.primary?.name == "lan0")
            #expect(pathEvents[unsatisfied].path?.status == .unsatisfied)
            #expect(received.lifecycleCalls == ["start", "stop"])
        }
    }
}
