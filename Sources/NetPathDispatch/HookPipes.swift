// SPDX-License-Identifier: Apache-2.0

import CLinux
import NetPathCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The three pipes of one hook run: its stdin (``StandardInputPipe``), stdout and stderr.
///
/// Made ahead of the run that takes them (``SparePipes``), so that three `pipe2` calls are not
/// on the agent's way from a change to the hook's spawn (BENCHMARKS.md, "Three `pipe2` calls"):
/// nothing in a pipe depends on the hook it will serve.
struct HookPipes: Sendable {
    /// The hook's stdin.
    var input: StandardInputPipe
    /// stdout: the runner reads `read` (non-blocking); the hook gets `write`.
    var output: (read: Int32, write: Int32)
    /// stderr, likewise.
    var error: (read: Int32, write: Int32)

    /// Every end close-on-exec (np_pipe_cloexec says why); the runner's read ends non-blocking,
    /// the hook's ends blocking, as a program expects its standard streams to be.
    static func make() throws(SystemCallError) -> HookPipes {
        var input = try StandardInputPipe.open()
        let output: (read: Int32, write: Int32)
        do { output = try pipe("stdout") } catch {
            close(input.readEnd)
            input.abandon()
            throw error
        }
        do {
            return HookPipes(input: input, output: output, error: try pipe("stderr"))
        } catch {
            close(input.readEnd)
            input.abandon()
            close(output.read)
            close(output.write)
            throw error
        }
    }

    /// Closes every descriptor (pipes that will not be used).
    func discard() {
        var input = input
        close(input.readEnd)
        input.abandon()
        for fd in [output.read, output.write, error.read, error.write] { close(fd) }
    }

    private static func pipe(_ name: String) throws(SystemCallError) -> (read: Int32, write: Int32) {
        try openPipe(name, nonBlocking: .read)
    }

    /// Which end of a pipe is the agent's.
    enum End {
        case read, write
    }

    /// A pipe, both ends close-on-exec (np_pipe_cloexec says why), `nonBlocking` (the agent's
    /// end) non-blocking. The ends are two open file descriptions: O_NONBLOCK on the agent's
    /// leaves the hook's blocking, as a program expects its standard streams to be.
    static func openPipe(_ name: String, nonBlocking end: End) throws(SystemCallError) -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        guard np_pipe_cloexec(&ends) == 0 else { throw SystemCallError(operation: "pipe2 (\(name))", errno: errno) }
        let agents = end == .read ? ends[0] : ends[1]
        guard fcntl(agents, F_SETFL, fcntl(agents, F_GETFL) | O_NONBLOCK) == 0 else {
            let reason = errno
            close(ends[0])
            close(ends[1])
            throw SystemCallError(operation: "fcntl (\(name))", errno: reason)
        }
        return (ends[0], ends[1])
    }
}

/// Pipes made ahead of the hook runs that take them: a run takes a set before its spawn, and
/// the thread that waits for it makes the next set while the hook starts.
///
/// A few idle descriptors (six per set kept) keep those calls off the spawn's way; none of them
/// can reach a hook or any other program the agent starts, since every end is close-on-exec and
/// a hook gets only its own three.
final class SparePipes: Sendable {
    /// The spares of every runner in the process.
    static let shared = SparePipes(keep: 2)

    /// How many sets are kept ready.
    let keep: Int
    private let spares = Mutex<[HookPipes]>([])

    init(keep: Int) {
        self.keep = max(0, keep)
    }

    /// Sets ready now.
    var count: Int { spares.withLock { $0.count } }

    /// A set of pipes: a spare if there is one, else made now.
    func take() throws(SystemCallError) -> HookPipes {
        if let spare = spares.withLock({ $0.popLast() }) { return spare }
        return try HookPipes.make()
    }

    /// Makes sets until ``keep`` are ready (off the spawning thread). A failure (no descriptors
    /// left) leaves it short: ``take()`` makes the set then, and reports what fails.
    func refill() {
        while count < keep {
            guard let set = try? HookPipes.make() else { return }
            let surplus = spares.withLock { spares -> HookPipes? in
                guard spares.count < keep else { return set }
                spares.append(set)
                return nil
            }
            if let surplus {
                surplus.discard()
                return
            }
        }
    }
}
