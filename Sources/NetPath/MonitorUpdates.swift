// SPDX-License-Identifier: Apache-2.0

import Dispatch

/// The values of a monitor as an `AsyncSequence`: ``PathMonitor/paths``, ``HostMonitor/updates``.
///
/// Monitoring starts when an iteration asks for its first element and stops when the iteration
/// ends: the task is cancelled, the loop is left, or the iterator is released. Each iteration
/// has its own subscription to the monitor's source; sources share one underlying feed (one
/// netlink subscription for ``KernelPathSource``), so iterating many times at once is cheap.
///
/// ```swift
/// for await path in PathMonitor().paths {
///     print(path.status, path.primary?.name ?? "-")
/// }
/// ```
///
/// - The first element is the source's current value at the moment the iteration started (its
///   first `next()`), delivered without waiting for a change — even if it equals the value a
///   previous iteration ended with.
/// - Every later element differs from the one before it: consecutive duplicates are dropped.
/// - A consumer that falls more than ``bufferLimit`` values behind skips the oldest of them;
///   the newest value is never skipped, so the last element seen is always the current one.
/// - If the source cannot start, or ends (``SourceSink/finish(throwing:)``), the iteration ends;
///   the monitor's `failure` property says why.
public struct MonitorUpdates<Value: Sendable & Equatable>: AsyncSequence, Sendable {
    /// The values: ``NetworkPath`` or ``HostReachability``.
    ///
    /// ```swift
    /// let paths: MonitorUpdates<NetworkPath> = monitor.paths
    /// ```
    public typealias Element = Value
    /// Iterations never throw: a source that fails ends the iteration (see the monitor's `failure`).
    ///
    /// ```swift
    /// for await path in monitor.paths { print(path) }  // no `try`
    /// ```
    public typealias Failure = Never

    /// How many undelivered values an iteration keeps before it drops the oldest.
    ///
    /// ```swift
    /// print(MonitorUpdates<NetworkPath>.bufferLimit)  // 64
    /// ```
    public static var bufferLimit: Int { 64 }

    let subscribe: @Sendable (SourceSink<Value>) throws -> SourceSubscription<Value>
    let observe: @Sendable (Value) -> Void
    let failed: @Sendable (any Error) -> Void

    init(
        subscribe: @escaping @Sendable (SourceSink<Value>) throws -> SourceSubscription<Value>,
        observe: @escaping @Sendable (Value) -> Void = { _ in },
        failed: @escaping @Sendable (any Error) -> Void = { _ in }
    ) {
        self.subscribe = subscribe
        self.observe = observe
        self.failed = failed
    }

    /// A new iteration; it subscribes to the source on its first `next()`.
    ///
    /// ```swift
    /// var iterator = monitor.paths.makeAsyncIterator()
    /// let now = await iterator.next()
    /// ```
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(updates: self)
    }

    /// An iteration: holds the subscription while it runs; releasing it cancels the subscription.
    ///
    /// ```swift
    /// var iterator = monitor.paths.makeAsyncIterator()
    /// ```
    public struct AsyncIterator: AsyncIteratorProtocol {
        /// The values.
        ///
        /// ```swift
        /// let value: MonitorUpdates<NetworkPath>.AsyncIterator.Element? = await iterator.next()
        /// ```
        public typealias Element = Value
        /// Never throws.
        ///
        /// ```swift
        /// let next = await iterator.next()  // no `try`
        /// ```
        public typealias Failure = Never

        private let updates: MonitorUpdates
        private var started = false
        private var subscription: SourceSubscription<Value>?
        private var stream: AsyncStream<Value>.Iterator?
        private var last: Value?
        /// Counts the values the consumer is done with (see ``DeliveryCount``).
        private let deliveries = DeliveryCount()
        /// A yielded value was returned and the consumer has not come back for the next one yet.
        private var outstanding = false

        init(updates: MonitorUpdates) {
            self.updates = updates
        }

        /// The next value; `nil` once the iteration has ended. The first call subscribes and
        /// returns the current value at once.
        ///
        /// ```swift
        /// let current = await iterator.next()
        /// let change = await iterator.next()
        /// ```
        public mutating func next() async -> Value? {
            if !started {
                started = true
                return await begin()
            }
            guard let subscription else { return nil }
            // Asking again means the consumer is done with the value returned last.
            if outstanding {
                outstanding = false
                deliveries.handled()
            }
            while let value = await stream?.next() {
                guard value != last else {
                    deliveries.handled()
                    continue
                }
                last = value
                updates.observe(value)
                outstanding = true
                return value
            }
            // Cancelled, or the source finished: let go of the subscription at once.
            subscription.cancel()
            self.subscription = nil
            stream = nil
            return nil
        }

        private mutating func begin() async -> Value? {
            let (values, continuation) = AsyncStream<Value>.makeStream(
                bufferingPolicy: .bufferingNewest(MonitorUpdates.bufferLimit)
            )
            let failed = updates.failed
            let deliveries = deliveries
            let sink = SourceSink<Value>(
                deliveries: deliveries,
                onFinish: { error in
                    if let error { failed(error) }
                    continuation.finish()
                },
                onValue: { value in
                    // A value the stream will never hand out is handled already.
                    switch continuation.yield(value) {
                    case .enqueued: break
                    case .dropped, .terminated: deliveries.handled()
                    @unknown default: break
                    }
                }
            )
            let subscribe = updates.subscribe
            // A source may block while it starts (the netlink dump, a first DNS lookup): do that
            // on a Dispatch thread, not on one of the few threads of Swift's cooperative pool.
            let result: Result<SourceSubscription<Value>, any Error> = await withCheckedContinuation { done in
                subscribeQueue.async { done.resume(returning: Result { try subscribe(sink) }) }
            }
            switch result {
            case .failure(let error):
                updates.failed(error)
                return nil
            case .success(let subscription):
                guard !Task.isCancelled else {
                    subscription.cancel()
                    return nil
                }
                self.subscription = subscription
                stream = values.makeAsyncIterator()
                last = subscription.initialValue
                updates.observe(subscription.initialValue)
                return subscription.initialValue
            }
        }
    }
}

/// Where iterations and one-shot queries start their subscriptions. A custom queue runs on
/// Dispatch's overcommitting threads, so a blocking start never starves Swift's cooperative pool.
let subscribeQueue = DispatchQueue(label: "netpath.subscribe", attributes: .concurrent)
