// SPDX-License-Identifier: Apache-2.0

import Glibc

/// A value behind a pthread mutex, with a condition variable to sleep on until the value says so
/// or a deadline passes: what a plain thread needs to wait for work without spinning.
///
/// The deadline is on `CLOCK_MONOTONIC`, so a change of the wall clock neither wakes a sleeper
/// early nor makes it oversleep.
package final class ConditionLock<State>: @unchecked Sendable {
    // @unchecked: `state` is only touched with `mutex` held; the pthread objects are the
    // synchronisation itself.
    private var state: State
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    package init(_ state: State) {
        self.state = state
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` with the value, locked.
    package func withLock<T>(_ body: (inout State) throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }

    /// Wakes every thread in ``wait(until:for:)`` to look at the value again.
    package func broadcast() {
        pthread_mutex_lock(mutex)
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
    }

    /// Sleeps until `done` says so (checked at once, then after each ``broadcast()``) or
    /// `deadline` (monotonic nanoseconds) passes.
    package func wait(until deadline: UInt64, for done: (State) -> Bool) {
        var time = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while !done(state) {
            if pthread_cond_timedwait(condition, mutex, &time) == ETIMEDOUT { return }
        }
    }
}
