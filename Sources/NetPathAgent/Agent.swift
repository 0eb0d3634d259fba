// SPDX-License-Identifier: Apache-2.0

import FoundationEssentials
import Glibc
import Logging
import NetPathConfig
import NetPathControl
import NetPathCore
import NetPathDispatch
import NetPathLinux
import NetPathPlugin
import Prometheus
import ServiceLifecycle
import Synchronization

/// The netpath agent: follows the kernel, evaluates policies and rules, and dispatches each
/// transition to hooks, in-process plugins and `monitor` clients.
///
/// A swift-service-lifecycle `Service`: run it in a `ServiceGroup` with graceful shutdown on
/// SIGTERM/SIGINT, and call ``reload()`` on SIGHUP.
///
/// ```swift
/// let agent = try Agent(options: AgentOptions(logger: logger))
/// let group = ServiceGroup(services: [agent], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
/// try await group.run()
/// ```
///
/// Data flows one way through its main loop: kernel snapshot → ``SystemState`` →
/// ``PathTracker`` (events) → `Settler` (hold-down) → `RuleMatcher` → hook dispatcher, plugins,
/// control-socket monitors and metrics. The loop is the only place that mutates that state;
/// kernel updates, settle deadlines, reload requests and the results of the work it hands off
/// all reach it as inputs of one bounded inbox.
package final class Agent: Service, Sendable {
    package let options: AgentOptions
    /// The plugin types this agent knows; rules may name only these.
    package let plugins: PluginRegistry
    private let initial: ConfigurationFile.Loaded
    private let initialPlugins: [LoadedPlugin]
    private let inbox = LoopInbox()
    private let snapshot = Mutex(AgentSnapshot())
    let metrics = AgentMetrics()
    private let notifier: SystemdNotifier

    /// Loads and validates the configuration, plugin tables included; an invalid one fails here,
    /// before anything starts.
    ///
    /// - Parameters:
    ///   - options: Where configuration and inputs come from.
    ///   - plugins: The plugin types rules may enable (netpathd registers the ones under `Plugins/`).
    package init(options: AgentOptions, plugins: PluginRegistry = PluginRegistry()) throws(ConfigurationFile.Failure) {
        self.options = options
        self.plugins = plugins
        (initial, initialPlugins) = try Self.load(options.configPath, plugins: plugins).get()
        notifier = SystemdNotifier(environment: options.environment)
    }

    /// Re-reads the configuration; an invalid one is logged and the current one stays in force.
    package func reload() {
        inbox.post(.reload([]))
    }

    /// The registry `/metrics` serves: an executable may bootstrap swift-metrics with it
    /// (`PrometheusMetricsFactory(registry:)`) so that libraries' metrics appear there too.
    package var metricsRegistry: PrometheusCollectorRegistry { metrics.registry }

    package func run() async throws {
        let logger = options.logger
        let configuration = initial.configuration
        for warning in configuration.warnings { logger.warning("\(warning)") }
        logger.info("configuration loaded", metadata: ["source": .string(initial.source)])

        let hooks = HookDispatcher(
            directory: HookDirectory(path: configuration.agent.hooksDirectory, logger: logger),
            dialectDirectories: configuration.hookDirectories.map { DialectHookDirectory(setting: $0, logger: logger) },
            runner: HookRunner(logger: logger),
            options: .init(maxRunningHooks: configuration.agent.maxRunningHooks),
            logger: logger,
            onResult: { [metrics] result in metrics.record(result) }
        )
        // The name was checked when the configuration was loaded; the id is taken now, when the
        // socket is made, and a group deleted in between stops the start rather than being ignored.
        let controlGroup: UInt32?
        if let name = configuration.agent.controlGroup {
            guard let id = GroupDatabase.id(named: name) else {
                throw StartError.controlGroupNotFound(name: name)
            }
            controlGroup = id
        } else {
            controlGroup = nil
        }
        // Made before the control socket, which asks it for the links it ignores; started later.
        let engine = NetlinkEngine(
            options: .init(
                namespace: options.namespace,
                logger: logger,
                linkFilter: LinkFilter.following(configuration.linkIgnoreList, namespace: options.namespace)
            )
        )
        let control = ControlServer(
            path: options.controlSocketPath ?? configuration.agent.controlSocket,
            group: controlGroup,
            logger: logger,
            answer: { [self] request in
                Self.answer(request, currentSnapshot, hooks: hooks, engine: engine)
            },
            reload: { [inbox] reply in inbox.post(.reload([reply])) },
            probe: { [inbox] interface, reply in inbox.post(.probeNow(interface, reply)) }
        )
        // Off the cooperative pool: a stale socket is probed with a connect that may take its
        // whole timeout, and stopping waits for the server thread.
        do {
            try await OSThread.run { () throws(ListenerError) in try control.start() }
        } catch {
            throw StartError.controlSocket(error)
        }
        do {
            try await run(configuration: configuration, hooks: hooks, control: control, engine: engine)
        } catch {
            await OSThread.run { control.stop() }
            throw error
        }
        await OSThread.run { control.stop() }
        logger.info("stopped")
    }

    /// The agent once its control socket is open.
    private func run(
        configuration: Configuration,
        hooks: HookDispatcher,
        control: ControlServer,
        engine: NetlinkEngine
    ) async throws {
        let logger = options.logger
        // Host-name targets are resolved on the resolver's own threads; an answer that changes
        // what a policy sees comes back to the loop as an input.
        let hostResolver = HostResolver(logger: logger) { [inbox] in inbox.post(.targetsResolved) }
        defer { hostResolver.stop() }
        let observer = SystemObserver(
            engine: engine,
            builder: SystemStateBuilder(
                classifier: InterfaceClassifier(overrides: configuration.interfaces),
                sysfs: SysfsReader(root: options.sysfsRoot),
                resolvConfPath: options.resolvConfPath
            ),
            targets: configuration.policies.compactMap(\.target),
            hosts: hostResolver
        )
        let routeEditor: NetlinkRouteEditor?
        do {
            routeEditor = try NetlinkRouteEditor(namespace: options.namespace)
        } catch {
            logger.warning("route editing unavailable to plugins: \(error)")
            routeEditor = nil
        }
        let pluginRunner = PluginRunner(plugins: initialPlugins, routeEditor: routeEditor, logger: logger)
        let metricsServer =
            configuration.agent.metrics.isEmpty
            ? nil
            : MetricsServer(address: configuration.agent.metrics, logger: logger) { [self] in
                let pluginErrors = pluginRunner.statistics.mapValues {
                    ($0.calls[.failure] ?? 0) + ($0.calls[.timeout] ?? 0)
                }
                metrics.update(engine: engine.statistics, pluginErrors: pluginErrors)
                return metrics.text()
            }
        do {
            try metricsServer?.start()
        } catch {
            throw StartError.metrics(error)
        }
        defer { metricsServer?.stop() }
        let recorder: TraceWriter?
        do {
            recorder = try options.recordPath.map { path throws(TraceWriterError) in try TraceWriter(path: path) }
        } catch {
            throw StartError.record(error)
        }

        // The engine's start waits for the initial dump: seconds with a million routes. Its own
        // thread waits, not one of the cooperative pool's. From then on the engine's thread hands
        // each snapshot to the loop's inbox itself, and steps the loop with it when the loop is
        // idle (LoopInbox.handleInline): no thread hop from the kernel to the hook's spawn.
        do {
            let delivery = SnapshotDelivery(
                deliver: { [inbox] snapshot in inbox.offer(snapshot) },
                finish: { [inbox] in inbox.post(.ended) }
            )
            try await OSThread.run { () throws(NetlinkError) in try observer.startEngine(delivering: delivery) }
        } catch {
            throw StartError.engine(error)
        }

        let loop = MainLoop(
            agent: self,
            configuration: configuration,
            source: initial.source,
            observer: observer,
            hooks: hooks,
            plugins: pluginRunner,
            control: control,
            recorder: recorder,
            inbox: inbox
        )
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await hooks.run() }
                group.addTask { [options, inbox] in
                    await ResumeDetector.watch(options.bootClocks, every: options.resumeCheckInterval) {
                        inbox.post(.resumed($0))
                    }
                }
                if let interval = Self.watchdogInterval(options.environment) {
                    group.addTask { [notifier] in
                        // Pings only while the engine thread is alive: a wedged engine lets
                        // systemd's watchdog restart the agent.
                        while !Task.isCancelled {
                            if engine.isRunning { notifier.notify(["WATCHDOG=1"]) }
                            try? await Task.sleep(for: interval)
                        }
                    }
                }
                await loop.run()
                // Plugins stop before the process ends: route-metrics puts the original metrics back.
                await pluginRunner.stopAll()
                group.cancelAll()
            }
        } onGracefulShutdown: { [notifier] in
            logger.info("stopping")
            notifier.notify(["STOPPING=1", "STATUS=stopping"])
            // Stopping joins the engine thread: on a thread of its own. The snapshot stream
            // ends, and the loop stops.
            OSThread.detach { engine.stop() }
        }
        await OSThread.run { engine.stop() }
    }

    /// The configuration at `path` and the plugins it enables, created from their tables: all
    /// validated together, so a bad plugin table is an error with its line like any other.
    static func load(_ path: String?, plugins: PluginRegistry) -> Result<
        (ConfigurationFile.Loaded, [LoadedPlugin]), ConfigurationFile.Failure
    > {
        ConfigurationFile.load(path: path, knownPlugins: plugins.knownPlugins).flatMap { loaded in
            plugins.makePlugins(for: loaded.configuration, file: loaded.source)
                .map { (loaded, $0) }
                .mapError { .invalid($0) }
        }
    }

    /// Half of `WATCHDOG_USEC`, when systemd asks for pings (and, if given, for this process).
    static func watchdogInterval(_ environment: [String: String]) -> Duration? {
        guard let text = environment["WATCHDOG_USEC"], let usec = UInt64(text), usec > 0 else { return nil }
        if let pid = environment["WATCHDOG_PID"], let value = Int32(pid), value != getpid() { return nil }
        return .microseconds(Int64(usec / 2))
    }

    static func answer(
        _ request: ControlRequest,
        _ snapshot: AgentSnapshot,
        hooks: HookDispatcher,
        engine: NetlinkEngine
    ) -> ControlReply {
        let command = request.command
        switch command {
        case .status:
            let ignored = request.all == true ? engine.ignoredInterfaces() : nil
            let status = snapshot.status(ignoredCount: engine.ignoredLinkCount, ignored: ignored)
            return ControlReply(ok: true, status: status)
        case .explain: return ControlReply(ok: true, explain: snapshot.explain(ignored: engine.ignoredInterfaces()))
        case .hooks: return ControlReply(ok: true, hooks: hooks.reports())
        case .monitor, .reload, .probe: return .failure("\(command.rawValue) is not answered here")
        }
    }

    // MARK: - Used by the main loop

    var currentSnapshot: AgentSnapshot { snapshot.withLock { $0 } }

    func publish<Result>(_ update: (inout AgentSnapshot) -> Result) -> Result {
        snapshot.withLock { update(&$0) }
    }

    func notify(_ lines: [String]) {
        notifier.notify(lines)
    }

    var notifierEnabled: Bool { notifier.isEnabled }

    func schedule(_ input: LoopInbox.Input, at deadline: ContinuousClock.Instant) -> Task<Void, Never> {
        Task { [inbox] in
            try? await Task.sleep(until: deadline, clock: .continuous)
            if !Task.isCancelled { inbox.post(input) }
        }
    }
}
