// SPDX-License-Identifier: Apache-2.0

import CLinux
import Logging
import NetPathCore
import Synchronization
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// Runs one hook: spawns the checked file, feeds stdin, logs its output within limits, enforces
/// the timeout, ends whatever the hook leaves running, and reports a ``HookResult``.
///
/// The hook is spawned on the calling thread (``SpawnedHook``: a vfork-style clone with a cleared
/// environment, every descriptor above 2 closed, default signal dispositions, a process group of
/// its own, `/` as working directory; a pidfd to wait on). The file executed is
/// ``OpenedHook/executablePath``, the hook's real path; why that is safe after the check is
/// written there.
///
/// Hooks are born in the agent's own cgroup leaf where it may have one (``AgentCgroup`` says
/// where: a systemd unit with `Delegate=yes`, or a host or container without a service manager
/// whose cgroup is writable); everything they start stays there unless the service manager
/// starts it. Elsewhere a run has only the hook's process group, and the agent says so once in
/// its log.
///
/// Timeout: when it passes, SIGTERM goes to the hook's process group, SIGKILL after
/// ``Options/terminationGrace``; whatever it left is SIGKILLed as soon as the hook is gone.
///
/// Leftovers: a run ends when the hook has exited *and* nothing it started is left. What is left
/// (`cmd &`, a `setsid` daemon) gets ``Options/lingerGrace`` to end by itself, then SIGKILL, and
/// the kill is logged: the processes in the agent's cgroup that the hook started, or only its
/// process group where there is no such cgroup (which misses processes that left the group).
/// Output is read until the hook exits, not after. Work that should outlive a hook belongs to
/// the service manager (`systemd-run`, `systemctl start`).
///
/// - Important: The runner ignores SIGPIPE in the agent (when it is at its default): a hook that
///   exits without reading stdin must not kill the agent with a write to a closed pipe. Hooks
///   themselves get default signal dispositions.
package struct HookRunner: Sendable {
    /// Runner settings that are not part of one invocation.
    package struct Options: Hashable, Sendable {
        /// Between SIGTERM and SIGKILL after a timeout.
        package var terminationGrace: Duration
        /// What of the hook's output is logged.
        package var output: HookOutputLimits
        /// How long what a hook started may run on after the hook exits, before it is killed.
        package var lingerGrace: Duration

        package init(
            terminationGrace: Duration = .seconds(3),
            output: HookOutputLimits = HookOutputLimits(),
            lingerGrace: Duration = .seconds(1)
        ) {
            self.terminationGrace = terminationGrace
            self.output = output
            self.lingerGrace = lingerGrace
        }
    }

    package let options: Options
    private let logger: Logger
    private let cgroup: AgentCgroup
    private let spares = SparePipes.shared

    package init(options: Options = Options(), logger: Logger) {
        self.init(options: options, logger: logger, cgroup: .shared)
    }

    /// - Parameter cgroup: where hooks are born (tests pass one that is unavailable).
    init(options: Options, logger: Logger, cgroup: AgentCgroup) {
        self.options = options
        self.logger = logger
        self.cgroup = cgroup
        Self.ignoreSIGPIPE
        cgroup.announce(to: logger)
    }

    /// Ignores SIGPIPE once per process, unless someone installed a handler.
    private static let ignoreSIGPIPE: Void = {
        var current = sigaction()
        if sigaction(SIGPIPE, nil, &current) == 0, current.__sigaction_handler.sa_handler == nil {
            signal(SIGPIPE, SIG_IGN)
        }
    }()

    /// Runs `invocation` by executing `hook`, the file checked for it: ``start(_:executing:)``,
    /// then ``finish(_:)``.
    ///
    /// Never throws: a hook that cannot start is a ``HookResult/Termination/failedToStart(_:)``.
    package func run(_ invocation: HookInvocation, executing hook: OpenedHook) async -> HookResult {
        await finish(start(invocation, executing: hook))
    }

    /// A run ``start(_:executing:)`` began: the hook spawned, or why it could not be.
    /// ``finish(_:)`` it exactly once.
    package struct StartedRun: Sendable {
        fileprivate let invocation: HookInvocation
        fileprivate let start: ContinuousClock.Instant
        fileprivate let group: HookProcesses
        fileprivate let budget: OutputBudget
        fileprivate let spawned: Result<Spawned, SystemCallError>

        fileprivate struct Spawned: Sendable {
            var child: SpawnedHook
            var input: StandardInputPipe
        }
    }

    /// Spawns `hook` for `invocation` on the calling thread, and returns without waiting: the
    /// first half of ``run(_:executing:)``, which needs no task (the dispatcher spawns an idle
    /// subject's first hook before it creates the task that waits for it).
    package func start(_ invocation: HookInvocation, executing hook: OpenedHook) -> StartedRun {
        let start = ContinuousClock.now
        let group = HookProcesses(hook: invocation.hook, cgroup: cgroup, logger: logger)
        let budget = OutputBudget(bytes: options.output.bytesPerRun)
        let spawned: Result<StartedRun.Spawned, SystemCallError>
        do throws(SystemCallError) {
            let pipes = try spares.take()
            var input = pipes.input
            let child: SpawnedHook
            do throws(SystemCallError) {
                defer { close(input.readEnd) }
                // Spawned here, on the thread that decided to run the hook (SpawnedHook says why).
                child = try SpawnedHook.spawn(
                    path: hook.executablePath,
                    // Bytes, not strings: an interface name reaches the hook as the kernel's bytes.
                    arguments: invocation.argumentList,
                    environment: invocation.environmentList,
                    directory: invocation.workingDirectory,
                    standardInput: input.readEnd,
                    output: pipes.output,
                    error: pipes.error
                )
            } catch {
                input.abandon()
                throw error
            }
            group.started(child.pid)
            spawned = .success(StartedRun.Spawned(child: child, input: input))
        } catch {
            spawned = .failure(error)
        }
        return StartedRun(invocation: invocation, start: start, group: group, budget: budget, spawned: spawned)
    }

    /// Feeds a started hook its stdin, logs its output, keeps its timeout, waits for its end and
    /// for what it left running, and reports how the run went.
    package func finish(_ run: StartedRun) async -> HookResult {
        let (invocation, start, group, budget) = (run.invocation, run.start, run.group, run.budget)
        let termination: HookResult.Termination
        switch run.spawned {
        case .failure(let error):
            termination = .failedToStart(String(describing: error))
        case .success(let spawned):
            let (child, input) = (spawned.child, spawned.input)
            // The hook's stdin is encoded and written by the waiting thread, while the hook execs
            // (HookInput says why); that thread also makes the next run's pipes.
            let unencodable = Mutex<(any Error)?>(nil)
            let standardInput = invocation.standardInput
            let spares = self.spares
            let prepare = { @Sendable () -> [UInt8]? in
                group.recordStart()
                do {
                    return try standardInput.bytes()
                } catch {
                    // An event with a non-finite number: the hook must not act on an empty stdin,
                    // so it is killed before its stdin is closed (it cannot read end of file first).
                    unencodable.withLock { $0 = error }
                    group.signal(SIGKILL)
                    return nil
                }
            }
            let logger = self.logger
            let limits = options.output
            let hookName = invocation.hook
            let streams = Mutex(
                (
                    out: LineSplitter(limits: limits, budget: budget),
                    err: LineSplitter(limits: limits, budget: budget)
                )
            )
            let emitter = { @Sendable (stream: SpawnedHook.Stream) -> (String) -> Void in
                { line in
                    budget.countLine()
                    switch stream {
                    case .standardOutput:
                        logger.info("\(hookName): \(line)", metadata: ["hook": .string(hookName), "stream": "stdout"])
                    case .standardError:
                        logger.notice(
                            "\(hookName): \(line)",
                            metadata: ["hook": .string(hookName), "stream": "stderr"]
                        )
                    }
                }
            }
            // Kept by the waiting thread, whatever happens to the calling task: the dispatcher's
            // shutdown lets running hooks end within their timeouts.
            let timeout = invocation.timeout
            let deadline = SpawnedHook.Deadline(
                timeout: timeout,
                grace: options.terminationGrace,
                expire: {
                    group.timeOut()
                    logger.warning(
                        "\(hookName): timed out after \(timeout), sending SIGTERM to \(group)",
                        metadata: ["hook": .string(hookName)]
                    )
                },
                kill: { group.signal(SIGKILL) }
            )
            let ended = await child.wait(input: input, deadline: deadline, prepare: prepare, fed: spares.refill) {
                stream,
                bytes in
                streams.withLock { splitters in
                    switch stream {
                    case .standardOutput: splitters.out.consume(bytes, emit: emitter(stream))
                    case .standardError: splitters.err.consume(bytes, emit: emitter(stream))
                    }
                }
                if budget.isSpent, budget.markExhausted() {
                    logger.notice(
                        "\(hookName): output budget of \(limits.bytesPerRun) bytes spent; the rest is counted and dropped",
                        metadata: ["hook": .string(hookName)]
                    )
                }
            }
            streams.withLock { splitters in
                splitters.out.finish(emit: emitter(.standardOutput))
                splitters.err.finish(emit: emitter(.standardError))
            }
            if let unencodable = unencodable.withLock({ $0 }) {
                termination = .failedToStart("cannot encode the event as JSON for stdin: \(unencodable)")
            } else {
                termination = ended
            }
        }
        // What the hook left running gets the linger grace (none after a timeout), then dies;
        // waited for on a thread, so that cancelling the caller cannot cut the grace short.
        let left = group.leftovers()
        if !left.isEmpty {
            let grace = options.lingerGrace
            await OSThread.run { group.finish(leftovers: left, grace: grace) }
        }

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
}
