import Synchronization

/// A counting semaphore for tasks: bounds how many hooks run at once. Waiters are served in
/// arrival order. Waiting is not cancellable: the dispatcher checks cancellation before it
/// waits, and every permit is returned within a hook's timeout.
final class AsyncSemaphore: Sendable {
    private struct State {
        var permits: Int
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Mutex<State>

    init(permits: Int) {
        state = Mutex(State(permits: max(1, permits)))
    }

    func acquire() async {
        let granted = state.withLock { state in
            guard state.permits > 0 else { return false }
            state.permits -= 1
            return true
        }
        if granted { return }
        await withCheckedContinuation { continuation in
            let now = state.withLock { state in
                // A permit may have come back between the two locks.
                if state.permits > 0 {
                    state.permits -= 1
                    return true
                }
                state.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    func release() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiters.isEmpty {
                state.permits += 1
                return nil
            }
            return state.waiters.removeFirst()
        }
        waiter?.resume()
    }
}
