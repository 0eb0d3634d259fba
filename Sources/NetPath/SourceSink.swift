// SPDX-License-Identifier: Apache-2.0

/// Where a source sends the values that follow a subscription's initial value.
///
/// A ``PathSource`` or ``ReachabilitySource`` receives a sink when it is subscribed to, and calls
/// ``yield(_:)`` for every later value and ``finish(throwing:)`` once if it can deliver no more.
/// The consumer (``PathMonitor``, ``HostMonitor``, or your own code) decides what the sink does.
///
/// ```swift
/// let sink = SourceSink<NetworkPath> { path in print("now", path.status) }
/// let subscription = try KernelPathSource.shared.subscribe(to: .default, sink: sink)
/// print("at first", subscription.initialValue.status)
/// ```
///
/// - Important: a source calls a sink from one context at a time, in order, and never with a
///   value older than the subscription's ``SourceSubscription/initialValue``. Calls may begin
///   before `subscribe` has returned.
public struct SourceSink<Value: Sendable>: Sendable {
    private let onValue: @Sendable (Value) -> Void
    private let onFinish: @Sendable ((any Error)?) -> Void
    /// How many of the values yielded the consumer has handled: set by the monitors' own sinks,
    /// so that `MockPathSource` can await delivery; `nil` for sinks made with the public init.
    package let deliveries: DeliveryCount?

    /// A sink that calls `onValue` with each value and `onFinish` when the source ends.
    ///
    /// - Parameters:
    ///   - onFinish: called at most once, with the error that ended the source, or `nil`.
    ///   - onValue: called with each value after the initial one.
    ///
    /// ```swift
    /// let sink = SourceSink<NetworkPath>(onFinish: { print("ended:", $0 as Any) }) { print($0.status) }
    /// ```
    public init(
        onFinish: @escaping @Sendable ((any Error)?) -> Void = { _ in },
        onValue: @escaping @Sendable (Value) -> Void
    ) {
        self.onValue = onValue
        self.onFinish = onFinish
        self.deliveries = nil
    }

    /// A sink whose consumer reports to `deliveries` each value it has handled.
    package init(
        deliveries: DeliveryCount,
        onFinish: @escaping @Sendable ((any Error)?) -> Void,
        onValue: @escaping @Sendable (Value) -> Void
    ) {
        self.onValue = onValue
        self.onFinish = onFinish
        self.deliveries = deliveries
    }

    /// A sink that ignores everything: for a one-shot read of the initial value.
    ///
    /// ```swift
    /// let now = try source.subscribe(to: .default, sink: .discarding).initialValue
    /// ```
    public static var discarding: SourceSink { SourceSink { _ in } }

    /// Delivers a value that follows the ones before it.
    ///
    /// ```swift
    /// sink.yield(.unsatisfied(.noInterface))
    /// ```
    public func yield(_ value: Value) {
        // Counted first: the consumer can never report more handled than were yielded.
        deliveries?.yielded()
        onValue(value)
    }

    /// Tells the consumer that no more values will come, and why (`nil`: an orderly end).
    ///
    /// ```swift
    /// sink.finish(throwing: AgentGone())
    /// ```
    public func finish(throwing error: (any Error)? = nil) { onFinish(error) }
}
