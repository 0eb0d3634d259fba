// SPDX-License-Identifier: Apache-2.0

import Foundation
import Logging
import NetPath
import NetPathAgent
import NetPathPlugin
import ServiceLifecycle
import Synchronization
import TestSupport
import Testing

/// Misbehaving plugins inside a real agent: they must not hold up a good plugin or a hook.
@Suite(.serialSuite, .enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct PluginIsolationTests {
    @Test("a throwing, a hung and a slow plugin are isolated: a good plugin and a hook on the same events run on time")
    func misbehavingPluginsAreIsolated() async throws {
        try await NetworkNamespace.with(["iso", "peer"]) { namespaces in
            try AgentLifecycleTests.uplink(namespaces)
            let dir = try ScratchDirectory.make("np-iso")
            let hooks = dir.appendingPathComponent("hooks.d")
            try FileManager.default.createDirectory(at: hooks, withIntermediateDirectories: true)
            chmod(dir.path, 0o755)
            chmod(hooks.path, 0o755)
            defer { try? FileManager.default.removeItem(at: dir) }
            let hookLog = dir.appendingPathComponent("hook.log")
            let hook = hooks.appendingPathComponent("10-record")
            try AgentHarness.recordingHook(log: hookLog.path).write(to: hook, atomically: true, encoding: .utf8)
            chmod(hook.path, 0o755)
            let config = dir.appendingPathComponent("netpath.toml")
            try """
            [agent]
            hooks_dir = "\(hooks.path)"

            [[rule]]
            name = "everyone"
            on = ["carrier-down", "down", "unsatisfied"]
            run = ["10-record"]
            plugins = ["thrower", "hanger", "sleeper", "good"]
            """.write(to: config, atomically: true, encoding: .utf8)

            let (good, goodEvents) = AsyncStream.makeStream(of: String.self)
            let calls = Mutex<[String: Int]>([:])
            var registry = PluginRegistry()
            registry.register(name: "thrower") { _, _ in
                calls.withLock { $0["thrower", default: 0] += 1 }
                throw TestFailure("this plugin always throws")
            }
            registry.register(name: "hanger") { _, _ in
                calls.withLock { $0["hanger", default: 0] += 1 }
                // Never returns and ignores cancellation, without spinning: it waits on a detached
                // task, which the runner's cancellation does not reach. (A loop of cancelled
                // sleeps would return at once each time and burn the cooperative threads.)
                await Task.detached { try? await Task.sleep(for: .seconds(3600)) }.value
            }
            registry.register(name: "sleeper") { _, _ in
                calls.withLock { $0["sleeper", default: 0] += 1 }
                try? await Task.sleep(for: .seconds(2))
            }
            registry.register(name: "good") { event, _ in
                goodEvents.yield("\(event.name) \(event.interface ?? "-")")
            }

            let agent = try Agent(
                options: AgentOptions(
                    configPath: config.path,
                    namespace: namespaces[0].name,
                    controlSocketPath: dir.appendingPathComponent("agent.sock").path,
                    readyWaitLimit: .seconds(1),
                    logger: Logger(label: "test.isolation")
                ),
                plugins: registry
            )
            let group = ServiceGroup(
                configuration: .init(services: [.init(service: agent)], logger: Logger(label: "test.group"))
            )
            let running = Task { try await group.run() }
            defer { running.cancel() }
            let seen = Recorder<String>()
            await seen.record(good)
            // The startup events reach the good plugin first; the toggle's follow.
            _ = try await seen.next("the good plugin's startup events", timeout: .seconds(15)) {
                $0.hasPrefix("down") || $0.hasPrefix("unsatisfied") || $0.hasPrefix("carrier")
            }
            await seen.skipAll()

            let toggled = ContinuousClock.now
            try namespaces[1].ip("link", "set", "up0p", "down")
            // The interface's events and the policy's run concurrently: wait for the set.
            var missing: Set<String> = ["carrier-down up0", "down up0", "unsatisfied -"]
            while !missing.isEmpty {
                let event = try await seen.next("\(missing.sorted()) at the good plugin", timeout: .seconds(5))
                missing.remove(event)
            }
            // Well before the sleeper's 2 s per call and the runner's 10 s timeout for the hanger.
            let goodLatency = ContinuousClock.now - toggled
            #expect(goodLatency < .seconds(2), "the good plugin waited \(goodLatency)")

            let deadline = ContinuousClock.now + .seconds(5)
            var runs: [String] = []
            while ContinuousClock.now < deadline {
                runs = ((try? String(contentsOf: hookLog, encoding: .utf8)) ?? "").split(separator: "\n").map(
                    String.init
                )
                if runs.contains("everyone unsatisfied - 0") && runs.contains("everyone down up0 0") { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(runs.contains("everyone carrier-down up0 0"), "\(runs)")
            #expect(runs.contains("everyone down up0 0"), "\(runs)")
            #expect(runs.contains("everyone unsatisfied - 0"), "\(runs)")
            #expect(ContinuousClock.now - toggled < .seconds(2), "the hook ran late")
            let counts = calls.withLock { $0 }
            #expect(
                (counts["thrower"] ?? 0) >= 3 && (counts["sleeper"] ?? 0) >= 1 && (counts["hanger"] ?? 0) >= 1,
                "\(counts)"
            )

            await group.triggerGracefulShutdown()
            _ = try? await running.value
        }
    }

    @Test("a plugin whose start takes long holds up no hook; its events wait for its start")
    func slowStartHoldsUpNothing() async throws {
        try await NetworkNamespace.with(["slowstart", "peer"]) { namespaces in
            try AgentLifecycleTests.uplink(namespaces)
            try await Self.slowStartScenario(host: namespaces[0], peer: namespaces[1])
        }
    }

    static func slowStartScenario(host: NetworkNamespace, peer: NetworkNamespace) async throws {
        let dir = try ScratchDirectory.make("np-slowstart")
        let hooks = dir.appendingPathComponent("hooks.d")
        try FileManager.default.createDirectory(at: hooks, withIntermediateDirectories: true)
        chmod(hooks.path, 0o755)
        defer { try? FileManager.default.removeItem(at: dir) }
        let hookLog = dir.appendingPathComponent("hook.log")
        let hook = hooks.appendingPathComponent("10-record")
        try AgentHarness.recordingHook(log: hookLog.path).write(to: hook, atomically: true, encoding: .utf8)
        chmod(hook.path, 0o755)
        let config = dir.appendingPathComponent("netpath.toml")
        try """
        [agent]
        hooks_dir = "\(hooks.path)"

        [[rule]]
        name = "everyone"
        on = ["carrier-down"]
        run = ["10-record"]
        plugins = ["starter"]
        """.write(to: config, atomically: true, encoding: .utf8)

        // The plugin's start waits until the test lets it go (well within the runner's 10 s).
        let (calls, call) = AsyncStream.makeStream(of: String.self)
        let (gate, open) = AsyncStream.makeStream(of: Void.self)
        var registry = PluginRegistry()
        registry.register(name: "starter") { _ in
            ClosurePlugin(
                start: { _ in
                    call.yield("start")
                    for await _ in gate { break }
                    call.yield("started")
                },
                handler: { event, _ in call.yield("\(event.name) \(event.interface ?? "-")") }
            )
        }
        let agent = try Agent(
            options: AgentOptions(
                configPath: config.path,
                namespace: host.name,
                controlSocketPath: dir.appendingPathComponent("agent.sock").path,
                logger: Logger(label: "test.slowstart")
            ),
            plugins: registry
        )
        let group = ServiceGroup(
            configuration: .init(services: [.init(service: agent)], logger: Logger(label: "test.group"))
        )
        let running = Task { try await group.run() }
        defer { running.cancel() }
        let seen = Recorder<String>()
        await seen.record(calls)
        _ = try await seen.next("the plugin's start", timeout: .seconds(15)) { $0 == "start" }

        let unplugged = ContinuousClock.now
        try peer.ip("link", "set", "up0p", "down")
        let deadline = unplugged + .seconds(5)
        while !(((try? String(contentsOf: hookLog, encoding: .utf8)) ?? "").contains("everyone carrier-down up0 0")) {
            guard ContinuousClock.now < deadline else { throw TestFailure("the hook did not run during the start") }
            try await Task.sleep(for: .milliseconds(20))
        }
        let latency = ContinuousClock.now - unplugged
        #expect(latency < .seconds(2), "the hook waited \(latency) for the plugin's start")
        #expect(await seen.all == ["start"], "the plugin got an event before its start returned")

        open.yield()
        _ = try await seen.next("the start's end") { $0 == "started" }
        _ = try await seen.next("the event, after the start") { $0 == "carrier-down up0" }
        await group.triggerGracefulShutdown()
        _ = try? await running.value
    }
}
