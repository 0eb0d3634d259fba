// SPDX-License-Identifier: Apache-2.0

import Synchronization

/// Runs an async operation with a deadline, without being held hostage by it.
///
/// Swift cannot kill a task: a call that ignores cancellation and never returns would block
/// anything awaiting it, including a task group (which waits for all its children). So the
/// operation runs in its own unstructured task, and the caller awaits a continuation that
/// whichever comes first resumes: the operation's end or the timer. On timeout the operation's
/// task is cancelled (a polite request) and left running; if it ever returns, `late` is told.
package enum TimedCall {
    /// How a call ended, as far as its caller is concerned.
    package enum Outcome: Sendable {
        case returned(Duration)
        case threw(any Error, Duration)
        case timedOut
    }

    package static func run(
        timeout: Duration,
        operation: @escaping @Sendable () async throws -> Void,
        late: @escaping @Sendable (Outcome) -> Void = { _ in }
    ) async -> Outcome {
        let race = Race()
        return await withCheckedContinuation { continuation in
            race.arm(continuation)
            let start = ContinuousClock.now
            let work = Task {
                let outcome: Outcome
                do {
                    try await operation()
                    outcome = .returned(ContinuousClock.now - start)
                } catch {
                    outcome = .threw(error, ContinuousClock.now - start)
                }
                if !race.finish(outcome) { late(outcome) }
            }
            let timer = Task {
                try? await Task.sleep(for: timeout)
                if Task.isCancelled { return }
                if race.finish(.timedOut) { work.cancel() }
            }
            race.setTimer(timer)
        }
    }

    /// Whether `operation` finished within `limit`. The caller moves on at the deadline either
    /// way; an operation still running keeps running on its own (cancelled, in case it listens).
    package static func finishes(within limit: Duration, _ operation: @escaping @Sendable () async -> Void) async
        -> Bool
    {
        if case .timedOut = await run(timeout: limit, operation: operation) { return false }
        return true
    }

    /// First finisher wins: resumes the caller once, and stops the timer when the call won.
    private final class Race: Sendable {
        private struct State {
            var continuation: CheckedContinuation<Outcome, Never>?
            var timer: Task<Void, Never>?
            var done = false
        }

        private let state = Mutex(State())

        func arm(_ continuation: CheckedContinuation<Outcome, Never>) {
            state.withLock { $0.continuation = continuation }
        }

        func setTimer(_ timer: Task<Void, Never>) {
            let done = state.withLock { state in
                if !state.done { state.timer = timer }
                return state.done
            }
            if done { timer.cancel() }
        }

        /// Resumes the caller with `outcome` if nobody did yet; returns whether this call did.
        func finish(_ outcome: Outcome) -> Bool {
            let (continuation, timer) = state.withLock { state in
                guard !state.done else { return (CheckedContinuation<Outcome, Never>?.none, Task<Void, Never>?.none) }
                state.done = true
                defer {
                    state.continuation = nil
                    state.timer = nil
                }
                return (state.continuation, state.timer)
            }
            guard let continuation else { return false }
            timer?.cancel()
            continuation.resume(returning: outcome)
            return true
        }
    }
}
