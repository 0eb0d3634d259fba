// SPDX-License-Identifier: Apache-2.0

import Foundation

/// Resumes a continuation once, from whichever side comes first: what a bounded wait for
/// something that cannot be cancelled (a thread blocked in a system call) races against a timer.
///
/// ```swift
/// let once = OnceBox<Bool>()
/// let done = await withCheckedContinuation { continuation in
///     once.set(continuation)
///     Thread { work(); once.resume(true) }.start()
///     Task { try? await Task.sleep(for: .seconds(5)); once.resume(false) }
/// }
/// ```
public final class OnceBox<Value: Sendable>: @unchecked Sendable {
    // @unchecked: every access goes through the lock.
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Value, Never>?

    public init() {}

    /// The continuation to resume; set it before anything may call ``resume(_:)``.
    public func set(_ continuation: CheckedContinuation<Value, Never>) {
        lock.withLock { self.continuation = continuation }
    }

    /// Resumes with `value` the first time; later calls do nothing.
    public func resume(_ value: Value) {
        let taken = lock.withLock { () -> CheckedContinuation<Value, Never>? in
            defer { continuation = nil }
            return continuation
        }
        taken?.resume(returning: value)
    }
}
