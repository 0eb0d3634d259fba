// SPDX-License-Identifier: Apache-2.0

import Foundation
import Logging
import NetPathCore
import NetPathPlugin
import Synchronization
import TestSupport
import Testing

/// The runner's isolation and ordering, with in-process plugins and no kernel.
@Suite(.serialSuite)
struct PluginRunnerTests {
    static let logger = Logger(label: "test.plugins")

    static func plugin(
        _ name: String,
        _ received: Received,
        obsolete: Bool = false,
        _ behaviour: @escaping @Sendable (Event) -> RecordingPlugin.Behaviour = { _ in .normal }
    ) -> LoadedPlugin {
        LoadedPlugin(
            name: name,
            receivesObsoleteEvents: obsolete,
            plugin: RecordingPlugin(received: received, behaviour: behaviour)
        )
    }

    @Test("a throwing, a hung and a slow plugin are each isolated; a well-behaved one receives on time")
    func misbehavingPluginsAreIsolated() async throws {
        let good = Received(), thrower = Received(), hung = Received(), slow = Received()
        let first = Events.interface(.carrierUp, index: 2, 1)
        let runner = PluginRunner(
            plugins: [
                Self.plugin("thrower", thrower) { _ in .throw },
                // Hangs on the first event of interface 2 only: its other subjects must still flow.
                Self.plugin("hung", hung, obsolete: true) { $0 == first ? .hang : .normal },
                Self.plugin("slow", slow, obsolete: true) { $0 == first ? .slow(.milliseconds(2500)) : .normal },
                Self.plugin("good", good, obsolete: true),
            ],
            options: .init(timeout: .seconds(1), maxQueuedPerSubject: 3),
            logger: Self.logger
        )
        await runner.startAll()
        let everyone = ["thrower", "hung", "slow", "good"]

        let start = ContinuousClock.now
        runner.deliver(first, to: everyone)
        let deliverTook = ContinuousClock.now - start
        #expect(deliverTook < .milliseconds(50), "deliver must only enqueue, took \(deliverTook)")

        // The well-behaved plugin gets the event at once, while the hung one is inside its call.
        try await good.wait("good's first event", timeout: .seconds(2)) { $0.count == 1 }
        let goodLatency = good.all[0].at - start
        #expect(goodLatency < .milliseconds(500), "good plugin got its event after \(goodLatency)")
        try await hung.wait("hung's first call", timeout: .seconds(2)) { $0.count == 1 }

        // Past the timeout: the hung and slow calls are counted as timeouts and their subject is stuck.
        try await waitUntil("the hung and slow calls time out", timeout: .seconds(5)) {
            runner.statistics["hung"]?.count(.timeout) == 1 && runner.statistics["slow"]?.count(.timeout) == 1
        }
        var stats = runner.statistics
        #expect(stats["hung"]?.count(.timeout) == 1)
        #expect(stats["hung"]?.stuck == 1)
        #expect(stats["slow"]?.count(.timeout) == 1)
        #expect(stats["thrower"]?.count(.failure) == 1)

        // Later events: another subject flows for everyone; the stuck subject queues behind its call.
        let other = Events.interface(.carrierUp, index: 3, 2)
        let sameSubject = Events.interface(.carrierDown, index: 2, 3)
        let afterStuck = ContinuousClock.now
        runner.deliver(other, to: everyone)
        runner.deliver(sameSubject, to: everyone)
        try await good.wait("good's three events") { $0 == [first, other, sameSubject] }
        #expect(good.all[2].at - afterStuck < .milliseconds(500), "the good plugin is not held up by the stuck one")
        try await hung.wait("hung's event for interface 3") { $0.contains(other) }
        try await thrower.wait("thrower keeps being called") { $0.count == 3 }

        // The slow call returns at ~2.5 s: its queued event of the same subject follows, in order.
        try await slow.wait("slow's queued event after its late return", timeout: .seconds(5)) {
            $0.contains(sameSubject)
        }
        #expect(slow.events == [first, other, sameSubject])
        stats = runner.statistics
        #expect(stats["slow"]?.lateCompletions == 1)
        #expect(stats["slow"]?.stuck == 0)
        #expect(stats["thrower"]?.count(.failure) == 3)
        #expect(stats["good"]?.count(.success) == 3)

        // The hung plugin never gets the event queued behind its stuck call; the queue is bounded.
        for i in 0..<5 { runner.deliver(Events.interface(.added, index: 2, 10 + i), to: ["hung"]) }
        try await waitUntil("the overflow is counted") { runner.statistics["hung"]?.droppedOverflow == 3 }
        #expect(!hung.events.contains(sameSubject))
        stats = runner.statistics
        #expect(stats["hung"]?.stuck == 1)
        #expect(stats["hung"]?.queued == 3)
        #expect(stats["hung"]?.droppedOverflow == 3)

        // Stopping is bounded by the drain timeout even with a stuck subject, and calls every stop.
        let stopStart = ContinuousClock.now
        await runner.stopAll()
        #expect(ContinuousClock.now - stopStart < .seconds(8))
        #expect(good.lifecycleCalls == ["start", "stop"])
        #expect(hung.lifecycleCalls == ["start", "stop"])
    }

    @Test("events of one subject arrive in order; different subjects are independent")
    func perSubjectOrder() async throws {
        let received = Received()
        let runner = PluginRunner(
            plugins: [
                Self.plugin("ordered", received, obsolete: true) { event in
                    // Uneven latencies that would reorder calls if they overlapped.
                    .slow(.milliseconds(Int64(event.time.timeIntervalSince(Events.epoch)) % 3 == 0 ? 8 : 1))
                }
            ],
            logger: Self.logger
        )
        var sent: [Event] = []
        for i in 0..<60 {
            let event = i % 2 == 0 ? Events.interface(.added, index: 2, i) : Events.path(.changed, i)
            sent.append(event)
            runner.deliver(event, to: ["ordered"])
        }
        await runner.waitUntilIdle()
        let got = received.events
        #expect(got.count == 60)
        for subject in Set(sent.map(\.subject)) {
            #expect(got.filter { $0.subject == subject } == sent.filter { $0.subject == subject })
        }
    }

    @Test("an obsolete queued event is dropped and the final one is delivered")
    func obsoleteEventsAreDropped() async throws {
        let received = Received()
        let gate = Gate()
        let runner = PluginRunner(
            plugins: [
                LoadedPlugin(
                    name: "gated",
                    plugin: ClosurePlugin { event, context in
                        received.record(event, context: context)
                        if event.name == .added { await gate.wait() }
                    }
                )
            ],
            logger: Self.logger
        )
        runner.deliver(Events.interface(.added, index: 4, 0), to: ["gated"])
        try await received.wait("the gated call") { $0.count == 1 }
        let up = Events.interface(.up, index: 4, 1)
        let down = Events.interface(.down, index: 4, 2)
        let upAgain = Events.interface(.up, index: 4, 3)
        for event in [up, down, upAgain] { runner.deliver(event, to: ["gated"]) }
        await gate.open()
        await runner.waitUntilIdle()
        #expect(received.events.map(\.name) == [.added, .up])
        #expect(received.events.last == upAgain)
        #expect(runner.statistics["gated"]?.droppedObsolete == 2)
    }

    @Test("a plugin without the route-editing capability cannot reach the route editor")
    func capabilitiesAreEnforced() async throws {
        let editor = ClosureRouteEditor(list: { [] }, change: { _, _ in })
        let outcome = Mutex<[String]>([])
        let runner = PluginRunner(
            plugins: [
                LoadedPlugin(
                    name: "plain",
                    plugin: ClosurePlugin { _, context in
                        do {
                            _ = try context.routeEditor()
                            outcome.withLock { $0.append("plain: granted") }
                        } catch let error as PluginError {
                            outcome.withLock { $0.append("plain: \(error.code)") }
                        }
                    }
                ),
                LoadedPlugin(
                    name: "editor",
                    capabilities: [.routeEditing],
                    plugin: ClosurePlugin { _, context in
                        _ = try context.routeEditor()
                        outcome.withLock { $0.append("editor: granted") }
                    }
                ),
            ],
            routeEditor: editor,
            logger: Self.logger
        )
        runner.deliverToAll(Events.path(.satisfied))
        await runner.waitUntilIdle()
        #expect(Set(outcome.withLock { $0 }) == ["plain: capability not granted", "editor: granted"])
    }

    @Test("the context reads the state the agent last set")
    func contextSeesCurrentState() async throws {
        let received = Received()
        let runner = PluginRunner(plugins: [Self.plugin("reader", received)], logger: Self.logger)
        let state = SystemState(interfaces: [Interface(index: 7, name: "wan0", type: .wired)])
        runner.update(state: state, paths: [NetworkPath(status: .unsatisfied)])
        runner.deliverToAll(Events.path(.unsatisfied))
        await runner.waitUntilIdle()
        #expect(received.all.first?.state == state)
    }

    @Test("a reload starts new plugins, stops removed ones, and replaces changed ones")
    func reloadAppliesChanges() async throws {
        let keep = Received(), drop = Received(), change = Received(), added = Received()
        func table(_ text: String) -> PluginConfiguration {
            let configuration = try! ConfigurationLoaderShim.table(text)
            return PluginConfiguration(name: "changing", table: configuration, file: "netpath.toml")
        }
        var changing = LoadedPlugin(name: "changing", plugin: RecordingPlugin(received: change))
        changing.configuration = table("setting = 1")
        let runner = PluginRunner(
            plugins: [Self.plugin("keep", keep), Self.plugin("drop", drop), changing],
            logger: Self.logger
        )
        await runner.startAll()
        var changed = LoadedPlugin(name: "changing", plugin: RecordingPlugin(received: change))
        changed.configuration = table("setting = 2")
        await runner.reload([Self.plugin("keep", keep), changed, Self.plugin("added", added)])
        #expect(keep.lifecycleCalls == ["start"])
        #expect(drop.lifecycleCalls == ["start", "stop"])
        #expect(change.lifecycleCalls == ["start", "stop", "start"])
        #expect(added.lifecycleCalls == ["start"])
        #expect(runner.pluginNames == ["keep", "changing", "added"])
        runner.deliver(Events.path(.satisfied), to: ["drop", "added"])
        await runner.waitUntilIdle()
        #expect(drop.events.isEmpty)
        #expect(added.events.count == 1)
    }

    @Test("held until started: events delivered while start runs wait for it, then arrive in order")
    func heldUntilStarted() async throws {
        let received = Received()
        let gate = Gate()
        let runner = PluginRunner(
            plugins: [LoadedPlugin(name: "slow-start", plugin: GatedPlugin(received: received, startGate: gate))],
            logger: Self.logger
        )
        runner.holdUntilStarted()
        let starting = Task { await runner.startAll() }
        let events = (0..<3).map { Events.interface(.changed, index: 2, $0) } + [Events.path(.satisfied)]
        for event in events { runner.deliver(event, to: ["slow-start"]) }
        try await received.waitForLifecycle("start")
        // A call still held is queued work: the runner is not idle, and nothing was delivered.
        let idle = Task { await runner.waitUntilIdle() }
        #expect(received.events.isEmpty, "delivered before start returned: \(received.events.map(\.name))")
        #expect(runner.statistics["slow-start"]?.queued == 2, "the interface's changes merged, the path's kept")
        await gate.open()
        await starting.value
        await idle.value
        #expect(received.lifecycleCalls == ["start", "started"])
        #expect(received.events.map(\.subject).sorted() == [events[0].subject, events[3].subject].sorted())
        #expect(received.events.first { $0.scope == .interface }?.changes == ["mtu"])
    }

    @Test(
        "a staged reload routes events at once: to a new plugin after its start, to an adopting one after its own, none to a removed one",
        arguments: [true, false]
    )
    func stagedReload(adopts: Bool) async throws {
        let changing = Received(), added = Received(), removed = Received()
        func table(_ text: String) -> PluginConfiguration {
            PluginConfiguration(name: "changing", table: try! ConfigurationLoaderShim.table(text), file: "netpath.toml")
        }
        var before = LoadedPlugin(name: "changing", plugin: GatedPlugin(received: changing, adopts: adopts))
        before.configuration = table("setting = 1")
        let runner = PluginRunner(
            plugins: [before, LoadedPlugin(name: "removed", plugin: GatedPlugin(received: removed))],
            logger: Self.logger
        )
        await runner.startAll()
        let gate = Gate()
        var after = LoadedPlugin(name: "changing", plugin: GatedPlugin(received: changing, adopts: adopts))
        after.configuration = table("setting = 2")
        let plan = runner.prepareReload([
            after, LoadedPlugin(name: "added", plugin: GatedPlugin(received: added, startGate: gate)),
        ])
        // Routed by the new configuration from here on, before any plugin was asked anything.
        #expect(runner.pluginNames == ["changing", "added"])
        let event = Events.path(.satisfied)
        runner.deliver(event, to: ["changing", "added", "removed"])
        let reloading = Task { await runner.reload(plan) }
        try await added.waitForLifecycle("start")
        #expect(added.events.isEmpty, "delivered before its start returned")
        await gate.open()
        await reloading.value
        await runner.waitUntilIdle()
        #expect(removed.lifecycleCalls == ["start", "started", "stop"])
        #expect(removed.events.isEmpty)
        #expect(added.lifecycleCalls == ["start", "started"])
        #expect(added.events == [event])
        #expect(changing.events == [event], "exactly once, to whichever instance handles the plugin now")
        if adopts {
            #expect(changing.lifecycleCalls == ["start", "started", "reload: adopted"])
            // The adopted table is the one in force: the same configuration again changes nothing.
            var again = LoadedPlugin(name: "changing", plugin: GatedPlugin(received: changing, adopts: adopts))
            again.configuration = table("setting = 2")
            await runner.reload([again, LoadedPlugin(name: "added", plugin: GatedPlugin(received: added))])
            #expect(changing.lifecycleCalls == ["start", "started", "reload: adopted"])
        } else {
            #expect(changing.lifecycleCalls == ["start", "started", "reload: declined", "stop", "start", "started"])
        }
    }
}

/// A one-shot barrier for tests.
actor Gate {
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func wait() async {
        if isOpen { return }
        await withCheckedContinuation { waiters.append($0) }
    }

    func open() {
        isOpen = true
        for waiter in waiters { waiter.resume() }
        waiters = []
    }
}
