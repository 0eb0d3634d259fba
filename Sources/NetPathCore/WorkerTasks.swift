// SPDX-License-Identifier: Apache-2.0

import Synchronization

/// The worker tasks of a per-subject dispatcher (hooks, plugins): one is started whenever
/// `SubjectQueues.enqueue(_:)` (NetPathQueues) says a subject needs one, and each is tracked
/// until it ends, so that a shutdown can cancel the workers still running and wait for them.
package final class WorkerTasks: Sendable {
    private struct State {
        var tasks: [UInt64: Task<Void, Never>] = [:]
        /// Started and not yet ended (a worker can end before its task is stored).
        var live: Set<UInt64> = []
        var last: UInt64 = 0
    }

    private let state = Mutex(State())

    package init() {}

    /// Workers started and not yet ended.
    package var running: Int { state.withLock { $0.live.count } }

    /// Starts `body` as an unstructured task: a worker outlives whoever handed it work, and a
    /// hung call in it never holds up the caller.
    ///
    /// - Parameter immediate: run `body` on the calling thread up to its first suspension
    ///   (`Task.immediate`): the hook dispatcher's worker begins there to wait for the hook the
    ///   dispatcher has just spawned (feeding its stdin), without waiting for the scheduler to
    ///   wake another thread.
    package func start(immediate: Bool = false, _ body: @escaping @Sendable () async -> Void) {
        let id = state.withLock { state in
            state.last += 1
            state.live.insert(state.last)
            return state.last
        }
        let work: @Sendable () async -> Void = {
            await body()
            self.state.withLock { state in
                state.live.remove(id)
                state.tasks[id] = nil
            }
        }
        let task = immediate ? Task.immediate(operation: work) : Task(operation: work)
        state.withLock { state in
            if state.live.contains(id) { state.tasks[id] = task }
        }
    }

    /// Cancels the workers running now and waits until they have ended.
    package func cancelAll() async {
        let tasks = state.withLock { Array($0.tasks.values) }
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
    }
}
