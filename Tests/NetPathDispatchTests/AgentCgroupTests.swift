// SPDX-License-Identifier: Apache-2.0

import Foundation
import TestSupport
import Testing

@testable import NetPathDispatch

/// Finding the cgroup v2 hierarchy and the agent's place in it, and telling a finished run's
/// leftovers from the processes of runs still going, without processes or a cgroupfs.
struct AgentCgroupTests {
    static let unified =
        "29 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate"

    @Test("the cgroup2 mount is found on unified and hybrid systems, and only when it shows the whole tree")
    func mountPoint() {
        let v1 = "30 23 0:27 / /sys/fs/cgroup/memory rw,relatime shared:5 - cgroup cgroup rw,memory"
        let hybrid = "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw"
        let bound = "50 23 0:26 /system.slice /mnt/cg rw,relatime - cgroup2 cgroup2 rw"
        let spaced = #"51 23 0:26 / /mnt/my\040cgroups rw,relatime - cgroup2 cgroup2 rw"#
        #expect(
            AgentCgroup.cgroup2MountPoint(mountinfo: [v1, Self.unified].joined(separator: "\n")) == "/sys/fs/cgroup"
        )
        #expect(
            AgentCgroup.cgroup2MountPoint(mountinfo: [v1, hybrid].joined(separator: "\n")) == "/sys/fs/cgroup/unified"
        )
        #expect(
            AgentCgroup.cgroup2MountPoint(mountinfo: [spaced, Self.unified].joined(separator: "\n")) == "/sys/fs/cgroup"
        )
        #expect(AgentCgroup.cgroup2MountPoint(mountinfo: spaced) == "/mnt/my cgroups")
        #expect(AgentCgroup.cgroup2MountPoint(mountinfo: [v1, bound].joined(separator: "\n")) == nil)
        #expect(AgentCgroup.cgroup2MountPoint(mountinfo: "") == nil)
    }

    @Test("the process's cgroup v2 path is the 0:: line, unless it lies outside the namespace or is gone")
    func unifiedPath() {
        #expect(
            AgentCgroup.unifiedPath(procCgroup: "0::/system.slice/netpathd.service\n")
                == "/system.slice/netpathd.service"
        )
        #expect(AgentCgroup.unifiedPath(procCgroup: "9:name=systemd:/\n4:memory:/x\n0::/\n") == "/")
        #expect(AgentCgroup.unifiedPath(procCgroup: "4:memory:/x\n1:cpu:/\n") == nil)
        #expect(AgentCgroup.unifiedPath(procCgroup: "0::/../../other.scope\n") == nil)
        #expect(AgentCgroup.unifiedPath(procCgroup: "0::/a.slice/gone.service (deleted)\n") == nil)
    }

    /// Runs `detect` on a fake /proc/self and /run made of `files`.
    static func detect(_ files: [String: String], systemd: Bool) throws -> AgentCgroup.Availability {
        let root = try ScratchDirectory.make("netpath-cgroup")
        defer { try? FileManager.default.removeItem(at: root) }
        let proc = root.appendingPathComponent("proc").path
        let run = root.appendingPathComponent("run").path
        try FileManager.default.createDirectory(atPath: proc, withIntermediateDirectories: true)
        if systemd {
            try FileManager.default.createDirectory(atPath: run + "/systemd/system", withIntermediateDirectories: true)
        }
        for (name, text) in files { try text.write(toFile: proc + "/" + name, atomically: false, encoding: .utf8) }
        return AgentCgroup.detect(procRoot: proc, runRoot: run)
    }

    @Test("no cgroup2, no v2 path, systemd's root cgroup, or a cgroup systemd did not delegate: no cgroup, and why")
    func unavailable() throws {
        #expect(
            try Self.detect(["mountinfo": "", "cgroup": "0::/\n"], systemd: false)
                == .unavailable("no cgroup2 filesystem is mounted")
        )
        #expect(
            try Self.detect(["mountinfo": Self.unified, "cgroup": "1:cpu:/\n"], systemd: false).reason?
                .hasSuffix("/cgroup names no cgroup v2 path") == true
        )
        #expect(
            try Self.detect(["mountinfo": Self.unified, "cgroup": "0::/\n"], systemd: true)
                == .unavailable("the root cgroup belongs to systemd")
        )
        // This machine's /sys/fs/cgroup/user.slice/... carries no delegate attribute, or is absent.
        #expect(
            try Self.detect(
                ["mountinfo": Self.unified, "cgroup": "0::/user.slice/user-0.slice/session-1.scope\n"],
                systemd: true
            )
                == .unavailable(
                    "/sys/fs/cgroup/user.slice/user-0.slice/session-1.scope is not delegated to this process (Delegate=yes in its unit)"
                )
        )
    }

    static let agent: pid_t = 100

    @Test("a finished run's leftovers: what started after its hook and leads up to no live child of the agent")
    func leftovers() {
        let members = [
            ProcessStat(pid: Self.agent, parent: 1, group: Self.agent, startTicks: 10),
            // A run still going: its hook (a child of the agent), the hook's child, and that child's
            // setsid grandchild: all owned through the hook.
            ProcessStat(pid: 300, parent: Self.agent, group: 300, startTicks: 600),
            ProcessStat(pid: 301, parent: 300, group: 300, startTicks: 601),
            ProcessStat(pid: 302, parent: 301, group: 302, startTicks: 602),
            // The finished run (its hook started at tick 500): a background child, reparented to
            // init; a setsid grandchild under it; an orphaned daemon; a zombie.
            ProcessStat(pid: 201, parent: 1, group: 200, startTicks: 501),
            ProcessStat(pid: 202, parent: 201, group: 202, startTicks: 502),
            ProcessStat(pid: 203, parent: 1, group: 203, startTicks: 503),
            ProcessStat(pid: 204, parent: 1, group: 200, startTicks: 504, isZombie: true),
            // Older than the finished run's hook: not its doing.
            ProcessStat(pid: 150, parent: 1, group: 150, startTicks: 400),
            // A parent loop (cannot happen, but must not hang).
            ProcessStat(pid: 401, parent: 402, group: 401, startTicks: 700),
            ProcessStat(pid: 402, parent: 401, group: 401, startTicks: 700),
        ]
        #expect(AgentCgroup.leftovers(of: members, agent: Self.agent, hookStart: 500) == [201, 202, 203, 401, 402])
        // The run still going is never touched, even when asked with an earlier start.
        #expect(
            !AgentCgroup.leftovers(of: members, agent: Self.agent, hookStart: 0).contains { (300...302).contains($0) }
        )
    }
}

extension AgentCgroup.Availability {
    /// The reason, when unavailable.
    var reason: String? {
        if case .unavailable(let reason) = self { return reason }
        return nil
    }
}
