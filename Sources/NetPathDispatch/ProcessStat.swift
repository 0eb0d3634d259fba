// SPDX-License-Identifier: Apache-2.0

#if canImport(Glibc)
    import Glibc
#endif

/// What the hook runner needs of one process's `/proc/PID/stat`.
struct ProcessStat: Hashable, Sendable {
    var pid: pid_t
    /// The parent's pid (after a parent's death: the reaper's, usually 1).
    var parent: pid_t
    /// The process group id.
    var group: pid_t
    /// When the process started, in clock ticks since boot.
    var startTicks: UInt64
    /// A zombie: dead, waiting for its parent to reap it.
    var isZombie: Bool

    /// Parses the text of `/proc/PID/stat`; `nil` if it is not in the kernel's format.
    init?(pid: pid_t, stat text: String) {
        // The command name (field 2) is in parentheses and may hold spaces and parentheses:
        // the fields that follow start after the last ')'.
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // fields[0] is the state (field 3), so field N is fields[N - 3]; starttime is field 22.
        guard fields.count > 19, let parent = pid_t(fields[1]), let group = pid_t(fields[2]),
            let start = UInt64(fields[19])
        else { return nil }
        self.pid = pid
        self.parent = parent
        self.group = group
        self.startTicks = start
        self.isZombie = fields[0] == "Z" || fields[0] == "X"
    }

    init(pid: pid_t, parent: pid_t, group: pid_t, startTicks: UInt64, isZombie: Bool = false) {
        self.pid = pid
        self.parent = parent
        self.group = group
        self.startTicks = startTicks
        self.isZombie = isZombie
    }

    /// Process `pid`'s stat now; `nil` when it is gone.
    static func read(_ pid: pid_t) -> ProcessStat? {
        guard let text = ControlFile.read("/proc/\(pid)/stat") else { return nil }
        return ProcessStat(pid: pid, stat: text)
    }
}
