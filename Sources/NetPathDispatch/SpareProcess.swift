import CLinux
import NetPathCore

#if canImport(Glibc)
    import Glibc
#endif

/// A process made ahead of time to become the next hook (`np_spare_make`), so that a hook's
/// start does not wait for a `clone`.
///
/// Why: a link change comes after seconds of quiet, with the kernel's caches cold, and then a
/// `clone` takes ~65 µs before the child runs (15 µs warm), which is most of what is left between
/// netpathd's reading of the change and its hook's start once the agent's own work is done
/// (BENCHMARKS.md, notes of 2026-11-29). A spare made before the change only has to be told what
/// to exec: the hook starts ~35 µs sooner (median, measured by hand with a C program of both ways,
/// 40 ms between spawns). Everything a hook gets stays as `np_spawn` gives it.
///
/// One spare at most is kept, for the next spawn; the runner asks for a new one when a hook it
/// ran has ended (``refill()``), not at once after the spawn: made then, its `clone` ran on the CPU
/// the hook was starting on and gave back what it had won. Spawns while there is none (the
/// first after start-up, the second hook of one change, a hook started while another runs) take
/// `np_spawn`'s way, as before.
///
/// The spares are made on a thread of their own that lives as long as the process: a spare's
/// parent death signal is tied to the thread that made it, and kills it with the agent, since a
/// spare shares the agent's memory.
final class SpareProcess: Sendable {
    /// The spares of every runner in the process; none when the environment has
    /// `NETPATH_NO_SPARE_PROCESS` set, for tools that cannot follow such a process: valgrind
    /// supports no `clone` but a thread's and a fork's, and ends the program at a spare's
    /// (bench/pathcost.sh sets it; the agent's way to its hook is the same up to the spawn).
    static let shared = SpareProcess(enabled: getenv("NETPATH_NO_SPARE_PROCESS") == nil)

    private struct State {
        /// The spare ready for the next spawn (`struct np_spare *`).
        var spare: OpaquePointer?
        /// A spare was asked for.
        var wanted = false
        /// The maker's thread runs.
        var making = false
        /// No spares here (turned off, or ENOSYS: an architecture without them): asking is in vain.
        var unavailable = false
        /// Spares made so far (tests).
        var made = 0
    }

    // ConditionLock is @unchecked Sendable; the pointer in it is only handed out under the lock,
    // once (take), and the spare it names belongs to whoever took it.
    private let state = ConditionLock(State())

    /// - Parameter enabled: `false` makes none: every spawn clones.
    init(enabled: Bool = true) {
        if !enabled { state.withLock { $0.unavailable = true } }
    }

    /// The spare for a spawn, if one is ready; it is the caller's to spawn with or discard.
    func take() -> OpaquePointer? {
        state.withLock { state in
            defer { state.spare = nil }
            return state.spare
        }
    }

    /// Ends the spare ready now, if any (tests; an agent's spare ends with the agent).
    func discard() {
        if let spare = take() { np_spare_discard(spare) }
    }

    /// Asks for a spare, made on the maker's thread (started the first time) unless one is ready.
    /// Returns at once.
    func refill() {
        let start = state.withLock { state -> Bool in
            guard !state.unavailable, state.spare == nil else { return false }
            state.wanted = true
            defer { state.making = true }
            return !state.making
        }
        if start {
            // Detached, and never ending: the spares' parent death signal follows this thread.
            if !OSThread.detach({ [self] in makeSpares() }) {
                state.withLock { $0.making = false }
            }
        } else {
            state.broadcast()
        }
    }

    /// The pid of the spare ready now, if any (tests).
    var readyPID: pid_t? { state.withLock { $0.spare.map { np_spare_pid($0) } } }

    /// How many spares were made so far.
    var madeCount: Int { state.withLock { $0.made } }

    /// Waits until a spare is ready, or `deadline` (monotonic nanoseconds) passes; whether one is.
    func waitUntilReady(deadline: UInt64) -> Bool {
        state.wait(until: deadline) { $0.spare != nil || $0.unavailable }
        return state.withLock { $0.spare != nil }
    }

    private func makeSpares() {
        // A process is born in its parent's cgroup: the agent's leaf, where hooks must be born
        // (AgentCgroup), has to be decided, and moved into, before the first spare.
        _ = AgentCgroup.shared.availability
        while true {
            state.wait(until: .max) { $0.wanted && $0.spare == nil }
            var made: OpaquePointer?
            let result = np_spare_make(&made)
            state.withLock { state in
                state.wanted = false
                if result == 0, let made {
                    state.spare = made
                    state.made += 1
                } else if result == ENOSYS {
                    state.unavailable = true
                }
                // Any other failure (no memory, no pids left) leaves none: the next spawn takes
                // np_spawn's way, and the next hook's end asks again.
            }
            state.broadcast()
        }
    }
}
