// SPDX-License-Identifier: Apache-2.0

/// Where a ``PathMonitor`` gets its paths: the kernel, a running agent, or a script in a test.
///
/// A source has one job: given a ``PathPolicy``, report the ``NetworkPath`` that policy sees now,
/// and then every later one, until the subscription is cancelled. ``KernelPathSource`` evaluates
/// the kernel's state in this process; `MockPathSource` (in `NetPathTesting`) plays a script.
///
/// ## Implementing a source
///
/// `subscribe(to:sink:)` must return without waiting for a change: the subscription's
/// ``SourceSubscription/initialValue`` is the path at that moment. After that, call the sink's
/// ``SourceSink/yield(_:)`` for each later path, in order, one call at a time, and
/// ``SourceSink/finish(throwing:)`` once if the source can no longer deliver (an agent went away).
/// Consecutive equal paths may be sent; monitors drop them. Stop calling the sink once the
/// subscription is cancelled, and release what it held (threads, sockets) then. Many
/// subscriptions should share one underlying feed: a monitor may be iterated many times at once.
///
/// ```swift
/// /// Always satisfied through one wired interface: a stand-in for a demo.
/// struct AlwaysWired: PathSource {
///     func subscribe(to policy: PathPolicy, sink: SourceSink<NetworkPath>) throws -> SourceSubscription<NetworkPath> {
///         let eth0 = NetworkPath.PathInterface(name: "eth0", index: 2, type: .wired)
///         return SourceSubscription(initialValue: NetworkPath(policy: policy.name, status: .satisfied, availableInterfaces: [eth0]))
///     }
/// }
/// let monitor = PathMonitor(policy: .default, source: AlwaysWired())
/// ```
///
/// The requirement is synchronous, not `async`, so that ``PathMonitor/start(queue:)`` can make
/// ``PathMonitor/currentPath`` available by the time it returns, as Apple's `start(queue:)` is
/// synchronous too. A source that needs time to start (a netlink dump, a socket handshake) may
/// block briefly; monitors call it off Swift's cooperative pool when they iterate.
public protocol PathSource: Sendable {
    /// Starts following the path of `policy`.
    ///
    /// - Parameters:
    ///   - policy: the requirement to evaluate (types, metered treatment, preference, target).
    ///   - sink: receives each later path, in order, until the subscription is cancelled.
    /// - Returns: the subscription; its ``SourceSubscription/initialValue`` is the current path.
    /// - Throws: when the source cannot start (no netlink access, no agent, …).
    func subscribe(to policy: PathPolicy, sink: SourceSink<NetworkPath>) throws -> SourceSubscription<NetworkPath>
}

extension PathSource {
    /// The path `policy` sees right now, without following it.
    ///
    /// ```swift
    /// let path = try KernelPathSource.shared.currentPath(for: .default)
    /// ```
    public func currentPath(for policy: PathPolicy = .default) throws -> NetworkPath {
        let subscription = try subscribe(to: policy, sink: .discarding)
        defer { subscription.cancel() }
        return subscription.initialValue
    }
}

/// A ``PathSource`` made of a closure: for adapters and quick stand-ins.
///
/// ```swift
/// let fixed = ClosurePathSource { policy, _ in
///     SourceSubscription(initialValue: NetworkPath(policy: policy.name, status: .unsatisfied, unsatisfiedReason: .noInterface))
/// }
/// ```
public struct ClosurePathSource: PathSource {
    private let body: @Sendable (PathPolicy, SourceSink<NetworkPath>) throws -> SourceSubscription<NetworkPath>

    /// A source that runs `body` for each subscription.
    ///
    /// ```swift
    /// let offline = ClosurePathSource { policy, _ in SourceSubscription(initialValue: .unsatisfied(policy: policy.name)) }
    /// ```
    public init(
        _ body: @escaping @Sendable (PathPolicy, SourceSink<NetworkPath>) throws -> SourceSubscription<NetworkPath>
    ) {
        self.body = body
    }

    /// Runs the closure.
    ///
    /// ```swift
    /// let path = try offline.currentPath(for: .default)
    /// ```
    public func subscribe(
        to policy: PathPolicy,
        sink: SourceSink<NetworkPath>
    ) throws -> SourceSubscription<NetworkPath> {
        try body(policy, sink)
    }
}
