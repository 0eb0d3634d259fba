// SPDX-License-Identifier: Apache-2.0

import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What one hook run started: the hook's process group and, where the agent has a cgroup of
/// its own (``AgentCgroup``), whatever left that group. Shared by the run and the thread that waits for the hook.
final class HookProcesses: Sendable, CustomStringConvertible {
    private struct State {
        var leader: pid_t = 0
        /// The hook's start time (``ProcessStat/startTicks``); `nil` when unknown.
        var leaderStart: UInt64?
        var timedOut = false
    }

    private let state = Mutex(State())
    private let hook: String
    private let cgroup: AgentCgroup
    private let logger: Logger

    init(hook: String, cgroup: AgentCgroup, logger: Logger) {
        self.hook = hook
        self.cgroup = cgroup
        self.logger = logger
    }

    var timedOut: Bool { state.withLock { $0.timedOut } }

    var description: String { "hook process group \(state.withLock { $0.leader })" }

    /// The hook was spawned as leader `pid` of its own group (pgid = pid).
    func started(_ pid: pid_t) {
        state.withLock { $0.leader = pid }
    }

    /// Reads the hook's start time, which tells what it started in the agent's cgroup
    /// (``leftovers()``): only where there is such a cgroup, and before the hook is reaped (at
    /// worst a zombie, it is still there to be read). The thread that waits for the hook calls
    /// it, not the one that spawned it (the engine's, when it decided the change).
    func recordStart() {
        guard case .available = cgroup.availability else { return }
        let leader = state.withLock { $0.leader }
        guard leader > 0, let start = ProcessStat.read(leader)?.startTicks else { return }
        state.withLock { $0.leaderStart = start }
    }

    /// The timeout passed: SIGTERM to the group.
    func timeOut() {
        state.withLock { $0.timedOut = true }
        signal(SIGTERM)
    }

    /// Signals every process in the group.
    ///
    /// The group id cannot be reused while any member lives, and the leader's pid not before it
    /// is reaped and its group empty, so this reaches the hook's processes or nobody (ESRCH),
    /// short of the kernel handing out every other pid in between.
    func signal(_ number: Int32) {
        let leader = state.withLock { $0.leader }
        if leader > 0 { _ = kill(-leader, number) }
    }

    /// What the hook left running, once it has exited and been reaped: the processes of the
    /// agent's cgroup that it started (its group among them), or, without that cgroup, a
    /// sign that its group still has members (`[-pgid]`).
    func leftovers() -> [pid_t] {
        let (leader, start) = state.withLock { ($0.leader, $0.leaderStart) }
        guard leader > 0 else { return [] }
        if case .available = cgroup.availability, let start {
            return cgroup.leftovers(hookStart: start)
        }
        return kill(-leader, 0) == 0 ? [-leader] : []
    }

    /// The hook has exited: what it left running (`left`, from ``leftovers()``) gets `grace`
    /// to end by itself, then SIGKILL (at once after a timeout). Returns when nothing is left,
    /// or after a bounded wait for processes that do not die (stuck in the kernel).
    ///
    /// Blocks: the runner calls it on a thread of its own, where no task's cancellation can cut
    /// the grace short (the dispatcher's shutdown lets running hooks end as they would).
    func finish(leftovers left: [pid_t], grace: Duration) {
        var left = left
        guard !left.isEmpty else { return }
        if !timedOut {
            let deadline = ContinuousClock.now + grace
            var pause = Duration.milliseconds(5)
            while !left.isEmpty, ContinuousClock.now < deadline {
                Self.sleep(min(pause, deadline - ContinuousClock.now))
                pause = min(pause * 2, .milliseconds(100))
                left = leftovers()
            }
            guard !left.isEmpty else { return }
            let what = left.first.map { $0 < 0 } == true ? "its process group" : "\(left.count) process(es)"
            logger.warning(
                "\(hook): killed what it left running (\(what)) \(grace) after it exited; start long-lived work through the service manager (systemd-run, systemctl start)",
                metadata: ["hook": .string(hook)]
            )
        }
        signal(SIGKILL)
        // Without the cgroup that was all: the group's members die, and their zombies, which
        // still count as members, are their reaper's business.
        guard left.allSatisfy({ $0 > 0 }) else { return }
        // A process may fork while it is being killed: a few rounds catch its children.
        let deadline = ContinuousClock.now + .seconds(2)
        while !left.isEmpty, ContinuousClock.now < deadline {
            for pid in left { kill(pid, SIGKILL) }
            Self.sleep(.milliseconds(1))
            left = leftovers()
        }
        if !left.isEmpty {
            logger.warning(
                "\(hook): \(left.count) process(es) it left survived SIGKILL for 2 s",
                metadata: ["hook": .string(hook)]
            )
        }
    }

    private static func sleep(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(max(0, seconds)), tv_nsec: Int(max(0, attoseconds) / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }
}
