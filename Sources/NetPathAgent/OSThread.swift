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
}
