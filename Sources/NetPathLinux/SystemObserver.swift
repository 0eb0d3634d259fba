import FoundationEssentials
import NetPathCore
import Synchronization

/// One observation of the host: the ``SystemState`` and when and why it was taken.
public struct SystemUpdate: Sendable {
    public var state: SystemState
    /// When the kernel messages behind it were read.
    public var time: Date
    /// When the engine handed the snapshot out.
    public var publishedAt: Date
    public var cause: KernelSnapshot.Cause
    public var statistics: EngineStatistics
    public var routeCount: Int
    /// The snapshot's generation: increases by one per snapshot the engine publishes.
    public var generation: UInt64
}

/// The kernel, observed: a ``NetlinkEngine`` whose snapshots are classified into ``SystemState``s.
///
/// ```swift
/// let observer = SystemObserver()
/// for await update in try observer.start() { print(update.state.interfaces.map(\.name)) }
/// ```
public final class SystemObserver: Sendable {
    public let engine: NetlinkEngine
    private let builder: Mutex<SystemStateBuilder>
    private let targets: Mutex<[String]>
    private let resolver = TargetResolver()

    /// - Parameters:
    ///   - engine: the netlink engine to follow.
    ///   - builder: classification, sysfs root and resolv.conf path.
    ///   - targets: policy targets whose reachability each state carries.
    public init(
        engine: NetlinkEngine = NetlinkEngine(),
        builder: SystemStateBuilder = SystemStateBuilder(),
        targets: [String] = []
    ) {
        self.engine = engine
        self.builder = Mutex(builder)
        self.targets = Mutex(targets)
    }

    /// Replaces the classification overrides (a config reload); applies from the next update.
    public func setOverrides(_ overrides: [InterfaceOverride]) {
        builder.withLock { $0.classifier = InterfaceClassifier(overrides: overrides) }
    }

    /// Replaces the targets (a config reload); applies from the next update.
    public func setTargets(_ newTargets: [String]) {
        targets.withLock { $0 = newTargets }
    }

    /// Starts the engine. The first update is the initial dump, available at once.
    public func start() throws(NetlinkError) -> AsyncMapSequence<AsyncStream<KernelSnapshot>, SystemUpdate> {
        let snapshots = try engine.start()
        return snapshots.map { [self] snapshot in self.update(from: snapshot) }
    }

    /// Builds the update for one snapshot (also used to classify the first snapshot synchronously).
    public func update(from snapshot: KernelSnapshot) -> SystemUpdate {
        let wanted = targets.withLock { $0 }
        var reachability: [String: SystemState.TargetReachability] = [:]
        if !wanted.isEmpty {
            let table = engine.table()
            for target in wanted { reachability[target] = resolver.reachability(of: target, in: table) }
        }
        let state = builder.withLock { $0.state(from: snapshot, targets: reachability) }
        return SystemUpdate(
            state: state,
            time: snapshot.receivedAt,
            publishedAt: snapshot.publishedAt,
            cause: snapshot.cause,
            statistics: snapshot.statistics,
            routeCount: snapshot.routeCount,
            generation: snapshot.generation
        )
    }

    /// Stops the engine; the sequence from ``start()`` ends.
    public func stop() { engine.stop() }
}
