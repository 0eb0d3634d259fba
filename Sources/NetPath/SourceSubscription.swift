// SPDX-License-Identifier: Apache-2.0

import Synchronization

/// A running subscription to a source: the value at the moment it began, and a way to stop it.
///
/// A source returns one from `subscribe`; the consumer keeps it while it wants values and calls
/// ``cancel()`` (or drops it) to stop. Cancelling is idempotent and never blocks on the consumer.
///
/// ```swift
/// let subscription = try source.subscribe(to: .default, sink: SourceSink { print($0) })
/// print(subscription.initialValue)   // known at once: no "unknown until the first callback"
/// subscription.cancel()
/// ```
///
/// - Important: a value the source was already delivering when ``cancel()`` was called may still
///   reach the sink; consumers that must not see it after cancelling check their own state.
public final class SourceSubscription<Value: Sendable>: Sendable {
    /// The value when the subscription began.
    ///
    /// ```swift
    /// let now = subscription.initialValue
    /// ```
    public let initialValue: Value
    private let onCancel: Mutex<(@Sendable () -> Void)?>

    /// A subscription whose cancellation runs `onCancel` exactly once.
    ///
    /// - Parameters:
    ///   - initialValue: the current value, returned to the subscriber at once.
    ///   - onCancel: releases what the subscription holds (a netlink subscription, a socket, …).
    ///
    /// ```swift
    /// SourceSubscription(initialValue: path) { socket.close() }
    /// ```
    public init(initialValue: Value, onCancel: @escaping @Sendable () -> Void = {}) {
        self.initialValue = initialValue
        self.onCancel = Mutex(onCancel)
    }

    deinit { cancel() }

    /// Whether ``cancel()`` has been called.
    ///
    /// ```swift
    /// subscription.cancel()
    /// assert(subscription.isCancelled)
    /// ```
    public var isCancelled: Bool { onCancel.withLock { $0 == nil } }

    /// Stops the subscription. Idempotent; also done when the subscription is released.
    ///
    /// ```swift
    /// subscription.cancel()
    /// ```
    public func cancel() {
        let action = onCancel.withLock { action in
            defer { action = nil }
            return action
        }
        action?()
    }
}
