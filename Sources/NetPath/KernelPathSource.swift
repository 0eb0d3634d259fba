// SPDX-License-Identifier: Apache-2.0

import Dispatch
import Logging
import NetPathCore
import NetPathLinux
import Synchronization

/// The kernel, as a ``PathSource`` and a ``ReachabilitySource``: paths evaluated in this process
/// from netlink, with no agent involved.
///
/// Every subscription to one source shares one `SystemObserver` — one netlink engine, one
/// thread, three file descriptors. It starts with the first subscription (which waits for the
/// initial dump, typically a few milliseconds) and stops when the last one is cancelled, so a
/// process that stops monitoring leaves no thread or socket behind. ``shared`` follows the
/// process's own network namespace; make another source to follow a named namespace.
///
/// ```swift
/// let source = KernelPathSource.shared
/// let path = try source.currentPath(for: PathPolicy(require: [.wired]))
///
/// // In a container's namespace (`ip netns add lab`):
/// let lab = KernelPathSource(options: .init(namespace: "lab"))
/// for await path in PathMonitor(policy: .default, source: lab).paths { print(path.status) }
/// ```
///
/// Each change is evaluated on one private serial queue, in order, for every subscribed policy;
/// a subscriber receives a path only when it differs from the last one it received. Its paths'
/// ``NetworkPath/origin`` is ``NetworkPath/Origin/kernel``.
///
/// After a suspend (`CLOCK_BOOTTIME` ran ahead of `CLOCK_MONOTONIC`, checked every ten seconds)
/// the kernel's state is read again at once, since links may have changed while nobody
/// listened; what differs arrives as any change does.
///
/// Host names — a policy's `target`, a ``HostMonitor``'s host — are never resolved on that
/// queue, nor on a caller's: each run has one `HostResolver`, which looks every name up on a
/// thread of its own, keeps the answer (a minute; a failure ten seconds) and looks it up again
/// when the path to the name servers changes. Until a name's first answer arrives, a target's
/// path is unsatisfied with ``NetworkPath/UnsatisfiedReason/targetUnresolved`` and a host's
/// reachability is ``HostReachability/Status/unresolved`` with
/// ``HostReachability/UnresolvedReason/lookingUp``; the answer is delivered as a change. So a
/// name server that never answers delays no path and no other monitor. (A lookup in progress
/// when the last subscription ends holds its thread until `getaddrinfo` returns.)
///
/// This is the local half of the sources: ``AgentPathSource`` follows a running `netpathd` over
/// its control socket through the same ``PathSource`` protocol, so monitors take either.
public final class KernelPathSource: PathSource, Sendable {
    /// The source for the process's network namespace, shared by every ``PathMonitor`` and
    /// ``HostMonitor`` created without an explicit source.
    ///
    /// ```swift
    /// let path = try KernelPathSource.shared.currentPath()
    /// ```
    public static let shared = KernelPathSource()

    /// The netlink engine's settings (namespace, receive buffer, logger) for each run.
    ///
    /// ```swift
    /// print(source.options.namespace ?? "this namespace")
    /// ```
    public let options: Options
    let builder: SystemStateBuilder
    /// How the run's ``HostResolver`` looks a name up (on its own threads).
    let lookup: HostResolver.Lookup

    // `lifecycle` serialises starting and stopping the engine with (un)registering subscribers,
    // so the last cancellation and a new subscription can never leave a subscriber on a stopped
    // engine. It is held across `engine.start()` and `stop()` (both block briefly), never while a
    // sink runs. `state` is the short-lived lock for everything else.
    private let lifecycle = Mutex<Void>(())
    let state = Mutex<State>(State())

    struct State {
        var run: Run?
        var nextID: UInt64 = 0
        var paths: [UInt64: PathSubscriber] = [:]
        var hosts: [UInt64: HostTracker] = [:]

        var isEmpty: Bool { paths.isEmpty && hosts.isEmpty }

        mutating func makeID() -> UInt64 {
            nextID += 1
            return nextID
        }
    }

    struct PathSubscriber {
        var evaluator: PathEvaluator
        var sink: SourceSink<NetworkPath>
        /// The last path delivered, or `nil` until the initial path is computed (on the run's
        /// queue); deliveries skip the subscriber until then.
        var last: NetworkPath?
    }

    /// What a source follows, and how.
    ///
    /// ```swift
    /// let lab = KernelPathSource(options: .init(namespace: "lab"))
    /// let tethers = KernelPathSource(options: .init(interfaces: [InterfaceOverride(match: try Glob("usb*"), metered: true)]))
    /// ```
    public struct Options: Sendable {
        /// Follow this named network namespace (`/run/netns/NAME`) instead of the process's own.
        public var namespace: String?
        /// Classification overrides by interface name, as netpath.toml's `[[interface]]` tables
        /// give the agent: the first whose pattern matches a link sets its type, metered or constrained.
        public var interfaces: [InterfaceOverride]
        /// The netlink receive buffer requested with `SO_RCVBUFFORCE` (the kernel doubles it).
        public var receiveBufferSize: Int
        /// Where the source reports netlink overruns, resynchronisations and failures.
        public var logger: Logger
        /// The clocks a resume from suspend is told by; tests pass ones that jump.
        package var bootClocks: any BootClocks = SystemBootClocks()
        /// How often ``bootClocks`` are compared.
        package var resumeCheckInterval: Duration = .seconds(10)

        /// Options for the process's namespace, no overrides, a 4 MiB receive buffer and a
        /// `netpath.netlink` logger.
        public init(
            namespace: String? = nil,
            interfaces: [InterfaceOverride] = [],
            receiveBufferSize: Int = 4 << 20,
            logger: Logger = Logger(label: "netpath.netlink")
        ) {
            self.namespace = namespace
            self.interfaces = interfaces
            self.receiveBufferSize = receiveBufferSize
            self.logger = logger
        }

        /// The netlink engine's settings for these options.
        package var engine: NetlinkEngine.Options {
            NetlinkEngine.Options(namespace: namespace, receiveBufferSize: receiveBufferSize, logger: logger)
        }
    }

    /// A source that follows `options.namespace` with `options.interfaces` applied.
    ///
    /// - Parameters:
    ///   - options: the namespace, the classification overrides, the receive buffer and logger.
    ///   - resolve: how host names (policy targets, ``HostMonitor`` hosts) are looked up, on the
    ///     source's resolver threads, never on a caller's or the delivery queue: it may block. An
    ///     empty answer counts as a failed lookup. `nil` (the default) uses `getaddrinfo`, whose
    ///     error then names the reason. Address literals are never passed to it.
    ///
    /// ```swift
    /// let lab = KernelPathSource(options: .init(namespace: "lab"))
    /// let fixed = KernelPathSource(resolve: { _ in ["203.0.113.7"] })
    /// ```
    public convenience init(options: Options = Options(), resolve: (@Sendable (String) -> [IPAddress])? = nil) {
        self.init(
            options: options,
            builder: SystemStateBuilder(classifier: InterfaceClassifier(overrides: options.interfaces)),
            resolve: resolve
        )
    }

    /// A source whose builder also sets the sysfs root and resolv.conf path (netpathctl's
    /// `--sysfs-root`, tests' fixtures); `builder`'s classifier wins over `options.interfaces`.
    package init(
        options: Options,
        builder: SystemStateBuilder,
        resolve: (@Sendable (String) -> [IPAddress])? = nil
    ) {
        self.options = options
        self.builder = builder
        if let resolve {
            lookup = { host in
                let addresses = resolve(host)
                return addresses.isEmpty ? .failure(HostLookupError(host: host, code: 0)) : .success(addresses)
            }
        } else {
            lookup = { TargetResolver().lookup($0) }
        }
    }

    /// Whether the netlink engine is running (some subscription is active).
    ///
    /// ```swift
    /// monitor.cancel()
    /// print(source.isRunning)  // false once the last subscriber is gone
    /// ```
    public var isRunning: Bool { state.withLock { $0.run != nil } }

    /// The number of active subscriptions (paths and hosts).
    ///
    /// ```swift
    /// print(KernelPathSource.shared.subscriberCount)
    /// ```
    public var subscriberCount: Int { state.withLock { $0.paths.count + $0.hosts.count } }

    /// Follows `policy`'s path: the first subscription starts the netlink engine (and waits for
    /// its initial dump), later ones share it. The initial value is evaluated from the kernel's
    /// state at this moment; later paths arrive on the source's queue, each different from the last.
    ///
    /// - Throws: ``NetlinkError`` when the engine cannot start (the namespace does not exist, …).
    ///
    /// ```swift
    /// let subscription = try KernelPathSource.shared.subscribe(to: .default, sink: SourceSink { print($0.status) })
    /// defer { subscription.cancel() }
    /// ```
    public func subscribe(
        to policy: PathPolicy,
        sink: SourceSink<NetworkPath>
    ) throws -> SourceSubscription<NetworkPath> {
        let (id, run) = try register { state in
            let id = state.makeID()
            state.paths[id] = PathSubscriber(evaluator: PathEvaluator(policy: policy), sink: sink, last: nil)
            return id
        }
        let initial: NetworkPath = run.onQueue {
            // A fresh read on the run's queue: newer than anything delivered before, and every
            // later delivery (also on this queue) is newer still.
            let reading = run.read()
            var path = PathEvaluator(policy: policy).path(for: reading.state)
            path.origin = .kernel
            state.withLock { $0.paths[id]?.last = path }
            return path
        }
        return SourceSubscription(initialValue: initial) { [self] in unregister(id) }
    }

    // MARK: - Runs

    /// Registers a subscriber (starting the engine for the first one) and updates the targets.
    func register(_ add: (inout State) -> UInt64) throws -> (UInt64, Run) {
        try lifecycle.withLock { _ in
            let run = try state.withLock { $0.run } ?? startRun()
            let (id, targets, hosts) = state.withLock { state in
                let id = add(&state)
                return (id, state.targets, state.hostNames)
            }
            run.observer.setTargets(targets)
            run.observer.setFollowedHosts(hosts)
            return (id, run)
        }
    }

    /// Removes a subscriber; stops the engine with the last one.
    func unregister(_ id: UInt64) {
        lifecycle.withLock { _ in
            let (run, empty, targets, hosts, tracker) = state.withLock { state in
                state.paths[id] = nil
                let tracker = state.hosts.removeValue(forKey: id)
                let run = state.run
                if state.isEmpty { state.run = nil }
                return (run, state.isEmpty, state.targets, state.hostNames, tracker)
            }
            tracker?.cancel()
            guard let run else { return }
            if empty {
                run.stop()
            } else {
                run.observer.setTargets(targets)
                run.observer.setFollowedHosts(hosts)
            }
        }
    }

    private func startRun() throws -> Run {
        // A new answer is a change like any other: it rings the run's queue, which re-evaluates
        // every subscriber. The doorbell is connected once the run exists; an answer before that
        // is read by the run's first evaluation anyway.
        let doorbell = Doorbell()
        let resolver = HostResolver(lookup: lookup, logger: options.logger) { doorbell.ring() }
        let observer = SystemObserver(engine: NetlinkEngine(options: options.engine), builder: builder, hosts: resolver)
        let snapshots: AsyncStream<KernelSnapshot>
        do {
            snapshots = try observer.startEngine()
        } catch {
            resolver.stop()
            throw error
        }
        let run = Run(observer: observer)
        state.withLock { $0.run = run }
        run.watchForResume(options) { [options] slept in
            options.logger.notice(
                "resumed after a suspend of about \(Int((slept.milliseconds / 1000).rounded())) s: re-reading the kernel's state"
            )
        }
        doorbell.connect { [weak self, weak run] in
            guard let self, let run else { return }
            run.ring { self.distribute(run) }
        }
        // The engine's stream is only a doorbell: each ring re-reads the engine's table on the
        // run's queue, so a late-delivered snapshot can never take a subscriber back in time.
        Task.detached { [self] in
            for await _ in snapshots { run.ring { self.distribute(run) } }
            self.engineEnded(run)
        }
        options.logger.debug("path source started", metadata: ["namespace": "\(options.namespace ?? "-")"])
        return run
    }

    /// Evaluates the current state for every subscriber; runs on the run's queue.
    private func distribute(_ run: Run) {
        let hosts = state.withLock { $0.run === run ? Array($0.hosts.values) : [] }
        let reading = run.read()
        let deliveries = state.withLock { state -> [(SourceSink<NetworkPath>, NetworkPath)] in
            guard state.run === run else { return [] }
            var deliveries: [(SourceSink<NetworkPath>, NetworkPath)] = []
            for id in state.paths.keys.sorted() {
                guard var subscriber = state.paths[id], subscriber.last != nil else { continue }
                var path = subscriber.evaluator.path(for: reading.state)
                path.origin = .kernel
                guard path != subscriber.last else { continue }
                subscriber.last = path
                state.paths[id] = subscriber
                deliveries.append((subscriber.sink, path))
            }
            return deliveries
        }
        for (sink, path) in deliveries { sink.yield(path) }
        for tracker in hosts { tracker.update(reading) }
    }

    /// The engine's stream ended without ``Run/stop()``: its thread failed. Ends every subscription.
    private func engineEnded(_ run: Run) {
        guard !run.isStopping else { return }
        options.logger.error("netlink engine stopped unexpectedly; ending path subscriptions")
        let (paths, hosts) = lifecycle.withLock { _ in
            state.withLock { state -> ([SourceSink<NetworkPath>], [HostTracker]) in
                guard state.run === run else { return ([], []) }
                defer {
                    state.run = nil
                    state.paths = [:]
                    state.hosts = [:]
                }
                return (state.paths.values.map(\.sink), Array(state.hosts.values))
            }
        }
        run.stop()
        let error = KernelPathSourceError.engineStopped
        for sink in paths { sink.finish(throwing: error) }
        for tracker in hosts { tracker.finish(throwing: error) }
    }
}

extension KernelPathSource.State {
    /// The policy targets the observer must resolve for the path subscribers.
    var targets: [String] {
        Array(Set(paths.values.compactMap(\.evaluator.policy.target))).sorted()
    }

    /// The host names the observer's resolver must follow for the host trackers.
    var hostNames: [String] {
        Array(Set(hosts.values.map(\.host))).sorted()
    }
}

extension KernelPathSource {
    /// Connects a run's ``HostResolver`` (made before the run) to the run's queue.
    final class Doorbell: Sendable {
        private let action = Mutex<(@Sendable () -> Void)?>(nil)

        func connect(_ ring: @escaping @Sendable () -> Void) { action.withLock { $0 = ring } }

        func ring() { action.withLock { $0 }?() }
    }
}

/// Why a ``KernelPathSource`` ended a subscription.
///
/// ```swift
/// if monitor.failure as? KernelPathSourceError == .engineStopped { monitor.start(queue: .main) }
/// ```
public struct KernelPathSourceError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The netlink engine's thread stopped on its own (a failed `poll`); see the log.
    ///
    /// ```swift
    /// let stopped = KernelPathSourceError.engineStopped
    /// ```
    public static let engineStopped = KernelPathSourceError(.engineStopped)

    private enum Base: Hashable, Sendable {
        case engineStopped
    }

    private let base: Base

    private init(_ base: Base) { self.base = base }

    /// What happened, for people.
    ///
    /// ```swift
    /// print(error.description)
    /// ```
    public var description: String {
        switch base {
        case .engineStopped: return "the netlink engine stopped unexpectedly"
        }
    }
}

extension KernelPathSource {
    /// One start-to-stop period of the engine and the queue its changes are evaluated on.
    final class Run: Sendable {
        let observer: SystemObserver
        let queue = DispatchQueue(label: "netpath.kernel-path-source")
        private let flags = Mutex<(pending: Bool, stopping: Bool)>((false, false))
        private let resumeWatch = Mutex<Task<Void, Never>?>(nil)

        init(observer: SystemObserver) {
            self.observer = observer
            queue.setSpecific(key: runKey, value: id)
        }

        private var id: Int { ObjectIdentifier(self).hashValue }

        var isStopping: Bool { flags.withLock { $0.stopping } }

        /// What one evaluation needs: the classified state and, for host lookups, the engine that
        /// asks the kernel for routes and the resolver's answers.
        struct Reading: Sendable {
            var state: SystemState
            var engine: NetlinkEngine?
            var hosts: HostResolver?
        }

        /// Reads the engine's current state and classifies it. Call on ``queue`` only: reads in
        /// queue order are in kernel order.
        func read() -> Reading {
            let snapshot = observer.engine.snapshot()
            return Reading(state: observer.update(from: snapshot).state, engine: observer.engine, hosts: observer.hosts)
        }

        /// Schedules `work` on the queue unless it is already scheduled: a burst of snapshots
        /// becomes one evaluation of the newest state.
        func ring(_ work: @escaping @Sendable () -> Void) {
            let schedule = flags.withLock { flags in
                defer { flags.pending = true }
                return !flags.pending
            }
            guard schedule else { return }
            queue.async { [self] in
                flags.withLock { $0.pending = false }
                work()
            }
        }

        /// Compares the boot clocks until ``stop()``; after a suspend, says so through `log` and
        /// asks the engine to read the kernel's state again.
        func watchForResume(_ options: Options, log: @escaping @Sendable (Duration) -> Void) {
            let task = Task.detached { [self, options] in
                await ResumeDetector.watch(options.bootClocks, every: options.resumeCheckInterval) { slept in
                    log(slept)
                    observer.engine.requestDump(because: "resumed from suspend")
                }
            }
            resumeWatch.withLock { $0 = task }
        }

        /// Runs `body` on the queue and returns its result; inline when already on it (a sink
        /// that subscribes again), which `sync` would deadlock on.
        func onQueue<T: Sendable>(_ body: @Sendable () -> T) -> T {
            if DispatchQueue.getSpecific(key: runKey) == id { return body() }
            return queue.sync(execute: body)
        }

        /// Stops the engine: its thread is joined and its sockets closed before this returns.
        func stop() {
            flags.withLock { $0.stopping = true }
            resumeWatch.withLock { $0?.cancel() }
            observer.stop()
            // Its threads end at once, or when a lookup in progress returns.
            observer.hosts?.stop()
        }
    }
}

// The key that tells a run's queue apart, so that `onQueue` can detect re-entrance.
private let runKey = DispatchSpecificKey<Int>()
