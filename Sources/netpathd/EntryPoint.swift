import Dispatch
import Glibc

/// The process entry point: runs `Netpathd.main` (ArgumentParser parses, runs the command, and
/// on an error prints it and exits with its status) in a task while the main thread waits for it.
///
/// Not an `async` main on purpose. Swift's async main ends the main thread with `dispatch_main()`,
/// that is `pthread_exit()`, whose forced unwind binary-searches the executable's unwind tables
/// (`.eh_frame_hdr`, `.eh_frame`) and leaves about 0.5 MB of them resident for the life of the
/// process (BENCHMARKS.md, idle RSS). Signals arrive as before: SIGHUP and SIGTERM through
/// ServiceLifecycle's dispatch sources. Nothing in netpathd needs the main actor or the
/// main queue, which nobody drains here.
@main
enum EntryPoint {
    static func main() {
        openClosedStandardDescriptors()
        let finished = DispatchSemaphore(value: 0)
        // Detached: `main()` is on the main actor, and a plain `Task` would inherit it and wait for
        // the main queue forever.
        Task.detached {
            await Netpathd.main(nil)
            finished.signal()
        }
        finished.wait()
        exit(0)
    }

    /// Opens `/dev/null` on each of descriptors 0, 1 and 2 that is closed (`netpathd <&-`), before
    /// anything else is opened. Otherwise the agent's next descriptors would take those numbers: its
    /// log would go wherever descriptor 2 then leads, and a hook's pipe ending up as 0, 1 or 2 would
    /// be moved onto the wrong stream by the spawn's `dup2`s (AgentStandardDescriptorsTests).
    private static func openClosedStandardDescriptors() {
        for descriptor: Int32 in 0...2 where fcntl(descriptor, F_GETFD) < 0 && errno == EBADF {
            // The lowest free number: `descriptor` itself, as the ones below it are open by now.
            let null = open("/dev/null", O_RDWR)
            if null >= 0 && null != descriptor {
                dup2(null, descriptor)
                close(null)
            }
        }
    }
}
