// SPDX-License-Identifier: Apache-2.0

import TestSupport
import Testing

@testable import NetPathDispatch

/// The hook slots without processes: the limit, the order of waiters, and slow runs that stop
/// counting.
@Suite(.serialSuite)
struct HookSlotsTests {
    /// `body`'s result, or a failure naming `what` when it takes longer than `limit`.
    static func within<T: Sendable>(
        _ limit: Duration,
        _ what: String,
        _ body: @escaping @Sendable () async -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { await body() }
            group.addTask {
                try await Task.sleep(for: limit)
                return nil
            }
            defer { group.cancelAll() }
            guard let result = try await group.next() ?? nil else {
                throw TestFailure("\(what) did not happen within \(limit)")
            }
            return result
        }
    }

    /// Waits until `slots` has `count` waiters.
    static func waiters(_ slots: HookSlots, _ count: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(5)
        while slots.waiting < count {
            guard ContinuousClock.now < deadline else {
                throw TestFailure("\(count) acquirers were not waiting within 5 s (\(slots.waiting) were)")
            }
            await Task.yield()
        }
    }

    @Test("a released slot goes to the oldest waiter, and the limit holds meanwhile")
    func releasedSlotsGoInArrivalOrder() async throws {
        let slots = HookSlots(limit: 1, slowAfter: .seconds(60))
        let first = await slots.acquire()
        let second = Task { await slots.acquire() }
        try await Self.waiters(slots, 1)
        let third = Task { await slots.acquire() }
        try await Self.waiters(slots, 2)
        #expect(slots.counted == 1)
        slots.release(first)
        // The second acquirer, who came first, gets the slot; the third still waits.
        let secondLease = try await Self.within(.seconds(5), "the second acquire") { await second.value }
        #expect(slots.waiting == 1, "the third acquirer got a slot beyond the limit, or before the second")
        slots.release(secondLease)
        slots.release(try await Self.within(.seconds(5), "the third acquire") { await third.value })
        #expect(slots.counted == 0)
    }

    @Test("a run going for slowAfter stops counting: its slot goes to a waiter without a release, once")
    func slowRunsStopCounting() async throws {
        let slowAfter = Duration.seconds(1)
        let slots = HookSlots(limit: 1, slowAfter: slowAfter)
        let hung = await slots.acquire()
        let started = ContinuousClock.now
        let next = try await Self.within(.seconds(10), "an acquire behind a slow run") { await slots.acquire() }
        #expect(ContinuousClock.now - started >= slowAfter)
        // The slow run ends now: its lease no longer counts, so it frees nothing, and the
        // limit still holds against the run that took its place.
        slots.release(hung)
        #expect(slots.counted == 1)
        let waiter = Task { await slots.acquire() }
        try await Self.waiters(slots, 1)
        slots.release(next)
        slots.release(try await Self.within(.seconds(5), "the acquire after a release") { await waiter.value })
    }
}
