// SPDX-License-Identifier: Apache-2.0

import FoundationEssentials
import Logging
import NetPathConfig
import NetPathControl
import NetPathCore
import NetPathDispatch
import NetPathLinux
import NetPathPlugin

/// The agent's single writer: takes inputs one at a time and carries out what the pure parts
/// (``PathTracker``, `Settler`, `RuleMatcher`) decide.
///
/// One at a time, on one of two threads: a kernel snapshot that finds the loop idle is stepped by
/// the engine's thread itself, which so decides and spawns the change's hooks without a thread
/// hop; everything else, and any snapshot that finds the loop busy, is stepped by the loop's task
/// (``LoopInbox/handleInline(_:)`` keeps the two from overlapping, and in order).
///
/// It never awaits anything slow. Hooks and plugins run elsewhere (the dispatcher and the plugin
/// runner only queue), and what must wait for them — `READY=1` after the startup events' hooks,
/// a plugin's `start`, `reload` or `reopen` — runs in a task of its own whose end comes back
/// through the ``LoopInbox`` as one more input. So kernel events, settle ticks, reloads and the
/// stop flow while a startup hook sleeps or a plugin hangs.
final class MainLoop {
    private let agent: Agent
    private var configuration: Configuration
    private var source: String
    private let observer: SystemObserver
    private let hooks: HookDispatcher
    private let plugins: PluginRunner
    private let control: ControlServer
    private let recorder: TraceWriter?
    private let inbox: LoopInbox
    /// Connectivity probing: its results come back through the inbox.
    private let connectivity: ConnectivityMonitor
    private var logger: Logger { agent.options.logger }

    private var tracker: PathTracker
    private var settler: Settler
    private var matcher: RuleMatcher
    private var lastSnapshot: KernelSnapshot?
    private var lastUpdate: SystemUpdate?
    private var timer: Task<Void, Never>?
    private var timerDeadline: ContinuousClock.Instant?
    /// The last STATUS= line sent to systemd.
    private var lastStatus = ""
    /// Whether `READY=1` went out after startup: the startup events' hooks settled, or the limit passed.
    private var ready = false
    /// The plugin lifecycle work under way (start, reload, reopen): one job at a time, since the
    /// runner's lifecycle calls must not overlap. It ends with ``LoopInbox/Input/pluginsSettled``.
    private var pluginJob: Task<Void, Never>?
    /// The reload whose plugin part is under way: the replies it owes, and what they say.
    private var reloading: (replies: [LoopInbox.Reply], reply: ControlReply)?
    /// Reloads asked for while a plugin job ran: they start when it ends (`nil`: none).
    private var deferredReload: [LoopInbox.Reply]?

    init(
        agent: Agent,
        configuration: Configuration,
        source: String,
        observer: SystemObserver,
        hooks: HookDispatcher,
        plugins: PluginRunner,
        control: ControlServer,
        recorder: TraceWriter?,
        inbox: LoopInbox
    ) {
        self.agent = agent
        self.inbox = inbox
        self.configuration = configuration
        self.source = source
        self.observer = observer
        self.hooks = hooks
        self.plugins = plugins
        self.control = control
        self.recorder = recorder
        tracker = PathTracker(policies: configuration.policies)
        settler = Settler(window: configuration.agent.settle)
        matcher = RuleMatcher(configuration: configuration)
        connectivity = ConnectivityMonitor(
            inbox: inbox,
            logger: agent.options.logger,
            makeProber: agent.options.connectivityProber
        )
        connectivity.configure(configuration.connectivity)
    }

    func run() async {
        // A snapshot that finds the loop idle is stepped on the engine's thread, which then spawns
        // its hooks itself: no thread hop between the kernel's message and the fork, which would
        // wait for the scheduler to wake another thread (BENCHMARKS.md, "two-thread loop stepping").
        // The inbox hands this loop one input at a time, on whichever thread, never two at once.
        // (With `--namespace` too: the engine's thread stays in the agent's namespace, and only
        // its sockets are opened in the followed one.)
        let loop = Exclusive(self)
        inbox.handleInline { input in loop.value.step(input) }
        defer {
            inbox.handleInline(nil)
            timer?.cancel()
            connectivity.stop()
        }
        while true {
            let input = await inbox.next()
            if case .ended = input {
                // The engine has stopped: no more steps on its thread (the defer lets go of them).
                await stop()
                return
            }
            step(input)
        }
    }

    /// A loop the inbox serializes: sent to the engine's thread for ``LoopInbox/handleInline(_:)``.
    private struct Exclusive: @unchecked Sendable {
        let value: MainLoop
        init(_ value: MainLoop) { self.value = value }
    }

    /// One input, and what follows every input.
    private func step(_ input: LoopInbox.Input) {
        switch input {
        case .update(let snapshot):
            if lastSnapshot == nil {
                start(with: snapshot)
            } else {
                apply(snapshot)
            }
        case .tick:
            timerDeadline = nil
            dispatch(settler.tick(at: .now))
        case .targetsResolved:
            reevaluate()
        case .reload(let replies):
            requestReload(replies)
        case .startupSettled(let settled):
            reportReady(settled: settled)
        case .pluginsSettled:
            pluginsSettled()
        case .ended:
            break  // run() stops the loop: stopping awaits the hooks
        case .probeTick:
            connectivity.tick()
        case .probed(let index, let sequence, let result):
            if connectivity.received(index, sequence: sequence, result: result, at: .now) {
                reevaluateConnectivity()
            }
        case .probeNow(let interface, let reply):
            connectivity.probeNow(interface, reply: reply, at: .now)
        case .resumed(let suspended):
            resumed(after: suspended)
        }
        scheduleTick()
        // After every input: what it changed may make a probe due (never awaited here).
        connectivity.pump()
    }

    // MARK: Startup

    private func start(with snapshot: KernelSnapshot) {
        lastSnapshot = snapshot
        let raw = observer.update(from: snapshot)
        lastUpdate = raw
        connectivity.observe(raw.state, at: .now)
        var update = raw
        update.state = connectivity.overlay(raw.state)
        record(update)
        let startup = tracker.start(with: update.state, at: update.time)
        connectivity.observe(paths: [], tracker.paths, at: .now)
        plugins.update(state: tracker.state, paths: tracker.paths)
        // Plugins get their startup events after their `start`, which may take up to its timeout:
        // the runner holds the events meanwhile, and the loop goes on.
        plugins.holdUntilStarted()
        startPluginJob { [plugins] in await plugins.startAll() }
        publish(update)
        if configuration.agent.startupEvents {
            // Startup events bypass settle (there is no burst to collapse) but teach it the state.
            dispatch(settler.receive(startup, at: .now))
        } else {
            settler.remember(startup)
            // No startup events: networkd-dispatcher scripts run on the first state change.
            hooks.assumeNetworkdState(update.state.interfaces)
        }
        recordMetrics()
        // READY=1 means: the state is loaded and its startup events have been dispatched. Their
        // hooks get a bounded time, so one hung hook cannot keep systemd waiting forever; the
        // wait runs beside the loop, so events, reloads and a stop are handled meanwhile.
        let limit = agent.options.readyWaitLimit
        Task { [hooks, plugins, inbox, pluginJob] in
            let settled = await TimedCall.finishes(within: limit) {
                await pluginJob?.value
                await hooks.waitUntilIdle()
                await plugins.waitUntilIdle()
            }
            inbox.post(.startupSettled(settled))
        }
    }

    private func reportReady(settled: Bool) {
        if !settled {
            logger.warning("startup hooks still running after \(agent.options.readyWaitLimit); reporting ready anyway")
        }
        ready = true
        logger.notice("ready", metadata: ["status": .string(statusLine)])
        // A reload under way sends READY=1 when it ends; now would end systemd's reload early.
        guard reloading == nil else { return }
        agent.notify(["READY=1", "STATUS=\(statusLine)"])
    }

    // MARK: Plugin jobs

    /// Runs `body` (plugin lifecycle calls) beside the loop; its end comes back as an input.
    private func startPluginJob(_ body: @escaping @Sendable () async -> Void) {
        pluginJob = Task { [inbox] in
            await body()
            inbox.post(.pluginsSettled)
        }
    }

    private func pluginsSettled() {
        pluginJob = nil
        if let (replies, reply) = reloading {
            reloading = nil
            for send in replies { send(reply) }
            agent.notify(ready ? ["READY=1", "STATUS=\(statusLine)"] : ["STATUS=\(statusLine)"])
        }
        if let replies = deferredReload {
            deferredReload = nil
            reload(replies)
        }
    }

    // MARK: Stop

    /// Dispatches what settle holds, the final state of its subjects, and lets the hooks run
    /// everything queued within ``AgentOptions/stopWaitLimit``. Handing the events over is not
    /// enough: once its task is cancelled the hook dispatcher drops what is still queued, and a
    /// subject's second event (`down` after `carrier-down`) always waits behind its first.
    /// Plugins need no wait here: `PluginRunner.stopAll()`, next, drains their queues itself,
    /// once the plugin job under way has ended (each of its calls is bounded by the plugin
    /// timeout), so that stopping never overlaps starting or reloading.
    private func stop() async {
        dispatch(settler.flush())
        for send in deferredReload ?? [] { send(.failure("netpathd is stopping; the configuration was not reloaded")) }
        deferredReload = nil
        let limit = agent.options.stopWaitLimit
        let pending = hooks.pendingEvents
        if pending > 0 {
            logger.notice("stopping: waiting up to \(limit) for the hooks of \(pending) event(s) queued or running")
        }
        let drained = await TimedCall.finishes(within: limit) { [hooks] in await hooks.waitUntilIdle() }
        if !drained {
            logger.warning("hooks still busy \(limit) after the stop began; dropping the events still queued")
        }
        await pluginJob?.value
        if let (replies, reply) = reloading {
            reloading = nil
            for send in replies { send(reply) }
        }
    }

    // MARK: Resume

    /// After a suspend every link may have changed while nobody listened, and every probe verdict
    /// is stale: the kernel's state is read again (its differences arrive as an update, like after
    /// an overrun), and every probed interface is probed now rather than at its next interval.
    private func resumed(after suspended: Duration) {
        let probes = connectivity.probeAllNow(at: .now)
        logger.notice(
            "resumed after a suspend of about \(Int((suspended.milliseconds / 1000).rounded())) s: re-reading the kernel's state and probing connectivity now",
            metadata: ["probes": "\(probes)"]
        )
        observer.engine.requestDump(because: "resumed from suspend")
    }

    // MARK: Updates

    private func apply(_ snapshot: KernelSnapshot) {
        // The snapshot this one replaces is freed once the hooks are spawned, as carryOut frees
        // the state: freeing its links, addresses and routes first would put that work on the
        // change's way to its first hook.
        let replaced = lastSnapshot
        lastSnapshot = snapshot
        carryOut(observer.update(from: snapshot))
        withExtendedLifetime(replaced) {}
    }

    /// A policy target resolved to something new: evaluate the last snapshot again.
    private func reevaluate() {
        guard let lastSnapshot else { return }
        var update = observer.update(from: lastSnapshot)
        // A new state of this moment, not of the snapshot's (traces stay in time order).
        update.time = Date()
        carryOut(update)
    }

    /// A probe changed what an interface shows: evaluate the last state again with it.
    private func reevaluateConnectivity() {
        guard var update = lastUpdate else { return }
        update.time = Date()
        carryOut(update)
    }

    /// Records `update` (with connectivity laid over it), turns it into events, and hands them on.
    ///
    /// Every policy is evaluated before any hook starts, even for a change whose only hooks are
    /// for interface events, which do not need the paths: what is published, and what plugins
    /// read through their context, is one consistent reading, the state and the paths of the
    /// same change. Dispatching the interface events first would start a link hook a little
    /// sooner, but let a hook or a plugin see the new interfaces beside the old paths (a removed
    /// interface still a path's primary).
    private func carryOut(_ raw: SystemUpdate) {
        lastUpdate = raw
        connectivity.observe(raw.state, at: .now)
        var update = raw
        update.state = connectivity.overlay(raw.state)
        record(update)
        let oldPaths = tracker.paths
        let events = tracker.update(to: update.state, at: update.time)
        connectivity.observe(paths: oldPaths, tracker.paths, at: .now)
        // Plugins read the new state through their context before they get its events.
        plugins.update(state: tracker.state, paths: tracker.paths)
        // Published before the hooks start: a hook that asks `netpathctl status` sees the state
        // its event comes from. (A lock and a few stores; the metrics wait until after.) The state
        // it replaces is freed after the hooks are spawned, not before, so that freeing it is
        // not on the way to the first hook.
        let replaced = publish(update, configuration: false)
        dispatch(settler.receive(events, at: .now))
        withExtendedLifetime(replaced) {}
        recordMetrics()
    }

    private func record(_ update: SystemUpdate) {
        guard let recorder else { return }
        do {
            try recorder.append(Trace.Record(time: update.time, state: update.state))
        } catch {
            logger.error("cannot record the trace: \(error)")
        }
    }

    /// Publishes the tracker's state and paths, and the configuration in force unless
    /// `configuration` is false (only a reload changes it, and the reload publishes it); returns
    /// the snapshot it replaced, for the caller to let go of when it suits it.
    @discardableResult
    private func publish(_ update: SystemUpdate?, configuration withConfiguration: Bool = true) -> AgentSnapshot {
        let state = tracker.state
        let paths = tracker.paths
        let configuration = configuration
        let source = source
        return agent.publish { snapshot in
            let replaced = snapshot
            snapshot.state = state
            snapshot.paths = paths
            if withConfiguration {
                snapshot.configuration = configuration
                snapshot.configurationSource = source
            }
            if let update { snapshot.time = update.time }
            return replaced
        }
    }

    private func recordMetrics() {
        agent.metrics.record(paths: tracker.paths)
        agent.metrics.record(connectivity: connectivity.states, probes: connectivity.probesStarted)
    }

    private var statusLine: String {
        var snapshot = AgentSnapshot()
        snapshot.paths = tracker.paths
        return snapshot.statusLine
    }

    // MARK: Dispatch

    private func dispatch(_ events: [Event]) {
        guard !events.isEmpty else { return }
        for event in events {
            let targets = matcher.targets(for: event)
            let hookTargets = targets.compactMap(HookTarget.init)
            // Even with no target, the dispatcher sees the event: it makes older queued events
            // of the same subject obsolete.
            hooks.dispatch(event, to: hookTargets)
            plugins.deliver(event, to: targets.flatMap(\.plugins))
            // Encoding costs microseconds per event (EventJSON); only pay it when someone listens.
            if control.monitorCount > 0, let line = try? JSONCoding.line(event) { control.broadcast(line) }
            agent.metrics.record(event)
            logger.info(
                "\(event.scope.rawValue) \(event.name.rawValue)",
                metadata: [
                    "interface": .string(event.interface ?? ""),
                    "policy": .string(event.policy ?? ""),
                    "rules": .string(targets.compactMap(\.rule).joined(separator: ",")),
                ]
            )
        }
        // Tell systemd only when the line changes: most batches leave every path as it was.
        if agent.notifierEnabled, statusLine != lastStatus {
            lastStatus = statusLine
            agent.notify(["STATUS=\(statusLine)"])
        }
    }

    private func scheduleTick() {
        guard let deadline = settler.nextDeadline else { return }
        if let pending = timerDeadline, pending <= deadline { return }
        timer?.cancel()
        timerDeadline = deadline
        timer = agent.schedule(.tick, at: deadline)
    }

    // MARK: Reload

    private func requestReload(_ replies: [LoopInbox.Reply]) {
        // The plugin runner takes one lifecycle job at a time: a reload during one waits for its end.
        guard pluginJob == nil else {
            deferredReload = (deferredReload ?? []) + replies
            return
        }
        reload(replies)
    }

    /// Applies the configuration file now, and hands the plugins' part (reload, then reopen) to a
    /// plugin job; the replies and `READY=1` go out when that ends.
    private func reload(_ replies: [LoopInbox.Reply]) {
        let monotonicMicroseconds = MonotonicClock.nanoseconds / 1000
        agent.notify(["RELOADING=1", "MONOTONIC_USEC=\(monotonicMicroseconds)", "STATUS=reloading"])
        let (reply, plan) = applyConfiguration()
        reloading = (replies, reply)
        startPluginJob { [plugins] in
            if let plan { await plugins.reload(plan) }
            // Log files are reopened on every SIGHUP, whether or not the configuration was
            // valid: that is what logrotate's postrotate expects.
            await plugins.reopenAll()
        }
    }

    /// Switches to the configuration file's contents, or keeps the one in force when the file is
    /// invalid; returns the reply, and the plugins' part of the reload still to be done.
    private func applyConfiguration() -> (ControlReply, PluginRunner.Reload?) {
        let loaded: ConfigurationFile.Loaded
        let newPlugins: [LoadedPlugin]
        switch Agent.load(agent.options.configPath, plugins: agent.plugins) {
        case .failure(let failure):
            for line in failure.description.split(separator: "\n") { logger.error("\(line)") }
            logger.error("reload rejected: the configuration in force is unchanged")
            return (.failure("reload rejected; the configuration in force is unchanged:\n\(failure)"), nil)
        case .success(let value):
            (loaded, newPlugins) = value
        }
        let new = loaded.configuration
        for warning in new.warnings { logger.warning("\(warning)") }
        for (name, old, changed) in [
            ("hooks_dir", configuration.agent.hooksDirectory, new.agent.hooksDirectory),
            (
                "[[hook_dir]]", configuration.hookDirectories.map(\.description).joined(separator: "; "),
                new.hookDirectories.map(\.description).joined(separator: "; ")
            ),
            ("control_socket", configuration.agent.controlSocket, new.agent.controlSocket),
            ("max_running_hooks", "\(configuration.agent.maxRunningHooks)", "\(new.agent.maxRunningHooks)"),
            ("control_group", configuration.agent.controlGroup ?? "", new.agent.controlGroup ?? ""),
            ("metrics", configuration.agent.metrics, new.agent.metrics),
        ] where old != changed {
            logger.warning(
                "\(name) changed from \"\(old)\" to \"\(changed)\": this takes effect when netpathd restarts"
            )
        }

        // Held events belong to the old rules' time: dispatch them before switching.
        dispatch(settler.flush())
        configuration = new
        source = loaded.source
        matcher = RuleMatcher(configuration: new)
        settler = Settler(window: new.agent.settle)
        settler.remember(tracker.start(with: tracker.state, at: Date()))
        // From here on, events go to the plugins the new rules name; a plugin the reload starts
        // or replaces queues them until the plugin job has started it.
        let plan = plugins.prepareReload(newPlugins)
        observer.setOverrides(new.interfaces)
        // A changed ignore list is applied by a re-dump, whose snapshot comes as an update.
        observer.engine.setLinkFilter(LinkFilter.following(new.linkIgnoreList, namespace: agent.options.namespace))
        observer.setTargets(new.policies.compactMap(\.target))
        connectivity.configure(new.connectivity)
        var events = tracker.setPolicies(new.policies, at: Date())
        // New overrides may change types or metered flags now, not at the next kernel change.
        if let lastSnapshot {
            let raw = observer.update(from: lastSnapshot)
            lastUpdate = raw
            connectivity.observe(raw.state, at: .now)
            let oldPaths = tracker.paths
            events += tracker.update(to: connectivity.overlay(raw.state), at: Date())
            connectivity.observe(paths: oldPaths, tracker.paths, at: .now)
        }
        plugins.update(state: tracker.state, paths: tracker.paths)
        publish(nil)
        dispatch(settler.receive(events, at: .now))
        recordMetrics()
        logger.notice("configuration reloaded", metadata: ["source": .string(loaded.source)])
        return (ControlReply(ok: true, configuration: loaded.source), plan)
    }
}
