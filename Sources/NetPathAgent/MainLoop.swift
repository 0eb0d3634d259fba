import FoundationEssentials
import Glibc
import Logging
import NetPathConfig
import NetPathControl
import NetPathCore
import NetPathDispatch
import NetPathLinux
import NetPathPlugin

/// The agent's single writer: takes inputs one at a time and carries out what the pure parts
/// (``PathTracker``, `Settler`, `RuleMatcher`) decide.
final class MainLoop {
    private let agent: Agent
    private var configuration: Configuration
    private var source: String
    private let observer: SystemObserver
    private let hooks: HookDispatcher
    private let plugins: PluginRunner
    private let control: ControlServer
    private let recorder: TraceWriter?
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

    init(
        agent: Agent,
        configuration: Configuration,
        source: String,
        observer: SystemObserver,
        hooks: HookDispatcher,
        plugins: PluginRunner,
        control: ControlServer,
        recorder: TraceWriter?
    ) {
        self.agent = agent
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
    }

    func run(_ inputs: AsyncStream<Agent.Input>) async {
        defer { timer?.cancel() }
        for await input in inputs {
            switch input {
            case .update(let snapshot):
                if lastSnapshot == nil {
                    await start(with: snapshot)
                } else {
                    apply(snapshot)
                }
            case .tick:
                timerDeadline = nil
                dispatch(settler.tick(at: .now))
            case .reload(let reply):
                reply(await reload())
            case .ended:
                await stop()
                return
            }
            scheduleTick()
        }
    }

    // MARK: Startup

    private func start(with snapshot: KernelSnapshot) async {
        lastSnapshot = snapshot
        let update = observer.update(from: snapshot)
        lastUpdate = update
        record(update)
        let startup = tracker.start(with: update.state, at: update.time)
        plugins.update(state: tracker.state, paths: tracker.paths)
        await plugins.startAll()
        if configuration.agent.startupEvents {
            // Startup events bypass settle (there is no burst to collapse) but teach it the state.
            dispatch(settler.receive(startup, at: .now))
        } else {
            settler.remember(startup)
        }
        publish(update)
        // READY=1 means: the state is loaded and its startup events have been dispatched. Their
        // hooks get a bounded time, so one hung hook cannot keep systemd waiting forever.
        let waited = await Deadline.race(agent.options.readyWaitLimit) { [hooks, plugins] in
            await hooks.waitUntilIdle()
            await plugins.waitUntilIdle()
        }
        if !waited {
            logger.warning("startup hooks still running after \(agent.options.readyWaitLimit); reporting ready anyway")
        }
        agent.notify(["READY=1", "STATUS=\(statusLine)"])
        logger.notice("ready", metadata: ["status": .string(statusLine)])
    }

    // MARK: Stop

    /// Dispatches what settle holds, the final state of its subjects, and lets the hooks run
    /// everything queued within ``AgentOptions/stopWaitLimit``. Handing the events over is not
    /// enough: once its task is cancelled the hook dispatcher drops what is still queued, and a
    /// subject's second event (`down` after `carrier-down`) always waits behind its first.
    /// Plugins need no wait here: `PluginRunner.stopAll()`, next, drains their queues itself.
    private func stop() async {
        dispatch(settler.flush())
        let limit = agent.options.stopWaitLimit
        let drained = await Deadline.race(limit) { [hooks] in await hooks.waitUntilIdle() }
        if !drained {
            logger.warning("hooks still busy \(limit) after the stop began; dropping the events still queued")
        }
    }

    // MARK: Updates

    private func apply(_ snapshot: KernelSnapshot) {
        lastSnapshot = snapshot
        let update = observer.update(from: snapshot)
        lastUpdate = update
        record(update)
        let events = tracker.update(to: update.state, at: update.time)
        // Plugins read the new state through their context before they get its events.
        plugins.update(state: tracker.state, paths: tracker.paths)
        dispatch(settler.receive(events, at: .now))
        publish(update)
    }

    private func record(_ update: SystemUpdate) {
        guard let recorder else { return }
        do {
            try recorder.append(Trace.Record(time: update.time, state: update.state))
        } catch {
            logger.error("cannot record the trace: \(error)")
        }
    }

    private func publish(_ update: SystemUpdate?) {
        let state = tracker.state
        let paths = tracker.paths
        let configuration = configuration
        let source = source
        agent.publish { snapshot in
            snapshot.state = state
            snapshot.paths = paths
            snapshot.configuration = configuration
            snapshot.configurationSource = source
            if let update { snapshot.time = update.time }
        }
        agent.metrics.record(paths: paths)
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
            // Encoding costs tens of microseconds per event; only pay it when someone listens.
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

    private func reload() async -> ControlReply {
        let reply = await applyConfiguration()
        // Log files are reopened on every SIGHUP, whether or not the configuration was valid:
        // that is what logrotate's postrotate expects.
        await plugins.reopenAll()
        return reply
    }

    private func applyConfiguration() async -> ControlReply {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let monotonicMicroseconds = Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000
        agent.notify(["RELOADING=1", "MONOTONIC_USEC=\(monotonicMicroseconds)", "STATUS=reloading"])
        defer { agent.notify(["READY=1", "STATUS=\(statusLine)"]) }

        let loaded: ConfigurationFile.Loaded
        let newPlugins: [LoadedPlugin]
        switch Agent.load(agent.options.configPath, plugins: agent.plugins) {
        case .failure(let failure):
            for line in failure.description.split(separator: "\n") { logger.error("\(line)") }
            logger.error("reload rejected: the configuration in force is unchanged")
            return .failure("reload rejected; the configuration in force is unchanged:\n\(failure)")
        case .success(let value):
            (loaded, newPlugins) = value
        }
        let new = loaded.configuration
        for warning in new.warnings { logger.warning("\(warning)") }
        for (name, old, changed) in [
            ("hooks_dir", configuration.agent.hooksDirectory, new.agent.hooksDirectory),
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
        await plugins.reload(newPlugins)
        observer.setOverrides(new.interfaces)
        observer.setTargets(new.policies.compactMap(\.target))
        var events = tracker.setPolicies(new.policies, at: Date())
        // New overrides may change types or metered flags now, not at the next kernel change.
        if let lastSnapshot {
            let update = observer.update(from: lastSnapshot)
            events += tracker.update(to: update.state, at: Date())
        }
        plugins.update(state: tracker.state, paths: tracker.paths)
        dispatch(settler.receive(events, at: .now))
        publish(nil)
        logger.notice("configuration reloaded", metadata: ["source": .string(loaded.source)])
        return ControlReply(ok: true, configuration: loaded.source)
    }
}
