// SPDX-License-Identifier: Apache-2.0

import Logging
import NetPathCore
import NetPathQueues
import Synchronization

/// Runs the enabled plugins: delivers events to them, each call isolated by a timeout, and drives
/// their lifecycle.
///
/// The agent's side, in order:
///
/// ```swift
/// let runner = PluginRunner(plugins: plugins, routeEditor: NetlinkRouteEditor(), logger: logger)
/// runner.update(state: state, paths: tracker.paths)   // before the first start, and after each change
/// await runner.startAll()
/// for event in events { runner.deliver(event, to: targets.flatMap(\.plugins)) }   // never blocks
/// await runner.reload(newPlugins)      // after a config reload
/// await runner.reopenAll()             // on SIGHUP, for log rotation
/// await runner.stopAll()               // at shutdown: restores what plugins changed
/// ```
///
/// A caller that must not wait for plugins (the agent's loop) hands the lifecycle to another task
/// and keeps delivering meanwhile: ``holdUntilStarted()`` before that task's ``startAll()``, and
/// ``prepareReload(_:)`` before its ``reload(_:)-(Reload)``. Events delivered to a plugin whose
/// `start` has not returned yet wait in its queues (bounded as below) and follow the start.
///
/// ## Isolation
///
/// - Every plugin has its own queues; every ``NetPathCore/Event/subject`` (an interface, a
///   policy) of a plugin has a FIFO, delivered by its own worker task, one call at a time, in
///   order. A slow plugin delays only itself, and only for that subject.
/// - Each call has ``Options/timeout``. A call that throws is logged and counted as a
///   ``PluginStatistics/Outcome/failure``; the subject goes on with its next event.
/// - A call still running at its timeout is logged and counted as a
///   ``PluginStatistics/Outcome/timeout``, its task is cancelled, and the runner stops waiting
///   for it. It cannot be killed, so to keep the plugin's promise of ordered, non-overlapping
///   calls its subject stays **stuck** until the call returns: later events of that subject
///   queue behind it, at most ``Options/maxQueuedPerSubject`` (beyond that one is dropped and
///   logged: the oldest whose piece of state a later one reports again, so the current state is
///   always kept; the oldest when there is none). When the call finally
///   returns, that is logged and counted as a late completion, and the queue resumes in order.
///   A call that never returns leaves at most one abandoned task per subject; the plugin's other
///   subjects, other plugins, hooks and the agent are unaffected.
/// - Queued events made obsolete by a newer one of their subject are dropped (logged, counted),
///   unless the plugin asks for every event (``Plugin/receivesObsoleteEvents``).
/// - ``deliver(_:to:)`` only enqueues: it never waits for a plugin.
package final class PluginRunner: Sendable {
    /// Runner settings.
    package struct Options: Sendable {
        /// How long one call (an event, or a lifecycle callback) may take.
        package var timeout: Duration
        /// The most events one subject of one plugin keeps queued.
        package var maxQueuedPerSubject: Int
        /// How long ``stopAll()`` and ``reload(_:)`` wait for queued events to be delivered
        /// before they drop the rest and call `stop`.
        package var drainTimeout: Duration

        package init(
            timeout: Duration = .seconds(10),
            maxQueuedPerSubject: Int = 64,
            drainTimeout: Duration = .seconds(5)
        ) {
            self.timeout = timeout
            self.maxQueuedPerSubject = max(1, maxQueuedPerSubject)
            self.drainTimeout = drainTimeout
        }
    }

    private struct Lane {
        var id: UInt64
        var plugin: LoadedPlugin
        var queues: SubjectQueues<Event>
        var statistics = PluginStatistics()
        var context: PluginContext
    }

    private struct State {
        var lanes: [UInt64: Lane] = [:]
        /// The lane that receives each name's events, in start order.
        var active: [(name: String, id: UInt64)] = []
        var lastID: UInt64 = 0
        var stopping = false
        /// Waiters for the lanes they name to go idle.
        var idleWaiters = IdleWaiters<Set<UInt64>>()
        /// Plugins that were asked for but are not running, logged once each.
        var unknownLogged: Set<String> = []
        /// Statistics of lanes that ended (a reload replaced or removed them), kept for metrics.
        var retired: [String: PluginStatistics] = [:]
    }

    package let options: Options
    /// The state and paths every context reads; ``update(state:paths:)`` sets it.
    package let view: PluginStateView
    private let routeEditor: (any RouteEditor)?
    private let logger: Logger
    private let state = Mutex(State())
    private let workers = WorkerTasks()

    /// Creates a runner for `plugins` (in start order). Nothing runs until ``startAll()``.
    ///
    /// - Parameters:
    ///   - plugins: The enabled plugins, e.g. from ``PluginRegistry/makePlugins(for:file:)``.
    ///   - routeEditor: Given to plugins that declare ``PluginCapability/routeEditing``.
    ///   - options: Timeouts and queue bounds.
    ///   - logger: The runner's logger; each plugin logs through it with `plugin=NAME`.
    package init(
        plugins: [LoadedPlugin],
        routeEditor: (any RouteEditor)? = nil,
        options: Options = Options(),
        logger: Logger
    ) {
        self.options = options
        self.view = PluginStateView()
        self.routeEditor = routeEditor
        self.logger = logger
        state.withLock { state in
            for plugin in plugins {
                Self.install(plugin, in: &state, view: view, editor: routeEditor, logger: logger, options: options)
            }
        }
    }

    /// The running plugins' names, in start order.
    package var pluginNames: [String] { state.withLock { $0.active.map(\.name) } }

    /// Each plugin's counters (including those a reload retired, merged under their name).
    package var statistics: [String: PluginStatistics] {
        state.withLock { state in
            var result = state.retired
            for (name, id) in state.active {
                guard var lane = state.lanes[id] else { continue }
                lane.statistics.queued = lane.queues.queued
                lane.statistics.stuck = lane.queues.stuck
                result[name] = result[name].map { Self.merge($0, lane.statistics) } ?? lane.statistics
            }
            return result
        }
    }

    /// Sets the state and paths plugins read through their context. Call it after each change,
    /// before delivering the change's events.
    package func update(state: SystemState, paths: [NetworkPath]) {
        view.update(state: state, paths: paths)
    }

    /// Calls every plugin's `start` (in order, each within the timeout). A plugin whose start
    /// fails is logged and counted, and still receives events. Events held by
    /// ``holdUntilStarted()`` follow each plugin's start.
    package func startAll() async {
        let lanes = state.withLock { state in state.active.compactMap { state.lanes[$0.id] } }
        for lane in lanes {
            await lifecycle("start", lane) { try await lane.plugin.plugin.start(context: lane.context) }
            release(lane.id)
        }
    }

    /// Queues `event` for the plugins `names` (duplicates and names not running are ignored; the
    /// latter logged once). Never blocks.
    package func deliver(_ event: Event, to names: [String]) {
        var seen: Set<String> = []
        for name in names where seen.insert(name).inserted { deliver(event, toPlugin: name) }
    }

    /// Queues `event` for every running plugin (dispatcher mode, tests).
    package func deliverToAll(_ event: Event) {
        deliver(event, to: pluginNames)
    }

    /// Lets queued events drain (within ``Options/drainTimeout``), drops the rest, then calls
    /// every plugin's `stop` in reverse start order, each within the timeout. Later events are
    /// dropped.
    package func stopAll() async {
        let ids = state.withLock { state in
            state.stopping = true
            return state.active.map(\.id)
        }
        await retire(Array(ids.reversed()))
    }

    /// Applies a reloaded configuration's plugins: new ones start, removed ones stop (so e.g.
    /// `route-metrics` restores the metrics it changed), and ones whose table changed are asked
    /// to ``Plugin/reload(configuration:context:)``; those that decline are replaced (old one
    /// stopped, new one started). Unchanged plugins keep running undisturbed.
    ///
    /// The same as ``prepareReload(_:)`` followed by ``reload(_:)-(Reload)``.
    package func reload(_ plugins: [LoadedPlugin]) async {
        await reload(prepareReload(plugins))
    }

    /// A reload staged by ``prepareReload(_:)``, for ``reload(_:)-(Reload)`` to finish.
    package struct Reload: Sendable {
        /// Lanes of plugins the new configuration drops, already detached.
        fileprivate var removed: [UInt64] = []
        /// Plugins whose table changed: the running lane, and the held lane that receives the
        /// plugin's events from now on.
        fileprivate var changed: [(running: UInt64, successor: UInt64)] = []
        /// Held lanes of plugins that were not running.
        fileprivate var added: [UInt64] = []
    }

    /// The part of a reload that must not wait: from its return, events go where the new
    /// configuration says. Removed plugins receive nothing more; a new plugin, and a plugin whose
    /// table changed, get a fresh lane that queues their events until ``reload(_:)-(Reload)``
    /// has settled who handles them. Call ``reload(_:)-(Reload)`` next, before any other
    /// lifecycle call.
    package func prepareReload(_ plugins: [LoadedPlugin]) -> Reload {
        state.withLock { state in
            var plan = Reload()
            let running = Dictionary(
                state.active.compactMap { entry in state.lanes[entry.id].map { (entry.name, $0) } },
                uniquingKeysWith: { a, _ in a }
            )
            let wanted = Set(plugins.map(\.name))
            plan.removed = running.values.filter { !wanted.contains($0.plugin.name) }.map(\.id)
            state.active.removeAll { plan.removed.contains($0.id) }
            for plugin in plugins {
                let current = running[plugin.name]
                if let current, current.plugin.configuration == plugin.configuration { continue }
                let lane = Self.install(
                    plugin,
                    in: &state,
                    view: view,
                    editor: routeEditor,
                    logger: logger,
                    options: options,
                    held: true
                )
                if let current {
                    plan.changed.append((current.id, lane.id))
                } else {
                    plan.added.append(lane.id)
                }
            }
            return plan
        }
    }

    /// Finishes a reload ``prepareReload(_:)`` staged: asks each changed plugin to adopt its new
    /// table (one that does keeps its lane, and the events its successor queued meanwhile follow
    /// its own), drains and stops the removed and the replaced ones, then starts the new ones and
    /// lets their queued events through.
    package func reload(_ plan: Reload) async {
        var retiring = plan.removed
        var starting = plan.added
        for (runningID, successorID) in plan.changed {
            let lanes = state.withLock { state in (state.lanes[runningID], state.lanes[successorID]) }
            guard let lane = lanes.0, let successor = lanes.1 else { continue }
            let adopted = Flag()
            await lifecycle("reload", lane) {
                if try await lane.plugin.plugin.reload(
                    configuration: successor.plugin.configuration,
                    context: lane.context
                ) {
                    adopted.set()
                }
            }
            if adopted.isSet {
                adopt(successor: successorID, into: runningID)
            } else {
                // The successor has received the plugin's events since prepareReload.
                retiring.append(runningID)
                starting.append(successorID)
            }
        }
        await retire(retiring)
        for id in starting {
            guard let lane = state.withLock({ $0.lanes[id] }) else { continue }
            await lifecycle("start", lane) { try await lane.plugin.plugin.start(context: lane.context) }
            release(id)
        }
        logger.info(
            "plugins reloaded",
            metadata: [
                "started": "\(starting.count)", "stopped": "\(retiring.count)", "running": "\(pluginNames)",
            ]
        )
    }

    /// Holds every running plugin's deliveries until ``startAll()`` has called its `start`:
    /// events delivered meanwhile queue (bounded) instead of reaching a plugin not started yet.
    /// For a caller that delivers while another task runs ``startAll()``.
    package func holdUntilStarted() {
        state.withLock { state in
            for entry in state.active { state.lanes[entry.id]?.queues.hold() }
        }
    }

    /// Calls every plugin's `reopen` (SIGHUP: log rotation), each within the timeout.
    package func reopenAll() async {
        let lanes = state.withLock { state in state.active.compactMap { state.lanes[$0.id] } }
        for lane in lanes {
            await lifecycle("reopen", lane) { try await lane.plugin.plugin.reopen(context: lane.context) }
        }
    }

    /// Returns when no plugin has a call running or an event queued, except behind a stuck call.
    package func waitUntilIdle() async {
        await waitUntilIdle(lanes: nil)
    }

    // MARK: - Delivery

    private func deliver(_ event: Event, toPlugin name: String) {
        enum Verdict { case queued(UInt64, [SubjectQueues<Event>.Drop], Bool), stopping, unknown(Bool) }
        let verdict: Verdict = state.withLock { state in
            guard let id = state.active.first(where: { $0.name == name })?.id, var lane = state.lanes[id] else {
                return state.stopping ? .stopping : .unknown(state.unknownLogged.insert(name).inserted)
            }
            if state.stopping {
                lane.statistics.droppedStopping += 1
                state.lanes[id] = lane
                return .stopping
            }
            let (drops, start) = lane.queues.enqueue(event)
            for drop in drops { lane.statistics.countDrop(drop) }
            state.lanes[id] = lane
            return .queued(id, drops, start)
        }
        switch verdict {
        case .queued(let id, let drops, let start):
            for drop in drops { log(drop, plugin: name) }
            if start { spawnWorker(lane: id, subject: event.subject) }
        case .stopping:
            logger.debug("plugins are stopping: \(event.name) of \(event.subject) not delivered to \(name)")
        case .unknown(let first):
            if first {
                logger.warning(
                    "plugin \(name) is not running; its events are dropped",
                    metadata: ["plugin": .string(name)]
                )
            }
        }
    }

    private func spawnWorker(lane id: UInt64, subject: String) {
        workers.start { await self.work(lane: id, subject: subject) }
    }

    /// A subject's worker: its events, one call at a time, until the queue is empty or a call sticks.
    private func work(lane id: UInt64, subject: String) async {
        while let next = state.withLock({ state -> (Event, Lane)? in
            guard var lane = state.lanes[id] else { return nil }
            let event = lane.queues.take(subject)
            state.lanes[id] = lane  // also when empty: the subject becomes idle
            return event.map { ($0, lane) }
        }) {
            let (event, lane) = next
            let plugin = lane.plugin
            let context = lane.context
            let outcome = await TimedCall.run(timeout: options.timeout) {
                try await plugin.plugin.handle(event, context: context)
            } late: { [self] outcome in
                lateCompletion(outcome, lane: id, subject: subject, event: event)
            }
            record(outcome, lane: id, subject: subject, event: event)
            if case .timedOut = outcome { break }
        }
        resumeIdleWaiters()
    }

    private func record(_ outcome: TimedCall.Outcome, lane id: UInt64, subject: String, event: Event) {
        let name = state.withLock { state -> String in
            guard var lane = state.lanes[id] else { return "" }
            switch outcome {
            case .returned(let duration):
                lane.queues.finish(subject)
                lane.statistics.record(.success, duration: duration)
            case .threw(let error, let duration):
                lane.queues.finish(subject)
                lane.statistics.record(.failure, duration: duration)
                lane.statistics.lastError = "\(error)"
            case .timedOut:
                lane.queues.markStuck(subject)
                lane.statistics.record(.timeout, duration: nil)
            }
            state.lanes[id] = lane
            return lane.plugin.name
        }
        let metadata: Logger.Metadata = [
            "plugin": .string(name), "event": .string(event.name.rawValue), "subject": .string(subject),
        ]
        switch outcome {
        case .returned(let duration):
            logger.trace("plugin \(name) handled \(event.name) of \(subject) in \(duration)", metadata: metadata)
        case .threw(let error, _):
            logger.warning("plugin \(name) failed on \(event.name) of \(subject): \(error)", metadata: metadata)
        case .timedOut:
            logger.error(
                "plugin \(name) did not return from \(event.name) of \(subject) within \(options.timeout); its later events of \(subject) wait until it does",
                metadata: metadata
            )
        }
    }

    private func lateCompletion(_ outcome: TimedCall.Outcome, lane id: UInt64, subject: String, event: Event) {
        let (name, resume) = state.withLock { state -> (String, Bool) in
            guard var lane = state.lanes[id] else { return ("", false) }
            lane.statistics.lateCompletions += 1
            if case .threw(let error, _) = outcome { lane.statistics.lastError = "\(error)" }
            let resume = lane.queues.unstick(subject)
            state.lanes[id] = lane
            return (lane.plugin.name, resume)
        }
        var took = ""
        if case .returned(let duration) = outcome { took = "returned after \(duration)" }
        if case .threw(let error, let duration) = outcome { took = "threw after \(duration): \(error)" }
        logger.notice(
            "plugin \(name) finally \(took) from \(event.name) of \(subject); delivering its queued events",
            metadata: ["plugin": .string(name), "subject": .string(subject)]
        )
        if resume { spawnWorker(lane: id, subject: subject) }
        resumeIdleWaiters()
    }

    private func log(_ drop: SubjectQueues<Event>.Drop, plugin: String) {
        let old = drop.item
        if let by = drop.supersededBy {
            logger.notice(
                "dropped queued \(old.name) of \(old.subject) for plugin \(plugin): superseded by \(by.name) before it was delivered",
                metadata: ["plugin": .string(plugin), "subject": .string(old.subject)]
            )
        } else {
            logger.warning(
                "dropped queued \(old.name) of \(old.subject) for plugin \(plugin): more than \(options.maxQueuedPerSubject) events waiting",
                metadata: ["plugin": .string(plugin), "subject": .string(old.subject)]
            )
        }
    }

    /// Lets a held lane's queued events through: a worker per subject that has some.
    private func release(_ id: UInt64) {
        let subjects = state.withLock { state -> [String] in
            guard var lane = state.lanes[id], lane.queues.held else { return [] }
            let subjects = lane.queues.release()
            state.lanes[id] = lane
            return subjects
        }
        for subject in subjects { spawnWorker(lane: id, subject: subject) }
    }

    /// The running plugin of lane `runningID` adopted the table of its held `successorID`: it
    /// takes the new table and the events queued for the successor, behind its own, and the
    /// successor goes.
    private func adopt(successor successorID: UInt64, into runningID: UInt64) {
        let (drops, start, name) = state.withLock { state -> ([SubjectQueues<Event>.Drop], [String], String) in
            guard var lane = state.lanes[runningID], let successor = state.lanes.removeValue(forKey: successorID)
            else { return ([], [], "") }
            var queued = successor.queues
            // The next reload compares against the table the plugin now runs with.
            lane.plugin.configuration = successor.plugin.configuration
            lane.statistics = Self.merge(lane.statistics, successor.statistics)
            var drops: [SubjectQueues<Event>.Drop] = []
            var start: Set<String> = []
            for event in queued.takeAll() {
                let (dropped, startWorker) = lane.queues.enqueue(event)
                drops += dropped
                if startWorker { start.insert(event.subject) }
            }
            for drop in drops { lane.statistics.countDrop(drop) }
            state.lanes[runningID] = lane
            if let index = state.active.firstIndex(where: { $0.id == successorID }) {
                state.active[index].id = runningID
            }
            return (drops, start.sorted(), lane.plugin.name)
        }
        for drop in drops { log(drop, plugin: name) }
        for subject in start { spawnWorker(lane: runningID, subject: subject) }
    }

    // MARK: - Lifecycle

    @discardableResult
    private static func install(
        _ plugin: LoadedPlugin,
        in state: inout State,
        view: PluginStateView,
        editor: (any RouteEditor)?,
        logger: Logger,
        options: Options,
        held: Bool = false
    ) -> Lane {
        state.lastID += 1
        let context = PluginContext(
            pluginName: plugin.name,
            logger: logger,
            view: view,
            capabilities: plugin.capabilities,
            routeEditor: plugin.capabilities.contains(.routeEditing) ? editor : nil
        )
        var queues = SubjectQueues<Event>(
            dropsObsolete: !plugin.receivesObsoleteEvents,
            limit: options.maxQueuedPerSubject
        )
        if held { queues.hold() }
        let lane = Lane(id: state.lastID, plugin: plugin, queues: queues, context: context)
        state.lanes[lane.id] = lane
        state.active.removeAll { $0.name == plugin.name }
        state.active.append((plugin.name, lane.id))
        return lane
    }

    /// Drains the lanes `ids` (bounded), drops what is left, calls their `stop` in order, and
    /// removes them.
    private func retire(_ ids: [UInt64]) async {
        guard !ids.isEmpty else { return }
        // A lane still held never started: nothing delivers its queue, so there is no draining to
        // wait for (its events are dropped and counted below).
        let draining = state.withLock { state in Set(ids.filter { state.lanes[$0]?.queues.held == false }) }
        // Bounded: a lane stuck behind a hung call never drains. (A waiter left behind is
        // resumed once the lanes are gone, below.)
        if !draining.isEmpty {
            _ = await TimedCall.run(timeout: options.drainTimeout) { await self.waitUntilIdle(lanes: draining) }
        }
        for id in ids {
            let retiring = state.withLock { state -> (Lane, Int)? in
                guard var lane = state.lanes[id] else { return nil }
                let discarded = lane.queues.discardQueued()
                lane.statistics.droppedStopping += discarded.count
                state.lanes[id] = lane
                return (lane, discarded.count)
            }
            guard let retiring else { continue }
            let (lane, discarded) = retiring
            if discarded > 0 {
                logger.notice("plugin \(lane.plugin.name) stopping: \(discarded) queued event(s) not delivered")
            }
            await lifecycle("stop", lane) { try await lane.plugin.plugin.stop(context: lane.context) }
            state.withLock { state in
                guard var lane = state.lanes.removeValue(forKey: id) else { return }
                lane.statistics.queued = 0
                lane.statistics.stuck = lane.queues.stuck
                state.retired[lane.plugin.name] =
                    state.retired[lane.plugin.name].map { Self.merge($0, lane.statistics) } ?? lane.statistics
                state.active.removeAll { $0.id == id }
            }
        }
        resumeIdleWaiters()
    }

    /// Runs one lifecycle callback within the timeout; logs and counts failures.
    private func lifecycle(_ what: String, _ lane: Lane, _ body: @escaping @Sendable () async throws -> Void) async {
        let outcome = await TimedCall.run(timeout: options.timeout, operation: body)
        let name = lane.plugin.name
        let failure: String
        switch outcome {
        case .returned:
            logger.debug("plugin \(name): \(what) done", metadata: ["plugin": .string(name)])
            return
        case .threw(let error, _):
            failure = "failed: \(error)"
        case .timedOut:
            failure = "did not return within \(options.timeout)"
        }
        logger.error("plugin \(name): \(what) \(failure)", metadata: ["plugin": .string(name)])
        state.withLock { state in
            state.lanes[lane.id]?.statistics.lifecycleFailures[what, default: 0] += 1
            if case .threw(let error, _) = outcome { state.lanes[lane.id]?.statistics.lastError = "\(error)" }
        }
    }

    // MARK: - Idle

    private func waitUntilIdle(lanes: Set<UInt64>?) async {
        await withCheckedContinuation { continuation in
            let idle = state.withLock { state in
                if Self.isIdle(state.lanes, lanes) { return true }
                state.idleWaiters.append(continuation, for: lanes ?? Set(state.lanes.keys))
                return false
            }
            if idle { continuation.resume() }
        }
    }

    /// Whether the lanes named (every lane: `nil`) have no call running and nothing queued, except
    /// behind a stuck call.
    private static func isIdle(_ all: [UInt64: Lane], _ lanes: Set<UInt64>?) -> Bool {
        all.allSatisfy { id, lane in lanes.map { !$0.contains(id) } ?? false || lane.queues.active == 0 }
    }

    private func resumeIdleWaiters() {
        let ready = state.withLock { state in
            let lanes = state.lanes
            return state.idleWaiters.takeReady { Self.isIdle(lanes, $0) }
        }
        for continuation in ready { continuation.resume() }
    }

    private static func merge(_ a: PluginStatistics, _ b: PluginStatistics) -> PluginStatistics {
        var m = a
        for (outcome, count) in b.calls { m.calls[outcome, default: 0] += count }
        m.lateCompletions += b.lateCompletions
        m.stuck += b.stuck
        m.queued += b.queued
        m.droppedObsolete += b.droppedObsolete
        m.droppedOverflow += b.droppedOverflow
        m.droppedStopping += b.droppedStopping
        for (what, count) in b.lifecycleFailures { m.lifecycleFailures[what, default: 0] += count }
        m.completedCalls += b.completedCalls
        m.totalDuration += b.totalDuration
        m.maximumDuration = max(a.maximumDuration, b.maximumDuration)
        m.lastError = b.lastError ?? a.lastError
        return m
    }
}

/// A one-way flag set from a `@Sendable` closure.
private final class Flag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}
