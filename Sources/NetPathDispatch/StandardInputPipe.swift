// SPDX-License-Identifier: Apache-2.0

import NetPathCore
#if canImport(Glibc)
    import Glibc
#endif

/// A hook's stdin: a pipe whose read end the hook gets, and whose write end the runner feeds
/// without ever waiting for a hook that does not read.
///
/// The write end is non-blocking: the runner writes what the pipe takes right after the spawn
/// (an event's line is a few KiB; the pipe holds 64 KiB), and the thread that waits for the hook
/// writes the rest as the hook reads it (``SpawnedHook``). The write end is closed once
/// everything is written — the hook then reads end of file — or when the hook closes its end or
/// exits; a hook that never reads stdin costs nothing.
struct StandardInputPipe: Sendable {
    /// The hook's end; the runner closes its copy once the hook is spawned.
    let readEnd: Int32
    /// The runner's end; -1 once closed.
    private(set) var writeEnd: Int32
    /// What is still to be written.
    private(set) var pending: ArraySlice<UInt8> = []

    /// Both ends are close-on-exec from the start (np_pipe_cloexec says why); the read end is
    /// blocking, as a hook expects its stdin to be.
    static func open() throws(SystemCallError) -> StandardInputPipe {
        let ends = try HookPipes.openPipe("stdin", nonBlocking: .write)
        return StandardInputPipe(readEnd: ends.read, writeEnd: ends.write)
    }

    /// Whether the write end is still open: something is left to write.
    var isOpen: Bool { writeEnd >= 0 }

    /// Starts writing `bytes`: writes what the pipe takes now (see ``flush()``).
    mutating func feed(_ bytes: [UInt8]) {
        pending = bytes[...]
        flush()
    }

    /// Writes pending bytes until the pipe is full; closes the write end when nothing is left,
    /// or when the hook closed its end (EPIPE: SIGPIPE is ignored in the agent, HookRunner).
    mutating func flush() {
        guard isOpen else { return }
        while !pending.isEmpty {
            let written = pending.withUnsafeBytes { write(writeEnd, $0.baseAddress, $0.count) }
            if written > 0 {
                pending = pending.dropFirst(written)
            } else if written < 0 && errno == EINTR {
                continue
            } else if written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                return
            } else {
                break  // EPIPE: the hook will not read any more
            }
        }
        abandon()
    }

    /// Closes the write end, whatever is left: the hook reads end of file.
    mutating func abandon() {
        guard isOpen else { return }
        close(writeEnd)
        writeEnd = -1
        pending = []
    }
}
