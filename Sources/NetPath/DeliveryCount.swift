// SPDX-License-Identifier: Apache-2.0

import Dispatch
import Synchronization

/// The values a source yielded to one consumer's sink, and how many of them the consumer has
/// handled: a handler returned, an iteration came back for the next value, or the value was
/// dropped (a duplicate, a full buffer, a cancelled start).
///
/// `MockPathSource` waits on it so that a test can send a path and then assert on what the code
/// under test did with it, without polling. The monitors count; sources only yield.
package final class DeliveryCount: Sendable {
    private struct State {
        var yielded = 0
        var handled = 0
        var nextWaiter = 0
        var waiters: [Int: (target: Int, continuation: CheckedContinuation<Bool, Never>)] = [:]
    }

    private let state = Mutex(State())

    package init() {}

    /// Values yielded and not yet handled.
    package var pending: Int { state.withLock { $0.yielded - $0.handled } }

    /// A value was yielded to the sink.
    func yielded() { state.withLock { $0.yielded += 1 } }

    /// The consumer is done with one yielded value.
    func handled() {
        let ready = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.handled += 1
            let done = state.waiters.filter { $0.value.target <= state.handled }
            for id in done.keys { state.waiters[id] = nil }
            return done.values.map(\.continuation)
        }
        for continuation in ready { continuation.resume(returning: true) }
    }

    /// Waits until every value yielded so far has been handled; `false` when `timeout` passed first.
    package func waitUntilHandled(timeout: Duration) async -> Bool {
        await withCheckedContinuation { continuation in
            let id = state.withLock { state -> Int? in
                guard state.handled < state.yielded else { return nil }
                state.nextWaiter += 1
                state.waiters[state.nextWaiter] = (state.yielded, continuation)
                return state.nextWaiter
            }
            guard let id else { return continuation.resume(returning: true) }
            let (seconds, attoseconds) = timeout.components
            let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [self] in
                let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
                waiter?.continuation.resume(returning: false)
            }
        }
    }
}
