// SPDX-License-Identifier: Apache-2.0

import CLinux
import NetPathCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A hook process the runner spawned itself, and the waiting for its end.
///
/// Why not swift-subprocess, which did this before (hooks were netpath's only use of it, so the
/// package is no longer a dependency): `Subprocess.run` hands the spawn to a worker thread of its
/// own, and that hop, with the set-up before it, was the largest step between the kernel's
/// message and the hook's fork (BENCHMARKS.md, "swift-subprocess: set-up"), where netplug forks
/// right after reading the message. Here the thread that decided to run the hook forks it
/// (`np_spawn`: `clone` with CLONE_VFORK), with what the library gave the hook: a cleared
/// environment, every descriptor above 2 closed, default signal dispositions and no blocked
/// signals, a process group of its own, `/` as the working directory; and a pidfd to wait on, so
/// the pid is never confused with a recycled one.
///
/// After the spawn the thread yields its CPU (``yieldToStartingHook()``), so that the hook
/// starts before the agent's own work on the change goes on.
struct SpawnedHook: Sendable {
    /// Which stream a chunk of output came from.
    enum Stream: Sendable {
        case standardOutput, standardError
    }

    /// The hook's pid, which is also its process group.
    let pid: pid_t
    private let pidfd: Int32
    private let standardOutput: Int32
    private let standardError: Int32

    /// Spawns `path` on the calling thread.
    ///
    /// - Parameters:
    ///   - arguments: argv (argv[0] first).
    ///   - environment: `NAME=value` entries.
    ///   - standardInput: the hook's stdin (``StandardInputPipe/readEnd``); the caller closes
    ///     its copy.
    ///   - output: the stdout pipe (``HookPipes``): the value returned owns its read end, and
    ///     the write end is closed here, spawned or not.
    ///   - error: the stderr pipe, likewise.
    static func spawn(
        path: String,
        arguments: CStringList,
        environment: CStringList,
        directory: String,
        standardInput: Int32,
        output: (read: Int32, write: Int32),
        error: (read: Int32, write: Int32)
    ) throws(SystemCallError) -> SpawnedHook {
        // The write ends are the child's; the parent's copies close once it has them.
        defer {
            close(output.write)
            close(error.write)
        }
        var pid: pid_t = 0
        var pidfd: Int32 = -1
        var step = NP_SPAWN_CLONE
        // withCString, not the implicit conversion, which copies each string into a new array.
        let spawned = arguments.withPointers { argv in
            environment.withPointers { envp in
                path.withCString { path in
                    directory.withCString { directory in
                        np_spawn(
                            &pid,
                            &pidfd,
                            path,
                            argv,
                            envp,
                            directory,
                            standardInput,
                            output.write,
                            error.write,
                            &step
                        )
                    }
                }
            }
        }
        guard spawned == 0 else {
            close(output.read)
            close(error.read)
            throw SystemCallError(operation: Self.failedStep(step, path: path, directory: directory), errno: spawned)
        }
        yieldToStartingHook()
        return SpawnedHook(pid: pid, pidfd: pidfd, standardOutput: output.read, standardError: error.read)
    }

    /// What a failed spawn was doing: only the exec's own error is about the hook's file.
    static func failedStep(_ step: np_spawn_step, path: String, directory: String) -> String {
        let during: String? =
            switch step {
            case NP_SPAWN_EXEC: nil
            case NP_SPAWN_PROCESS_GROUP: "its own process group (setpgid)"
            case NP_SPAWN_STANDARD_STREAMS: "its standard streams (dup2)"
            case NP_SPAWN_WORKING_DIRECTORY: "its working directory \(directory) (chdir)"
            case NP_SPAWN_DESCRIPTORS: "closing the agent's other descriptors (close_range, then /proc/self/fd)"
            case NP_SPAWN_SIGNAL_MASK: "unblocking signals"
            default: "clone"
            }
        return during.map { "spawning \(path): \($0)" } ?? "spawning \(path)"
    }

    /// When the last spawn returned (`CLOCK_MONOTONIC` nanoseconds).
    private static let lastSpawn = Atomic<Int64>(0)

    /// Gives this thread's CPU away once, when the hook just spawned is the first for a while.
    ///
    /// The spawning thread resumes while the hook is still starting (at its exec), and on these
    /// machines it resumes on the hook's CPU, which it takes over: the scheduler keeps a woken
    /// task where its waker runs, even with the other CPU idle. The agent's work after a spawn
    /// (the event's log line, the change's other events) then ran before the rest of the hook's
    /// start, and delayed it (BENCHMARKS.md, "Why the yield"). The yield puts this thread
    /// behind the tasks runnable on its CPU, the hook among them, until they block or their time
    /// slice ends; with none it returns at once.
    ///
    /// Only the first spawn after 10 ms without one yields: on a CPU shared with a busy process
    /// a yield can cost the agent that process's whole time slice, and in a burst (one change,
    /// many hooks) each yield would let the hooks started first keep delaying the next spawns.
    private static func yieldToStartingHook() {
        let nanoseconds = Int64(MonotonicClock.nanoseconds)
        let previous = lastSpawn.exchange(nanoseconds, ordering: .relaxed)
        if nanoseconds - previous >= 10_000_000 { sched_yield() }
    }

    /// Calls `prepare` first, then `output` with the hook's output as it comes, until the hook
    /// exits, and writes the bytes `prepare` returned to `input` as the hook reads them (none,
    /// and end of file, for `nil`); then reads what it wrote before exiting (not what anything it
    /// left behind writes after), reaps it, and returns how it ended. Every descriptor of the
    /// run, `input`'s write end too, is closed on return.
    ///
    /// `prepare` runs on the waiting thread, before the hook can be reaped: what the run needs
    /// of the live hook, and its stdin's encoding, are done there and not on the thread that
    /// spawned it (the engine's, when it decided the change).
    ///
    /// The waiting is a `poll` on the pidfd and both pipes, on a thread of its own that ends
    /// with the run: not on Swift's cooperative pool, which it would block. (Dispatch read sources
    /// on the three descriptors, tried first, crashed libdispatch's Linux event loop under a few
    /// hundred runs in a row: AgentStormTests.)
    ///
    /// The same `poll` keeps the `deadline` (``Deadline``): no watchdog task per run, whose
    /// creation, wake-up of a pool thread and cancellation took the agent's CPU while the hook was
    /// starting on the other core (BENCHMARKS.md, "The per-run watchdog task").
    ///
    /// `fed` runs on the same thread once the hook's stdin has had its first write: work that
    /// may wait until then (the runner makes the next run's pipes there).
    func wait(
        input: StandardInputPipe,
        deadline: Deadline,
        prepare: @escaping @Sendable () -> [UInt8]?,
        fed: @escaping @Sendable () -> Void = {},
        output: @escaping @Sendable (Stream, UnsafeRawBufferPointer) -> Void
    ) async -> HookResult.Termination {
        await OSThread.run {
            self.waitBlocking(input: input, deadline: deadline, prepare: prepare, fed: fed, output: output)
        }
    }

    /// When a run has taken too long, and what then happens.
    struct Deadline: Sendable {
        /// How long the hook may run before ``expire`` is called.
        var timeout: Duration
        /// Between ``expire`` and ``kill``.
        var grace: Duration
        /// The timeout passed (the runner sends SIGTERM to the group and logs it).
        var expire: @Sendable () -> Void
        /// The grace passed too (the runner sends SIGKILL to the group).
        var kill: @Sendable () -> Void
    }

    private func waitBlocking(
        input: StandardInputPipe,
        deadline: Deadline,
        prepare: () -> [UInt8]?,
        fed: () -> Void,
        output: (Stream, UnsafeRawBufferPointer) -> Void
    ) -> HookResult.Termination {
        var input = input
        defer { input.abandon() }
        // The timeout counts from here: the hook has been spawned.
        var alarm = deadlineAfter(deadline.timeout)
        var expired = false
        if let bytes = prepare() { input.feed(bytes) } else { input.abandon() }
        fed()
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        let streams: [Stream] = [.standardOutput, .standardError]
        var descriptors = [
            pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0),
            pollfd(fd: standardOutput, events: Int16(POLLIN), revents: 0),
            pollfd(fd: standardError, events: Int16(POLLIN), revents: 0),
            // stdin's rest, while there is one (poll skips a negative descriptor).
            pollfd(fd: input.isOpen ? input.writeEnd : -1, events: Int16(POLLOUT), revents: 0),
        ]
        /// Reads `fd` until it would block (`true`) or ends (`false`), at most `limit` bytes.
        func drain(_ fd: Int32, _ stream: Stream, limit: Int) -> Bool {
            var left = limit
            while left > 0 {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, min($0.count, left)) }
                if count > 0 {
                    left -= count
                    buffer.withUnsafeBytes { output(stream, UnsafeRawBufferPointer(rebasing: $0[..<count])) }
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    return count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
                }
            }
            return true
        }
        while true {
            let ready = poll(&descriptors, nfds_t(descriptors.count), alarm?.pollTimeout() ?? -1)
            if ready < 0 {
                if errno == EINTR { continue }
                // Cannot happen with valid descriptors; end the hook rather than leave it.
                kill(-pid, SIGKILL)
                break
            }
            if let instant = alarm, ContinuousClock.now >= instant {
                if expired {
                    deadline.kill()
                    alarm = nil
                } else {
                    expired = true
                    deadline.expire()
                    alarm = deadlineAfter(deadline.grace)
                }
            }
            if ready == 0 { continue }
            // A bounded pass per wake-up: a hook that writes faster than it is read would keep an
            // unbounded pass going for ever, and with it the deadline unchecked.
            for index in 1...2 where descriptors[index].fd >= 0 && descriptors[index].revents != 0 {
                if !drain(descriptors[index].fd, streams[index - 1], limit: 64 * 1024) {
                    close(descriptors[index].fd)
                    descriptors[index].fd = -1  // poll skips it from now on
                }
            }
            if descriptors[3].fd >= 0 && descriptors[3].revents != 0 {
                input.flush()
                if !input.isOpen { descriptors[3].fd = -1 }
            }
            if descriptors[0].revents != 0 { break }
        }
        // The hook exited: what it wrote before is in the pipes (bounded, since something it
        // left running may keep writing).
        for index in 1...2 where descriptors[index].fd >= 0 {
            _ = drain(descriptors[index].fd, streams[index - 1], limit: 1 << 20)
            close(descriptors[index].fd)
        }
        var signaled: Int32 = 0
        var status: Int32 = 0
        let reaped = np_pidfd_reap(pidfd, &signaled, &status)
        let reason = errno
        close(pidfd)
        if reaped != 0 { return .failedToStart(SystemCallError(operation: "waitid", errno: reason).description) }
        return signaled != 0 ? .signaled(status) : .exited(status)
    }

}

/// `duration` from now on the continuous clock; `nil` (never) for one beyond a century, which
/// `Instant` arithmetic could not hold.
private func deadlineAfter(_ duration: Duration) -> ContinuousClock.Instant? {
    duration < .seconds(3_153_600_000) ? ContinuousClock.now + max(.zero, duration) : nil
}
