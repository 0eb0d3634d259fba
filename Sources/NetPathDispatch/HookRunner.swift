import Logging
import Subprocess
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Runs one hook: spawns the checked file, feeds stdin, logs its output within limits, enforces
/// the timeout on its whole process group, and reports a ``HookResult``.
///
/// Process handling is swift-subprocess's (`posix_spawn` with a cleared environment, every
/// descriptor above 2 closed, default signal dispositions, `setpgid(0, 0)`, `/` as working
/// directory, pidfd-based reaping, epoll-driven pipes). The file executed is
/// ``OpenedHook/executablePath``, the hook's real path; why that is safe after the check is
/// written there.
///
/// Timeout: when it passes, SIGTERM goes to the hook's process group, SIGKILL after
/// ``Options/terminationGrace``; whatever is still in the group when the leader is gone is
/// SIGKILLed at once. A run ends when the hook has exited *and* its stdout and stderr are closed,
/// so a background child that keeps them open is waited for (and killed at the timeout), while
/// one that redirects them (`cmd >/dev/null 2>&1 &`) is left running.
///
/// - Important: The runner ignores SIGPIPE in the agent (when it is at its default): a hook that
///   exits without reading stdin must not kill the agent with a write to a closed pipe. Hooks
///   themselves get default signal dispositions.
public struct HookRunner: Sendable {
    /// Runner settings that are not part of one invocation.
    public struct Options: Hashable, Sendable {
        /// Between SIGTERM and SIGKILL after a timeout.
        public var terminationGrace: Duration
        /// What of the hook's output is logged.
        public var output: HookOutputLimits

        public init(terminationGrace: Duration = .seconds(3), output: HookOutputLimits = HookOutputLimits()) {
            self.terminationGrace = terminationGrace
            self.output = output
        }
    }

    public let options: Options
    private let logger: Logger

    public init(options: Options = Options(), logger: Logger) {
        self.options = options
        self.logger = logger
        Self.ignoreSIGPIPE
    }

    /// Ignores SIGPIPE once per process, unless someone installed a handler.
    private static let ignoreSIGPIPE: Void = {
        var current = sigaction()
        if sigaction(SIGPIPE, nil, &current) == 0, current.__sigaction_handler.sa_handler == nil {
            signal(SIGPIPE, SIG_IGN)
        }
    }()

    /// Runs `invocation` by executing `hook`, the file checked for it.
    ///
    /// Never throws: a hook that cannot start is a ``HookResult/Termination/failedToStart(_:)``.
    public func run(_ invocation: HookInvocation, executing hook: OpenedHook) async -> HookResult {
        let start = ContinuousClock.now
        let group = ProcessGroup()
        let budget = OutputBudget(bytes: options.output.bytesPerRun)
        var platform = PlatformOptions()
        platform.processGroupID = 0
        // On cancellation of the calling task (the dispatcher shields runs, so only an embedder
        // could do this) the whole group gets the same treatment as at a timeout.
        platform.teardownSequence = [.gracefulShutDown(allowedDurationToNextStep: options.terminationGrace)]

        let termination: HookResult.Termination
        do {
            let input = try Self.filledPipe(invocation.standardInput)
            let result = try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { await self.watchdog(group, hook: invocation.hook, timeout: invocation.timeout) }
                defer { tasks.cancelAll() }
                return try await Subprocess.run(
                    .path(.init(hook.executablePath)),
                    // Bytes, not strings: an interface name reaches the hook as the kernel's
                    // bytes. swift-subprocess strdup()s each entry, so each ends in NUL.
                    arguments: Arguments(
                        executablePathOverride: (invocation.argumentBytes.first ?? Array(invocation.hook.utf8)) + [0],
                        remainingValues: invocation.argumentBytes.dropFirst().map { $0 + [0] }
                    ),
                    environment: .custom(invocation.environmentBytes.map { $0 + [0] }),
                    workingDirectory: .init(invocation.workingDirectory),
                    platformOptions: platform,
                    input: .fileDescriptor(.init(rawValue: input), closeAfterSpawningProcess: true),
                    output: .sequence,
                    error: .sequence
                ) { execution in
                    group.started(execution.processIdentifier.value)
                    async let out: Void = pump(execution.standardOutput, "stdout", invocation.hook, budget)
                    async let err: Void = pump(execution.standardError, "stderr", invocation.hook, budget)
                    _ = await (out, err)
                }
            }
            switch result.terminationStatus {
            case .exited(let code): termination = .exited(code)
            case .signaled(let signal): termination = .signaled(signal)
            }
        } catch {
            termination = .failedToStart(String(describing: error))
        }
        // Anything the hook left in its group after a timeout dies now.
        group.finish()

        let hookResult = HookResult(
            hook: invocation.hook,
            termination: termination,
            timedOut: group.timedOut,
            duration: ContinuousClock.now - start,
            linesLogged: budget.linesLogged,
            bytesDropped: budget.droppedBytes
        )
        if hookResult.bytesDropped > 0 {
            logger.notice(
                "\(invocation.hook): \(hookResult.bytesDropped) bytes of output dropped (limits: \(options.output.lineLength) bytes a line, \(options.output.bytesPerRun) a run)",
                metadata: ["hook": .string(invocation.hook)]
            )
        }
        return hookResult
    }

    /// A pipe holding all of `bytes`, its write end already closed: the read end is the hook's
    /// stdin, which reads the bytes and then end of file.
    ///
    /// Why not the library's `.array` input: swift-subprocess 1.0.2 writes it from a task that
    /// is cancelled when the child exits, and a child that exits without reading stdin then
    /// trips its "FileDescriptor was not closed" fatal error, killing the agent. A pre-filled
    /// pipe needs no writer at all. An event's JSON is a few KiB; the pipe is grown
    /// (F_SETPIPE_SZ) when it would not fit the default 64 KiB.
    static func filledPipe(_ bytes: [UInt8]) throws -> Int32 {
        var ends: [Int32] = [-1, -1]
        // pipe2 is hidden behind _GNU_SOURCE; the window before FD_CLOEXEC is harmless for hooks
        // (swift-subprocess closes every descriptor above 2 in the child).
        guard pipe(&ends) == 0 else { throw HookRunnerError(operation: "pipe", errno: errno) }
        let (read, write) = (ends[0], ends[1])
        _ = fcntl(read, F_SETFD, FD_CLOEXEC)
        _ = fcntl(write, F_SETFD, FD_CLOEXEC)
        defer { close(write) }
        let setPipeSize: Int32 = 1031  // F_SETPIPE_SZ, hidden behind _GNU_SOURCE in Glibc's module
        if bytes.count > 65536, fcntl(write, setPipeSize, Int32(clamping: bytes.count)) < 0 {
            close(read)
            throw HookRunnerError(operation: "growing the stdin pipe to \(bytes.count) bytes", errno: errno)
        }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(write, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                close(read)
                throw HookRunnerError(operation: "writing stdin", errno: errno)
            }
            offset += written
        }
        return read
    }

    /// Sleeps until the timeout, then signals the group: SIGTERM, and SIGKILL after the grace.
    /// Cancelled when the run ends first.
    private func watchdog(_ group: ProcessGroup, hook: String, timeout: Duration) async {
        do { try await Task.sleep(for: timeout) } catch { return }
        group.timeOut()
        logger.warning(
            "\(hook): timed out after \(timeout), sending SIGTERM to \(group)",
            metadata: ["hook": .string(hook)]
        )
        do { try await Task.sleep(for: options.terminationGrace) } catch { return }
        group.signal(SIGKILL)
    }

    /// Reads one stream to its end, logging its lines within the budget.
    private func pump(
        _ stream: SubprocessOutputSequence,
        _ name: String,
        _ hook: String,
        _ budget: OutputBudget
    ) async {
        var splitter = LineSplitter(limits: options.output, budget: budget)
        let emit: (String) -> Void = { line in
            budget.countLine()
            if name == "stdout" {
                logger.info("\(hook): \(line)", metadata: ["hook": .string(hook), "stream": .string(name)])
            } else {
                logger.notice("\(hook): \(line)", metadata: ["hook": .string(hook), "stream": .string(name)])
            }
        }
        do {
            for try await buffer in stream {
                buffer.withUnsafeBytes { splitter.consume($0, emit: emit) }
                if budget.isSpent, budget.markExhausted() {
                    logger.notice(
                        "\(hook): output budget of \(options.output.bytesPerRun) bytes spent; the rest is counted and dropped",
                        metadata: ["hook": .string(hook)]
                    )
                }
            }
        } catch {
            logger.debug("\(hook): reading \(name) failed: \(error)", metadata: ["hook": .string(hook)])
        }
        splitter.finish(emit: emit)
    }
}

/// The hook's process group, shared by the run and its watchdog.
private final class ProcessGroup: Sendable, CustomStringConvertible {
    private struct State {
        var leader: pid_t = 0
        var timedOut = false
    }

    private let state = Mutex(State())

    var timedOut: Bool { state.withLock { $0.timedOut } }

    var description: String { "hook process group \(state.withLock { $0.leader })" }

    /// The hook was spawned as leader `pid` of its own group (pgid = pid).
    func started(_ pid: pid_t) {
        let lateTimeout = state.withLock { state in
            state.leader = pid
            return state.timedOut
        }
        if lateTimeout { signal(SIGTERM) }
    }

    /// The timeout passed: SIGTERM to the group (now, or as soon as it exists).
    func timeOut() {
        state.withLock { $0.timedOut = true }
        signal(SIGTERM)
    }

    /// Signals every process in the group.
    ///
    /// The group id cannot be reused while any member lives, and the leader's pid not before it
    /// is reaped and its group empty, so this reaches the hook's processes or nobody (ESRCH).
    func signal(_ number: Int32) {
        let leader = state.withLock { $0.leader }
        if leader > 0 { _ = kill(-leader, number) }
    }

    /// The run is over: after a timeout nothing of the hook may outlive it.
    func finish() {
        if timedOut { signal(SIGKILL) }
    }
}

/// A system call failed while preparing a hook run.
struct HookRunnerError: Error, CustomStringConvertible {
    var operation: String
    var errno: Int32

    var description: String { "\(operation): \(String(cString: strerror(errno))) (errno \(errno))" }
}
