// SPDX-License-Identifier: Apache-2.0

import FoundationEssentials
import NetPathCore
import Synchronization

/// One observation of the host: the ``SystemState`` and when and why it was taken.
package struct SystemUpdate: Sendable {
    package var state: SystemState
    /// When the kernel messages behind it were read.
    package var time: Date
    package var cause: KernelSnapshot.Cause
    package var statistics: EngineStatistics
    #if NETPATH_BENCH
        /// When the engine handed the snapshot out, and the routes it held: for `make bench`
        /// only (``KernelSnapshot/publishedAt``).
        package var publishedAt = Date()
        package var routeCount = 0
    #endif
    /// The snapshot's generation: increases by one per snapshot the engine publishes.
    package var generation: UInt64
}

/// The kernel, observed: a ``NetlinkEngine`` whose snapshots are classified into ``SystemState``s.
///
/// ```swift
/// let observer = SystemObserver()
/// for await update in try observer.start() { print(update.state.interfaces.map(\.name)) }
/// ```
///
/// Policy targets that are host names are resolved in one of two ways. Without a
/// ``HostResolver``, ``update(from:)`` calls `getaddrinfo` for each, on the caller's thread:
/// fine for a one-shot reading, never on a loop that must keep up with the kernel. With one, it
/// only reads the resolver's current answers (a name not answered yet is
/// ``SystemState/TargetReachability/Resolution/pending``), and asks the resolver to look the
/// names up again when the path to the name servers changes: a default route, the kernel's
/// route to the internet, or the name servers themselves. The resolver can also follow names that
/// are not targets (``setFollowedHosts(_:)``: a library's host monitors), refreshed on the same
/// changes.
package final class SystemObserver: Sendable {
    package let engine: NetlinkEngine
    private let builder: Mutex<SystemStateBuilder>
    /// The builder's watch on `resolv.conf`, which the engine follows: a change of the DNS
    /// servers alone is an update too.
    private let watch: FileChangeWatch
    private let names: Mutex<Names>
    private let resolver = TargetResolver()
    /// Resolves host-name targets off the caller's thread; `nil` resolves them inline.
    package let hosts: HostResolver?
    /// What the last update's lookups depended on; a change asks ``hosts`` to look up again.
    private let lookupPath = Mutex<LookupPath?>(nil)

    /// The names the resolver follows: the targets, and others an owner asked for.
    private struct Names {
        var targets: [String]
        var others: [String] = []

        var all: [String] { Array(Set(targets + others)).sorted() }
    }

    /// The parts of a state that decide where a DNS query goes and what it can reach.
    private struct LookupPath: Equatable {
        var defaultRoutes: [Int32: [DefaultRoute]]
        var kernelRoutes: [KernelRoute]
        var dnsServers: [IPAddress]
    }

    /// - Parameters:
    ///   - engine: the netlink engine to follow.
    ///   - builder: classification, sysfs root and resolv.conf path.
    ///   - targets: policy targets whose reachability each state carries.
    ///   - hosts: resolves host-name targets off the caller's thread; `nil` resolves them with
    ///     `getaddrinfo` inside ``update(from:)``.
    package init(
        engine: NetlinkEngine = NetlinkEngine(),
        builder: SystemStateBuilder = SystemStateBuilder(),
        targets: [String] = [],
        hosts: HostResolver? = nil
    ) {
        self.engine = engine
        var builder = builder
        let watch = builder.resolvConfWatch ?? FileChangeWatch(path: builder.resolvConfPath)
        builder.resolvConfWatch = watch
        self.watch = watch
        self.builder = Mutex(builder)
        self.names = Mutex(Names(targets: targets))
        self.hosts = hosts
        hosts?.follow(targets)
    }

    /// Replaces the classification overrides (a config reload); applies from the next update.
    package func setOverrides(_ overrides: [InterfaceOverride]) {
        builder.withLock { $0.classifier = InterfaceClassifier(overrides: overrides) }
    }

    /// Replaces the targets (a config reload); applies from the next update.
    package func setTargets(_ newTargets: [String]) {
        // Under the lock: concurrent callers cannot leave the resolver following an older set.
        names.withLock { names in
            names.targets = newTargets
            hosts?.follow(names.all)
        }
    }

    /// Has ``hosts`` resolve `names` besides the targets (they are not evaluated as targets; read
    /// their answers from ``hosts``), and look them up again on the same path changes. Without a
    /// resolver it does nothing.
    package func setFollowedHosts(_ newNames: [String]) {
        names.withLock { names in
            names.others = newNames
            hosts?.follow(names.all)
        }
    }

    /// Starts the engine. The first update is the initial dump, available at once.
    package func start() throws(NetlinkError) -> AsyncMapSequence<AsyncStream<KernelSnapshot>, SystemUpdate> {
        try startEngine().map { [self] snapshot in self.update(from: snapshot) }
    }

    /// Starts the engine, following the `resolv.conf` the updates read as well: its raw
    /// snapshots, for an owner that builds updates when it chooses (``update(from:)``).
    package func startEngine() throws(NetlinkError) -> AsyncStream<KernelSnapshot> {
        try engine.start(watching: watch)
    }

    /// Starts the engine, following the `resolv.conf` the updates read as well, handing its raw
    /// snapshots to `delivery` on the engine's thread (``NetlinkEngine/start(delivering:watching:)``).
    package func startEngine(delivering delivery: SnapshotDelivery) throws(NetlinkError) {
        try engine.start(delivering: delivery, watching: watch)
    }

    /// Starts the engine, whose own thread builds each update, starting with the initial dump,
    /// and hands it to `handle`: nothing sits between the kernel and the caller, not even a
    /// thread hop (`netpathctl monitor --local`). `handle` runs on the engine's thread, so what it
    /// does delays the engine's next read; a caller that may block long wants ``start()``.
    /// `finished` is called once the engine has stopped.
    package func start(
        handling handle: @escaping @Sendable (SystemUpdate) -> Void,
        finished: @escaping @Sendable () -> Void
    ) throws(NetlinkError) {
        try startEngine(
            delivering: SnapshotDelivery(
                deliver: { [self] snapshot in handle(update(from: snapshot)) },
                finish: finished
            )
        )
    }

    /// Builds the update for one snapshot (also used to classify the first snapshot synchronously).
    package func update(from snapshot: KernelSnapshot) -> SystemUpdate {
        let (wanted, following) = names.withLock { ($0.targets, !$0.targets.isEmpty || !$0.others.isEmpty) }
        var reachability: [String: SystemState.TargetReachability] = [:]
        // Asked of the kernel only when routing changed since the last question; otherwise the
        // engine's answers are read back (NetlinkEngine.targetRoutes(to:)).
        for target in wanted { reachability[target] = self.reachability(of: target) }
        let state = builder.withLock { $0.state(from: snapshot, targets: reachability) }
        if let hosts, following {
            let path = LookupPath(
                defaultRoutes: snapshot.defaultRoutes,
                kernelRoutes: snapshot.kernelRoutes,
                dnsServers: state.dnsServers
            )
            let previous = lookupPath.withLock { stored in
                defer { stored = path }
                return stored
            }
            // The first update only records the path: the first lookups are under way already.
            if let previous, previous != path { hosts.refresh() }
        }
        var update = SystemUpdate(
            state: state,
            time: snapshot.receivedAt,
            cause: snapshot.cause,
            statistics: snapshot.statistics,
            generation: snapshot.generation
        )
        #if NETPATH_BENCH
            update.publishedAt = snapshot.publishedAt
            update.routeCount = snapshot.routeCount
        #endif
        return update
    }

    private func reachability(of target: String) -> SystemState.TargetReachability {
        let routes = { [engine] (address: IPAddress) in engine.targetRoutes(to: address) }
        guard let hosts else { return resolver.reachability(of: target, routes: routes) }
        switch hosts.answer(for: target) {
        case .resolved(let addresses): return resolver.reachability(of: addresses, routes: routes)
        case .pending: return .init(addresses: [], routes: [], resolution: .pending)
        case .failed(let error): return .init(addresses: [], routes: [], resolution: .failed(reason: error.reason))
        }
    }

    /// Stops the engine; the sequence from ``start()`` ends.
    package func stop() { engine.stop() }
}
