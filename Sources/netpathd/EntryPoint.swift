// SPDX-License-Identifier: Apache-2.0

import Dispatch
import Glibc
import NetPathCore

/// The process entry point: runs `Netpathd.main` (ArgumentParser parses, runs the command, and
/// on an error prints it and exits with its status) in a task while the main thread waits for it.
///
/// Not an `async` main on purpose. Swift's async main ends the main thread with `dispatch_main()`,
/// that is `pthread_exit()`, whose forced unwind binary-searches the executable's unwind tables
/// (`.eh_frame_hdr`, `.eh_frame`) and leaves them resident for the life of the process, memory the
/// idle target has no room for (BENCHMARKS.md, "Idle RSS, step by step"). Signals arrive as
/// before: SIGHUP and SIGTERM through ServiceLifecycle's dispatch sources. Nothing in netpathd
/// needs the main actor or the main queue, which nobody drains here.
@main
enum EntryPoint {
    static func main() {
        StandardDescriptors.openClosed()
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
}
