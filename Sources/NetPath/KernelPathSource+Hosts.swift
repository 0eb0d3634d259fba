import Dispatch
import NetPathCore
import NetPathLinux
import Synchronization

extension KernelPathSource: ReachabilitySource {
    /// Follows whether the kernel has a route to `host`, through which interface, and whether
    /// it is metered — by looking up the mirrored routing table: no packet is sent.
    ///
    /// A host name is resolved (with the source's `resolve`, `getaddrinfo` by default) when the
    /// subscription starts and again only when the default policy's path changes, on a private
    /// queue, so a slow resolver never delays path deliveries. An address literal is never
    /// resolved. Route changes are re-evaluated against the addresses already resolved.
    ///
    /// ```swift
    /// let subscription = try KernelPathSource.shared.subscribe(toHost: "192.0.2.80", sink: SourceSink { print($0.status) })
    /// print(subscription.initialValue.interface?.name ?? "no route")
    /// ```
    public func subscribe(
        toHost host: String,
        sink: SourceSink<HostReachability>
    ) throws -> SourceSubscription<HostReachability> {
        let tracker = HostTracker(host: host, sink: sink, resolve: resolve)
        let (id, run) = try register { state in
            let id = state.makeID()
            state.hosts[id] = tracker
            return id
        }
        // The first evaluation is queued on the tracker before any later delivery can be (both
        // happen on the run's queue), so the tracker sees readings in kernel order.
        run.onQueue { tracker.start(run.read(includingTable: true)) }
        let initial = tracker.initialValue()
        return SourceSubscription(initialValue: initial) { [self] in unregister(id) }
    }
}

/// Follows one host for a ``KernelPathSource``: resolves it once per path change and looks up its
/// routes in each reading, on its own serial queue.
final class HostTracker: Sendable {
    let host: String
    private let sink: SourceSink<HostReachability>
    private let resolve: @Sendable (String) -> [IPAddress]
    private let queue: DispatchQueue
    private let literal: IPAddress?
    private let state = Mutex<State>(State())

    private struct State {
        /// The newest reading not yet evaluated; newer readings replace older ones.
        var pending: KernelPathSource.Run.Reading?
        var scheduled = false
        /// Set by ``start(_:)``: readings distributed before it are older than the first one.
        var started = false
        var initial: HostReachability?
        var last: HostReachability?
        /// The resolved addresses and the default path they were resolved under.
        var addresses: [IPAddress]?
        var resolvedUnder: NetworkPath?
        var cancelled = false
    }

    // The default policy's path decides when a name is resolved again: a new primary interface
    // or a new DNS reachability can mean new answers; a route tweak cannot.
    private static let pathEvaluator = PathEvaluator(policy: .default)

    init(host: String, sink: SourceSink<HostReachability>, resolve: @escaping @Sendable (String) -> [IPAddress]) {
        self.host = host
        self.sink = sink
        self.resolve = resolve
        self.literal = IPAddress(host)
        self.queue = DispatchQueue(label: "netpath.host-tracker")
    }

    /// Queues the first evaluation; ``initialValue()`` waits for it. Called on the run's queue.
    func start(_ reading: KernelPathSource.Run.Reading) {
        state.withLock { $0.started = true }
        queue.async { [self] in
            let value = evaluate(reading)
            state.withLock {
                $0.initial = value
                $0.last = value
            }
        }
    }

    /// The first evaluation's result. Blocks until it is done (a host name's first resolution).
    func initialValue() -> HostReachability {
        queue.sync { state.withLock { $0.initial! } }
    }

    /// Queues a reading; called on the run's queue for every change.
    func update(_ reading: KernelPathSource.Run.Reading) {
        let schedule = state.withLock { state in
            guard state.started, !state.cancelled else { return false }
            state.pending = reading
            defer { state.scheduled = true }
            return !state.scheduled
        }
        guard schedule else { return }
        queue.async { [self] in
            let reading = state.withLock { state in
                defer {
                    state.pending = nil
                    state.scheduled = false
                }
                return state.pending
            }
            guard let reading else { return }
            let value = evaluate(reading)
            let deliver = state.withLock { state in
                guard !state.cancelled, value != state.last else { return false }
                state.last = value
                return true
            }
            if deliver { sink.yield(value) }
        }
    }

    func cancel() { state.withLock { $0.cancelled = true } }

    func finish(throwing error: any Error) {
        cancel()
        sink.finish(throwing: error)
    }

    /// Runs on ``queue``: resolves if the path changed, then asks the table.
    private func evaluate(_ reading: KernelPathSource.Run.Reading) -> HostReachability {
        let addresses: [IPAddress]
        if let literal {
            addresses = [literal]
        } else {
            let path = Self.pathEvaluator.path(for: reading.state)
            let cached = state.withLock { $0.resolvedUnder == path ? $0.addresses : nil }
            if let cached {
                addresses = cached
            } else {
                addresses = resolve(host)
                state.withLock {
                    $0.addresses = addresses
                    $0.resolvedUnder = path
                }
            }
        }
        let table = reading.table ?? KernelTable()
        return HostReachability.evaluate(host: host, addresses: addresses, state: reading.state) { address in
            table.routesCovering(address).map { index, route in
                SystemState.TargetRoute(
                    interfaceIndex: index,
                    prefixLength: route.destinationLength,
                    metric: route.metric,
                    gateway: route.nexthops.first { $0.interfaceIndex == index }?.gateway
                )
            }
        }
    }
}
