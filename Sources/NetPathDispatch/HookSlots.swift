// SPDX-License-Identifier: Apache-2.0

import Synchronization

/// Bounds how many hook runs start at once, without letting hung runs hold the bound.
///
/// A run holds a slot from ``acquire()`` until ``release(_:)`` or until it has been running for
/// `slowAfter`, whichever comes first: a run still going by then is presumed slow or hung and
/// stops counting. Why not a plain semaphore: with one, `limit` hooks hung on as many subjects
/// (interfaces, policies) held every slot until their timeout, and every other subject's hooks
/// waited with them; a hung hook may delay only its own subject.
///
/// What is still bounded: at any moment at most `limit` runs younger than `slowAfter` hold a
/// slot, so runs start at most `limit` per `slowAfter` while slots are scarce; every run ends
/// within its timeout (plus the runner's graces); and a subject runs one hook at a time. The
/// number of hook processes is therefore at most the number of busy subjects, and at most about
/// `limit × longest run / slowAfter`.
///
/// Waiters are served in arrival order. Waiting is not cancellable: the dispatcher checks
/// cancellation (and its own stop flag, which it owns) before it waits and after a wait, and
/// every slot comes back within `slowAfter`.
final class HookSlots: Sendable {
    /// One run's claim on a slot; give it back with ``release(_:)``.
    struct Lease: Hashable, Sendable {
        fileprivate let id: UInt64
        /// Whether the run waited for it (another run had to end or turn slow first): what was
        /// checked before the wait is as old as the wait.
        let waited: Bool
    }

    private struct Waiter {
        var id: UInt64
        var continuation: CheckedContinuation<Lease, Never>
    }

    private struct State {
        /// The leases that count against the limit, with the moment each was granted.
        var counted: [UInt64: ContinuousClock.Instant] = [:]
        var waiters: [Waiter] = []
        var lastID: UInt64 = 0
        /// Whether a timer task is sleeping until the oldest counted lease turns slow. There is
        /// one only while someone waits, so a run costs no timer when slots are free.
        var timerArmed = false

        mutating func nextID() -> UInt64 {
            lastID += 1
            return lastID
        }

        /// Stops counting the leases granted `slowAfter` or longer before `now`.
        mutating func expire(now: ContinuousClock.Instant, slowAfter: Duration) {
            // Usually no run is slow, and an idle dispatcher counts none: then no new dictionary
            // (filtering made one on every claim, on each hook's way to its spawn).
            guard counted.values.contains(where: { now - $0 >= slowAfter }) else { return }
            counted = counted.filter { now - $0.value < slowAfter }
        }

        /// A slot now, when the limit allows one.
        mutating func claim(limit: Int, slowAfter: Duration) -> Lease? {
            let now = ContinuousClock.now
            expire(now: now, slowAfter: slowAfter)
            guard counted.count < limit else { return nil }
            let id = nextID()
            counted[id] = now
            return Lease(id: id, waited: false)
        }

        /// Grants waiters, oldest first, while the limit allows.
        mutating func grant(limit: Int, now: ContinuousClock.Instant) -> [(CheckedContinuation<Lease, Never>, Lease)] {
            var granted: [(CheckedContinuation<Lease, Never>, Lease)] = []
            while counted.count < limit, !waiters.isEmpty {
                let waiter = waiters.removeFirst()
                counted[waiter.id] = now
                granted.append((waiter.continuation, Lease(id: waiter.id, waited: true)))
            }
            return granted
        }

        /// When the timer should fire next, arming it; `nil` when it is armed or not needed.
        mutating func armTimer(slowAfter: Duration) -> ContinuousClock.Instant? {
            guard !timerArmed, !waiters.isEmpty, let oldest = counted.values.min() else { return nil }
            timerArmed = true
            return oldest + slowAfter
        }
    }

    /// The most runs counted at once.
    let limit: Int
    /// How long a run counts.
    let slowAfter: Duration
    private let state = Mutex(State())

    init(limit: Int, slowAfter: Duration) {
        self.limit = max(1, limit)
        self.slowAfter = max(.milliseconds(1), slowAfter)
    }

    /// Waits for a slot: one is free, a run releases one, or a run turns slow.
    func acquire() async -> Lease {
        // The common case, a free slot, returns without suspending: the dispatcher spawns the
        // hook on the caller's thread (see its discussion).
        if let lease = acquireNow() { return lease }
        return await withCheckedContinuation { continuation in
            let (lease, timer) = state.withLock { state -> (Lease?, ContinuousClock.Instant?) in
                // A slot may have come back between the two locks.
                if let lease = state.claim(limit: limit, slowAfter: slowAfter) { return (lease, nil) }
                state.waiters.append(Waiter(id: state.nextID(), continuation: continuation))
                return (nil, state.armTimer(slowAfter: slowAfter))
            }
            if let lease { continuation.resume(returning: lease) }
            if let timer { startTimer(until: timer) }
        }
    }

    /// A slot now, when one is free; `nil` when the run would have to wait for one. (The
    /// dispatcher spawns an idle subject's first hook before its worker task exists, so without
    /// a task to suspend.)
    func acquireNow() -> Lease? {
        state.withLock { $0.claim(limit: limit, slowAfter: slowAfter) }
    }

    /// Gives a slot back. A lease that already stopped counting changes nothing.
    func release(_ lease: Lease) {
        let granted = state.withLock { state in
            guard state.counted.removeValue(forKey: lease.id) != nil else {
                return [(CheckedContinuation<Lease, Never>, Lease)]()
            }
            return state.grant(limit: limit, now: .now)
        }
        for (continuation, lease) in granted { continuation.resume(returning: lease) }
    }

    /// Acquirers waiting for a slot (tests).
    var waiting: Int { state.withLock { $0.waiters.count } }

    /// Runs currently counted against the limit (tests).
    var counted: Int {
        state.withLock { state in
            state.expire(now: .now, slowAfter: slowAfter)
            return state.counted.count
        }
    }

    /// Sleeps until `deadline`, then stops counting the runs that turned slow and serves
    /// waiters; sleeps again while some still wait.
    private func startTimer(until deadline: ContinuousClock.Instant) {
        Task {
            var deadline = deadline
            while true {
                // Not cancellable: nothing cancels it, and it ends as soon as nobody waits.
                try? await Task.sleep(until: deadline, clock: .continuous)
                let now = ContinuousClock.now
                let (granted, next) = state.withLock { state in
                    state.timerArmed = false
                    state.expire(now: now, slowAfter: slowAfter)
                    let granted = state.grant(limit: limit, now: now)
                    return (granted, state.armTimer(slowAfter: slowAfter))
                }
                for (continuation, lease) in granted { continuation.resume(returning: lease) }
                guard let next else { return }
                deadline = next
            }
        }
    }
}
