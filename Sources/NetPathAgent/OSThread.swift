import Glibc

/// A plain OS thread for the agent's socket loops, which block in poll(2) and so must stay off
/// Swift's cooperative pool (two threads on the target machines).
///
/// pthreads rather than Foundation's `Thread`: the agent links only FoundationEssentials, which
/// keeps full Foundation (several MiB resident) out of netpathd and netpathctl.
enum OSThread {
    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Starts `body` on a new detached thread; returns whether the thread could be created.
    @discardableResult
    static func detach(_ body: @escaping @Sendable () -> Void) -> Bool {
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
            return false
        }
        pthread_detach(thread)
        return true
    }

    /// Runs `body`, which may block (a connect with a timeout, a thread join, a dump of the
    /// kernel's tables), on a thread of its own, and returns its result without holding one of
    /// the cooperative pool's threads meanwhile.
    ///
    /// Should no thread be available, `body` runs on the caller's: late is better than never.
    static func run<T: Sendable, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, E>, Never>) in
            let started = detach { continuation.resume(returning: Result(catching: body)) }
            if !started { continuation.resume(returning: Result(catching: body)) }
        }
        return try result.get()
    }
}
