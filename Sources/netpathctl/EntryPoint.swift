// SPDX-License-Identifier: Apache-2.0

import Dispatch
import Glibc
import NetPathCore

/// The process entry point: runs `Netpathctl.main` (ArgumentParser parses, runs the command, and
/// on an error prints it and exits with its status) in a task while the main thread waits for it.
///
/// Not an `async` main on purpose. Swift's async main ends the main thread with `dispatch_main()`,
/// that is `pthread_exit()`, whose forced unwind binary-searches the executable's unwind tables
/// (`.eh_frame_hdr`, `.eh_frame`) and leaves them resident for the life of the process, memory the
/// idle target has no room for (BENCHMARKS.md, "Idle RSS, step by step"). Nothing in netpathctl
/// needs the main actor or the main queue, which nobody drains here.
@main
enum EntryPoint {
    static func main() {
        StandardDescriptors.openClosed()
        let finished = DispatchSemaphore(value: 0)
        // Detached: `main()` is on the main actor, and a plain `Task` would inherit it and wait for
        // the main queue forever.
        Task.detached {
            if CommandLine.arguments.dropFirst().first == Netpathctl.WaitOnline.configuration.commandName {
                waitOnline()
            }
            await Netpathctl.main(nil)
            finished.signal()
        }
        finished.wait()
        exit(0)
    }

    /// `wait-online` exits as nm-online does: 0 online, 1 timed out, 2 for everything else,
    /// a bad option included (ArgumentParser's own status for that is 64).
    static func waitOnline() -> Never {
        do {
            var command = try Netpathctl.parseAsRoot()
            try command.run()
            exit(0)
        } catch {
            if Netpathctl.exitCode(for: error) == .validationFailure {
                FileOutput.write(Netpathctl.fullMessage(for: error) + "\n", to: 2)
                exit(2)
            }
            Netpathctl.exit(withError: error)
        }
    }
}
