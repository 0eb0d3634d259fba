// SPDX-License-Identifier: Apache-2.0

import Glibc
import SystemPackage

/// A plain OS thread, for loops that block in `poll(2)` (the netlink engine, the control and
/// metrics servers) and for work that must move into a network namespace: both must stay off
/// Swift's cooperative pool (two threads on the target machines), and a thread that called
/// `setns` must never run anyone else's task afterwards.
///
/// pthreads rather than Foundation's `Thread`: the agent links only FoundationEssentials, which
/// keeps full Foundation (several MiB resident) out of netpathd and netpathctl. The one place
/// netpath creates threads: the agent, the library and the probe helper alike.
package enum OSThread {
    private final class Body {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }

    /// Starts `body` on a new joinable thread: the caller must `pthread_join` it.
    ///
    /// - Returns: the thread, or the `pthread_create` error.
    package static func start(_ body: @escaping @Sendable () -> Void) -> Result<pthread_t, Errno> {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(
            &thread,
            nil,
            { raw in
                Unmanaged<Body>.fromOpaque(raw!).takeRetainedValue().run()
                return nil
            },
            context
        )
        guard created == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            return .failure(Errno(rawValue: created))
        }
        return .success(thread)
    }

    /// Starts `body` on a new detached thread; returns whether the thread could be created.
    @discardableResult
    package static func detach(_ body: @escaping @Sendable () -> Void) -> Bool {
        guard case .success(let thread) = start(body) else { return false }
        pthread_detach(thread)
        return true
    }

    /// Runs `body`, which may block (a connect with a timeout, a thread join, a dump of the
    /// kernel's tables), on a thread of its own, and returns its result without holding one of
    /// the cooperative pool's threads meanwhile.
    ///
    /// Should no thread be available, `body` runs on the caller's: late is better than never.
    package static func run<T: Sendable, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) async throws(E)
        -> T
    {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, E>, Never>) in
            let started = detach { continuation.resume(returning: Result(catching: body)) }
            if !started { continuation.resume(returning: Result(catching: body)) }
        }
        return try result.get()
    }
}
