import Synchronization

/// Waits for an operation or a deadline, whichever comes first, and returns at that moment.
///
/// A task group would not do: it waits for all its children before returning, and an operation
/// that cannot be cancelled (waiting for a hung plugin to go idle) would hold the caller with it.
/// Here the operation keeps running in its own task after the deadline and finishes, or not, on
/// its own; the caller moves on.
enum Deadline {
    /// Resumes a continuation exactly once, from whichever side gets there first.
    private final class Once: Sendable {
        private let continuation: Mutex<CheckedContinuation<Bool, Never>?>

        init(_ continuation: CheckedContinuation<Bool, Never>) {
            self.continuation = Mutex(continuation)
        }

        func resume(_ value: Bool) {
            let taken = continuation.withLock { stored in
                defer { stored = nil }
                return stored
            }
            taken?.resume(returning: value)
        }
    }

    /// - Returns: `true` when `operation` finished within `limit`.
    static func race(_ limit: Duration, _ operation: @escaping @Sendable () async -> Void) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let once = Once(continuation)
            let work = Task {
                await operation()
                once.resume(true)
            }
            Task {
                try? await Task.sleep(for: limit)
                once.resume(false)
                // Not awaited on purpose; cancelling lets a cancellable operation stop early.
                work.cancel()
            }
        }
    }
}
