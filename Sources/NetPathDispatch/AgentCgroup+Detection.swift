// SPDX-License-Identifier: Apache-2.0

import NetPathCore
#if canImport(Glibc)
    import Glibc
#endif

// Finding the cgroup v2 hierarchy, this process's place in it, and whether it may make a leaf
// of its own there.
extension AgentCgroup {
    /// Decides whether this process may live in a leaf cgroup of its own, and moves it there.
    ///
    /// It may when
    /// - a cgroup2 filesystem is mounted (`/sys/fs/cgroup`, or `/sys/fs/cgroup/unified` on a
    ///   hybrid system) and `/proc/self/cgroup` names the process's place in it; and
    /// - under systemd (`runRoot/systemd/system` exists), its cgroup is delegated to it
    ///   (`Delegate=yes`, which systemd marks with the `user.delegate` or `trusted.delegate`
    ///   attribute): systemd owns every other cgroup, the root included. The leaf is `agent`
    ///   below it, so that processes live only in leaves, as systemd's delegation rules ask;
    /// - without systemd, its cgroup is writable (a host or container without a service
    ///   manager). The leaf is `netpath-PID` below it; left empty at exit, it is removed by
    ///   the next agent (or netpathctl) that starts there.
    static func detect(procRoot: String = "/proc/self", runRoot: String = "/run") -> Availability {
        guard let mountinfo = ControlFile.read(procRoot + "/mountinfo"),
            let mount = cgroup2MountPoint(mountinfo: mountinfo)
        else { return .unavailable("no cgroup2 filesystem is mounted") }
        guard let procCgroup = ControlFile.read(procRoot + "/cgroup"),
            let own = unifiedPath(procCgroup: procCgroup)
        else { return .unavailable("\(procRoot)/cgroup names no cgroup v2 path") }
        let directory = own == "/" ? mount : mount + own
        var info = stat()
        let systemd = stat(runRoot + "/systemd/system", &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
        let leaf: String
        if systemd {
            guard own != "/" else { return .unavailable("the root cgroup belongs to systemd") }
            guard isDelegated(directory) else {
                return .unavailable("\(directory) is not delegated to this process (Delegate=yes in its unit)")
            }
            leaf = directory + "/agent"
        } else {
            removeStale(in: directory)
            leaf = directory + "/\(leafPrefix)\(getpid())"
        }
        do {
            if mkdir(leaf, 0o755) != 0 && errno != EEXIST {
                throw SystemCallError(operation: "mkdir", path: leaf, errno: errno)
            }
            try ControlFile.write("\(getpid())", to: leaf + "/cgroup.procs")
        } catch {
            rmdir(leaf)
            return .unavailable("cannot move into a cgroup of its own: \(error)")
        }
        return .available(path: leaf)
    }

    /// The mount point of a cgroup2 filesystem that shows the whole hierarchy (root `/`), from
    /// `/proc/self/mountinfo`; `/sys/fs/cgroup` when several do.
    static func cgroup2MountPoint(mountinfo: String) -> String? {
        var found: [String] = []
        for line in mountinfo.split(separator: "\n") {
            // ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER
            let fields = line.split(separator: " ", omittingEmptySubsequences: false)
            guard fields.count > 6, let dash = fields[6...].firstIndex(of: "-"), dash + 1 < fields.count,
                fields[dash + 1] == "cgroup2", fields[3] == "/"
            else { continue }
            found.append(unescapeMountField(fields[4]))
        }
        return found.first { $0 == "/sys/fs/cgroup" } ?? found.first
    }

    /// This process's cgroup v2 path from `/proc/self/cgroup` (the `0::PATH` line), or `nil`
    /// when there is none or it lies outside this cgroup namespace (`/..`) or was removed.
    static func unifiedPath(procCgroup: String) -> String? {
        for line in procCgroup.split(separator: "\n") where line.hasPrefix("0::") {
            let path = String(line.dropFirst(3))
            guard path.hasPrefix("/"), !path.hasPrefix("/.."), !path.hasSuffix(" (deleted)") else { return nil }
            return path
        }
        return nil
    }

    /// The leaf's name without a service manager: `netpath-PID`.
    static let leafPrefix = "netpath-"

    /// mountinfo writes space, tab, newline and backslash as `\ooo` octal escapes.
    static func unescapeMountField(_ field: Substring) -> String {
        var bytes: [UInt8] = []
        var rest = Array(field.utf8)[...]
        while let byte = rest.popFirst() {
            if byte == UInt8(ascii: "\\"), rest.count >= 3,
                let value = UInt8(String(decoding: rest.prefix(3), as: UTF8.self), radix: 8)
            {
                bytes.append(value)
                rest = rest.dropFirst(3)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether systemd marked `directory` as delegated.
    private static func isDelegated(_ directory: String) -> Bool {
        guard let getxattr = getxattrFunction else { return false }
        // user.* is readable without CAP_SYS_ADMIN (systemd 251 and later set both).
        for name in ["user.delegate", "trusted.delegate"] {
            var value = [UInt8](repeating: 0, count: 8)
            let size = value.withUnsafeMutableBytes { getxattr(directory, name, $0.baseAddress, $0.count) }
            if size == 1 && value[0] == UInt8(ascii: "1") { return true }
        }
        return false
    }

    private typealias GetXattr =
        @convention(c) (
            UnsafePointer<CChar>, UnsafePointer<CChar>, UnsafeMutableRawPointer?, Int
        ) -> Int

    /// glibc's getxattr(2), looked up at run time: Swift's Glibc module does not export
    /// <sys/xattr.h>, and a C target for one function would be more machinery than this.
    private static let getxattrFunction: GetXattr? = {
        // RTLD_DEFAULT (a null handle): the libraries already loaded, libc among them.
        guard let symbol = dlsym(nil, "getxattr") else { return nil }
        return unsafeBitCast(symbol, to: GetXattr.self)
    }()

    /// Ends what the hooks of agents that are gone left in their leaves (one crashed, say),
    /// and removes the leaves.
    private static func removeStale(in directory: String) {
        for name in subdirectories(of: directory) {
            guard name.hasPrefix(leafPrefix), let pid = pid_t(name.dropFirst(leafPrefix.count)),
                pid != getpid(), kill(pid, 0) != 0, errno == ESRCH
            else { continue }
            let stale = directory + "/" + name
            // cgroup.kill (Linux 5.14 and later) ends everything below too; without it the
            // leftovers stay, and so does the leaf.
            try? ControlFile.write("1", to: stale + "/cgroup.kill")
            removeTree(stale)
        }
    }

    /// Removes a cgroup and the cgroups below it (an agent nested in a stale one: tests).
    private static func removeTree(_ path: String) {
        for name in subdirectories(of: path) { removeTree(path + "/" + name) }
        // SIGKILLed processes are gone within microseconds; rmdir fails (EBUSY) while they are not.
        for _ in 0..<100 {
            if rmdir(path) == 0 || errno != EBUSY { return }
            usleep(2000)
        }
    }

    /// The names of the directories in `path`.
    private static func subdirectories(of path: String) -> [String] {
        guard let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            guard entry.pointee.d_type == UInt8(DT_DIR) else { continue }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
