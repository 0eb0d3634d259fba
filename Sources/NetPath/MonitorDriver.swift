// SPDX-License-Identifier: Apache-2.0

import Dispatch
import Synchronization

/// The `start(queue:)` / `cancel()` half of a monitor, shared by ``PathMonitor`` and
/// ``HostMonitor``: one subscription at a time, values handed to a handler on a queue.
///
/// Each start gets a new generation. A value is delivered only if its generation is still the
/// current one when the queue runs it, so after `cancel()` returns no handler call begins, and
/// values from a cancelled start never reach a restarted monitor.
final class MonitorDriver<Value: Sendable & Equatable>: Sendable {
    typealias Subscribe = @Sendable (SourceSink<Value>) throws -> SourceSubscription<Value>

    private enum Phase {
        case idle
        case starting
        case running(SourceSubscription<Value>)
    }

    private struct State {
        var generation: UInt64 = 0
        var phase = Phase.idle
        var queue: DispatchQueue?
        /// The last value handed to the queue in this generation: consecutive duplicates are dropped.
        var last: Value?
        /// The newest value seen by the handler delivery or any iteration.
        var current: Value?
        var handler: (@Sendable (Value) -> Void)?
        var failure: (any Error)?
    }

    private let subscribe: Subscribe
    /// Called on the queue after the handler, with each delivered value (the notification).
    private let announce: @Sendable (Value) -> Void
    private let state = Mutex(State())

    init(subscribe: @escaping Subscribe, announce: @escaping @Sendable (Value) -> Void) {
        self.subscribe = subscribe
        self.announce = announce
    }

    var current: Value? { state.withLock { $0.current } }
    var queue: DispatchQueue? { state.withLock { $0.queue } }
    var failure: (any Error)? { state.withLock { $0.failure } }

    var isRunning: Bool {
        state.withLock {
            if case .idle = $0.phase { return false }
            return true
        }
    }

    var handler: (@Sendable (Value) -> Void)? {
        get { state.withLock { $0.handler } }
        set { state.withLock { $0.handler = newValue } }
    }

    /// Records a value an iteration delivered.
    func observe(_ value: Value) { state.withLock { $0.current = value } }

    /// Records why an iteration ended early.
    func record(_ error: any Error) { state.withLock { $0.failure = error } }

    /// Subscribes and queues the initial value. Does nothing if already started. Returns the error
    /// when the source cannot start.
    @discardableResult
    func start(queue: DispatchQueue) -> (any Error)? {
        let generation: UInt64? = state.withLock { state in
            guard case .idle = state.phase else { return nil }
            state.generation += 1
            state.phase = .starting
            state.queue = queue
            state.last = nil
            state.failure = nil
            return state.generation
        }
        guard let generation else { return nil }
        let deliveries = DeliveryCount()
        let sink = SourceSink<Value>(
            deliveries: deliveries,
            onFinish: { [weak self] error in self?.finished(error, generation: generation) },
            onValue: { [weak self] value in
                guard let self else { return deliveries.handled() }
                self.deliver(value, generation: generation, deliveries: deliveries)
            }
        )
        let subscription: SourceSubscription<Value>
        do {
            subscription = try subscribe(sink)
        } catch {
            state.withLock { state in
                guard state.generation == generation else { return }
                state.phase = .idle
                state.queue = nil
                state.failure = error
            }
            return error
        }
        let current = state.withLock { state -> Bool in
            guard state.generation == generation else { return false }
            state.phase = .running(subscription)
            // A later value may have arrived while `subscribe` was returning; it is newer.
            if state.last == nil {
                enqueue(subscription.initialValue, generation: generation, counted: nil, in: &state)
            }
            return true
        }
        // cancel() ran while the source was starting.
        if !current { subscription.cancel() }
        return nil
    }

    /// Stops delivering and releases the subscription. Idempotent.
    func cancel() {
        let subscription = state.withLock { state -> SourceSubscription<Value>? in
            if case .idle = state.phase { return nil }
            defer {
                state.generation += 1
                state.phase = .idle
                state.queue = nil
            }
            if case .running(let subscription) = state.phase { return subscription }
            return nil
        }
        subscription?.cancel()
    }

    private func deliver(_ value: Value, generation: UInt64, deliveries: DeliveryCount) {
        let queued = state.withLock { state in
            guard state.generation == generation else { return false }
            return enqueue(value, generation: generation, counted: deliveries, in: &state)
        }
        if !queued { deliveries.handled() }
    }

    /// Queues `value` for the handler unless it repeats the last one; returns whether it did.
    /// `counted` (a yielded value's count, `nil` for the initial value) learns when it is handled.
    @discardableResult
    private func enqueue(_ value: Value, generation: UInt64, counted: DeliveryCount?, in state: inout State) -> Bool {
        guard value != state.last, let queue = state.queue else { return false }
        state.last = value
        state.current = value
        queue.async { [self] in
            defer { counted?.handled() }
            let (current, handler) = self.state.withLock { ($0.generation == generation, $0.handler) }
            guard current else { return }
            handler?(value)
            announce(value)
        }
        return true
    }

    private func finished(_ error: (any Error)?, generation: UInt64) {
        state.withLock { state in
            guard state.generation == generation else { return }
            state.generation += 1
            state.phase = .idle
            state.queue = nil
            state.failure = error
        }
    }
}
