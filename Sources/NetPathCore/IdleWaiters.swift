// SPDX-License-Identifier: Apache-2.0

/// Tasks waiting for a dispatcher to go idle, each for its own part of it (`Scope`): a pure list
/// that the dispatcher keeps inside its lock, asks for the ready waiters whenever work ends, and
/// resumes them outside the lock. Hooks and plugins share it.
package struct IdleWaiters<Scope: Sendable>: Sendable {
    private var waiting: [(scope: Scope, continuation: CheckedContinuation<Void, Never>)] = []

    package init() {}

    /// How many wait.
    package var count: Int { waiting.count }

    /// Adds a waiter for `scope`.
    package mutating func append(_ continuation: CheckedContinuation<Void, Never>, for scope: Scope) {
        waiting.append((scope, continuation))
    }

    /// Removes and returns the waiters whose scope `isIdle` says is idle, to be resumed outside
    /// the lock.
    package mutating func takeReady(_ isIdle: (Scope) -> Bool) -> [CheckedContinuation<Void, Never>] {
        var ready: [CheckedContinuation<Void, Never>] = []
        waiting.removeAll { waiter in
            guard isIdle(waiter.scope) else { return false }
            ready.append(waiter.continuation)
            return true
        }
        return ready
    }
}

extension IdleWaiters where Scope == Void {
    /// Adds a waiter.
    package mutating func append(_ continuation: CheckedContinuation<Void, Never>) {
        append(continuation, for: ())
    }
}
