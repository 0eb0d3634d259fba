// SPDX-License-Identifier: Apache-2.0

import Glibc

/// Descriptors 0, 1 and 2 of a process that runs hooks (`netpathd`, `netpathctl simulate
/// --run-hooks`).
package enum StandardDescriptors {
    /// Opens `/dev/null` on each of descriptors 0, 1 and 2 that is closed (a start by hand with
    /// `<&-`), before anything else is opened: call it first thing in `main`.
    ///
    /// Otherwise the process's next descriptors take those numbers. Started so, libdispatch's
    /// epoll, eventfd and timerfd became 0, 1 and 2: the log went into the eventfd, and a hook's
    /// pipe could take a number the spawn then `dup2`s onto another stream
    /// (AgentStandardDescriptorsTests, SimulateRunHooksTests).
    package static func openClosed() {
        for descriptor: Int32 in 0...2 where fcntl(descriptor, F_GETFD) < 0 && errno == EBADF {
            // The lowest free number: `descriptor` itself, as the ones below it are open by now.
            // Should /dev/null not open, there is nowhere to say so: the descriptor stays closed.
            let null = open("/dev/null", O_RDWR)
            if null >= 0 && null != descriptor {
                dup2(null, descriptor)
                close(null)
            }
        }
    }
}
