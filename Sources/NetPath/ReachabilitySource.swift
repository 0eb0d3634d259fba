// SPDX-License-Identifier: Apache-2.0

/// Where a ``HostMonitor`` gets its answers: the kernel's routing table, or a script in a test.
///
/// The contract mirrors ``PathSource``: `subscribe(toHost:sink:)` returns at once with the current
/// ``HostReachability`` as the subscription's initial value, then sends each later, different
/// value to the sink, in order, until the subscription is cancelled.
///
/// ## Implementing a source
///
/// Resolve a host name no more often than the network changes, never send a packet to the host,
/// and report a name that does not resolve as ``HostReachability/Status/unresolved``, not as
/// unreachable.
///
/// ```swift
/// struct NeverReachable: ReachabilitySource {
///     func subscribe(toHost host: String, sink: SourceSink<HostReachability>) throws -> SourceSubscription<HostReachability> {
///         SourceSubscription(initialValue: HostReachability(host: host, status: .unreachable))
///     }
/// }
/// ```
public protocol ReachabilitySource: Sendable {
    /// Starts following whether `host` (a name or an address literal) is reachable.
    ///
    /// - Returns: the subscription; its ``SourceSubscription/initialValue`` is the answer now.
    /// - Throws: when the source cannot start.
    func subscribe(toHost host: String, sink: SourceSink<HostReachability>) throws -> SourceSubscription<
        HostReachability
    >
}

/// A ``ReachabilitySource`` made of a closure.
///
/// ```swift
/// let lab = ClosureReachabilitySource { host, _ in
///     SourceSubscription(initialValue: HostReachability(host: host, status: .unresolved))
/// }
/// ```
public struct ClosureReachabilitySource: ReachabilitySource {
    private let body: @Sendable (String, SourceSink<HostReachability>) throws -> SourceSubscription<HostReachability>

    /// A source that runs `body` for each subscription.
    ///
    /// ```swift
    /// let nowhere = ClosureReachabilitySource { host, _ in SourceSubscription(initialValue: HostReachability(host: host, status: .unreachable)) }
    /// ```
    public init(
        _ body:
            @escaping @Sendable (String, SourceSink<HostReachability>) throws -> SourceSubscription<HostReachability>
    ) {
        self.body = body
    }

    /// Runs the closure.
    ///
    /// ```swift
    /// let answer = try nowhere.subscribe(toHost: "192.0.2.1", sink: .discarding).initialValue
    /// ```
    public func subscribe(
        toHost host: String,
        sink: SourceSink<HostReachability>
    ) throws -> SourceSubscription<HostReachability> {
        try body(host, sink)
    }
}
