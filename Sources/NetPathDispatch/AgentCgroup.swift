// SPDX-License-Identifier: Apache-2.0

import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The cgroup (v2) leaf the agent lives in, where every hook is born: how the runner finds what
/// a hook left running even after it left the hook's process group.
///
/// A process cannot leave its cgroup by itself (short of writing to the cgroup filesystem), so
/// everything a hook starts stays in this leaf — `setsid` daemons and double forks included —
/// unless it is started through the service manager (`systemd-run`, `systemctl start`), which
/// puts it in a unit of its own. When a run ends, its leftovers are the processes in the leaf
/// that no live process of the agent owns and that started after the hook (``leftovers(of:)``).
///
/// Why one leaf for the agent and its hooks rather than a cgroup per run: a process is born in
/// its parent's cgroup, and the runner's spawn (`np_spawn`, glibc's `clone`) cannot place it in
/// another: that is `clone3` with `CLONE_INTO_CGROUP`, which glibc 2.36 does not offer (a
/// hand-written `clone3`, whose child starts on a new stack, would). Moving the hook there after
/// the spawn waits for an RCU grace period, milliseconds long, during which a shell hook has long
/// forked its `cmd &` outside; moving it before the exec, through a wrapper, would add that to
/// every hook's start.
///
/// Where the agent may not move into a leaf of its own (``detect(procRoot:runRoot:)`` says
/// when), runs have only their process group, and the agent says so once in its log.
final class AgentCgroup: Sendable {
    /// Whether hooks are born in a leaf of the agent's own.
    enum Availability: Hashable, Sendable {
        /// The agent lives in the leaf at `path`, a cgroup directory.
        case available(path: String)
        /// Why not: runs have only their process group.
        case unavailable(String)
    }

    /// This process's leaf, decided (and moved into) at first use.
    static let shared = AgentCgroup(availability: detect())

    let availability: Availability
    private let announced = Mutex(false)

    init(availability: Availability) {
        self.availability = availability
    }

    /// Logs, once, whether hooks are contained and what is covered without a cgroup.
    func announce(to logger: Logger) {
        let first = announced.withLock { done in
            let first = !done
            done = true
            return first
        }
        guard first else { return }
        switch availability {
        case .available(let path):
            logger.info("hooks run in cgroup \(path): what a hook leaves running is found and ended after it")
        case .unavailable(let reason):
            logger.notice(
                "hooks run without a cgroup of the agent's own (\(reason)): what a hook leaves running is ended through its process group only, so a process that leaves the group (setsid, a daemon's double fork) outlives the hook"
            )
        }
    }

    /// The processes in the leaf now, with their stats (gone ones skipped); `[]` without one.
    func members() -> [ProcessStat] {
        guard case .available(let path) = availability,
            let procs = ControlFile.read(path + "/cgroup.procs")
        else { return [] }
        return procs.split(separator: "\n").compactMap { pid_t($0).flatMap(ProcessStat.read) }
    }

    /// What the run whose hook started at `hookStart` left running, among `members` of the leaf:
    /// live processes that started no earlier than the hook and that no live child of this
    /// process (`agent`) owns.
    ///
    /// The run's hook has exited and been reaped, so its descendants no longer lead up to the
    /// agent; the processes of runs still going do (through their hook, a child of the agent).
    /// A process that detached from a run still going (double fork), or that a run which ended
    /// meanwhile left, is taken too: its own run would end it anyway, if a little later.
    static func leftovers(of members: [ProcessStat], agent: pid_t, hookStart: UInt64) -> [pid_t] {
        let byPid = Dictionary(members.map { ($0.pid, $0) }, uniquingKeysWith: { first, _ in first })
        func ownedByAgent(_ process: ProcessStat) -> Bool {
            var current = process
            // The parent chain within the leaf is at most as long as the leaf is big.
            for _ in 0...members.count {
                if current.parent == agent { return true }
                guard let parent = byPid[current.parent] else { return false }
                current = parent
            }
            return false
        }
        return members.filter { process in
            process.pid != agent && !process.isZombie && process.startTicks >= hookStart && !ownedByAgent(process)
        }.map(\.pid)
    }

    /// What the run whose hook started at `hookStart` left running, now.
    func leftovers(hookStart: UInt64) -> [pid_t] {
        Self.leftovers(of: members(), agent: getpid(), hookStart: hookStart)
    }
}
