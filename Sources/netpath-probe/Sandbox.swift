// SPDX-License-Identifier: Apache-2.0

import CSeccomp
import Glibc
import NetPathCore
import SystemPackage

/// What `netpath-probe` does to itself before it reads anything from the network
/// (docs/probe-helper.md): another user, no capabilities, no_new_privs, a seccomp filter.
enum Sandbox {
    /// A step that failed, with its errno.
    struct Failure: Error, CustomStringConvertible {
        /// The call or check that failed: `"setresuid"`, `"seccomp rule for socket"`.
        var step: String
        var errno: Int32

        init(_ step: String, _ error: Int32 = Glibc.errno) {
            self.step = step
            self.errno = error
        }

        var description: String { "\(step): \(String(cString: strerror(errno)))" }
    }

    /// CAP_NET_RAW's number.
    static let netRaw: UInt32 = 13
    /// CAP_SETPCAP's number.
    static let setPCap: UInt32 = 8

    /// The user probes run as: `netpath-probe` if it exists, else `nobody`.
    static func probeUser() -> (uid: uid_t, gid: gid_t) {
        for name in ["netpath-probe", "nobody"] {
            if let entry = getpwnam(name), entry.pointee.pw_uid != 0 {
                return (entry.pointee.pw_uid, entry.pointee.pw_gid)
            }
        }
        return (65534, 65534)
    }

    /// Whether `net.ipv4.ping_group_range` lets group `gid` open ping sockets (it also governs
    /// ICMPv6 ping sockets). In a fresh network namespace it is `1 0`: nobody.
    static func pingSocketsAllowed(gid: gid_t) -> Bool {
        guard let text = readSmallFile("/proc/sys/net/ipv4/ping_group_range") else { return false }
        let numbers = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).compactMap { UInt64($0) }
        guard numbers.count == 2 else { return false }
        return numbers[0] <= UInt64(gid) && UInt64(gid) <= numbers[1]
    }

    /// Changes to the probe user with no supplementary groups and no capabilities, or only
    /// CAP_NET_RAW when `keepRawSockets`. Only when running as root; otherwise a no-op.
    static func dropPrivileges(to user: (uid: uid_t, gid: gid_t), keepRawSockets: Bool) throws(Failure) {
        guard geteuid() == 0 else { return }
        // The bounding set too, so that nothing this process could exec (it can exec nothing:
        // seccomp) or any later setuid could regain a capability. Dropping needs CAP_SETPCAP,
        // which netpathd's unit does not give it (nor its hooks): without it the bounding set
        // stays as netpathd's, and what guards it is what follows, since a capability outside
        // the permitted set comes back only through an exec, which no_new_privs and the seccomp
        // filter both rule out.
        let canDrop = effectiveCapabilities() & (1 << setPCap) != 0
        let last = readSmallFile("/proc/sys/kernel/cap_last_cap").flatMap { UInt32($0.filter(\.isNumber)) } ?? 40
        for cap in 0...last where canDrop && !(keepRawSockets && cap == netRaw) {
            guard netpath_prctl(PR_CAPBSET_DROP, UInt(cap), 0) == 0 || errno == EINVAL else {
                throw Failure("PR_CAPBSET_DROP \(cap)")
            }
        }
        guard setgroups(0, nil) == 0 else { throw Failure("setgroups") }
        guard setresgid(user.gid, user.gid, user.gid) == 0 else { throw Failure("setresgid") }
        if keepRawSockets {
            guard netpath_prctl(PR_SET_KEEPCAPS, 1, 0) == 0 else { throw Failure("PR_SET_KEEPCAPS") }
        }
        guard setresuid(user.uid, user.uid, user.uid) == 0 else { throw Failure("setresuid") }
        let mask: UInt32 = keepRawSockets ? 1 << netRaw : 0
        guard netpath_capset(mask, mask) == 0 else { throw Failure("capset") }
        _ = netpath_prctl(PR_CAP_AMBIENT, UInt(PR_CAP_AMBIENT_CLEAR_ALL), 0)
        if keepRawSockets { _ = netpath_prctl(PR_SET_KEEPCAPS, 0, 0) }
        // Check that there is no way back.
        guard setuid(0) != 0, getuid() != 0, geteuid() != 0, getgid() != 0 || user.gid == 0 else {
            throw Failure("still root after dropping privileges", EPERM)
        }
    }

    /// no_new_privs, then the seccomp filter: only the system calls probing needs. Anything
    /// else fails with EPERM (see `denied`'s comment).
    static func confine() throws(Failure) {
        guard netpath_prctl(PR_SET_NO_NEW_PRIVS, 1, 0) == 0 else { throw Failure("PR_SET_NO_NEW_PRIVS") }
        try SeccompFilter.install()
    }

    /// Tries what the sandbox must refuse and says what happened to each: `NAME=ERROR`, or
    /// `NAME=ALLOWED` when it was not refused.
    static func attemptForbidden() -> String {
        func outcome(_ name: String, _ result: Int32) -> String {
            "\(name)=\(result >= 0 ? "ALLOWED" : String(cString: strerror(errno)))"
        }
        var checks: [String] = []
        let unix = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        checks.append(outcome("unix_socket", unix))
        let file = open("/tmp/netpath-probe-sandbox-check", O_WRONLY | O_CREAT, 0o600)
        checks.append(outcome("create_file", file))
        let writable = open("/dev/null", O_WRONLY)
        checks.append(outcome("open_for_writing", writable))
        checks.append(outcome("mkdir", mkdir("/tmp/netpath-probe-sandbox-check.d", 0o700)))
        checks.append(outcome("setuid_0", setuid(0)))
        let child = fork()
        if child == 0 { _exit(0) }
        checks.append(outcome("fork", child))
        var argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
        checks.append(outcome("execve", execv("/bin/true", &argv)))
        checks.append(outcome("kill_init", kill(1, 0)))
        return checks.joined(separator: " ")
    }

    /// The effective capabilities, from /proc/self/status (read before the filter is in place).
    static func effectiveCapabilities() -> UInt64 {
        guard let status = readSmallFile("/proc/self/status") else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("CapEff:") {
            return UInt64(line.dropFirst(7).trimmingPrefix(while: { $0 == "\t" || $0 == " " }), radix: 16) ?? 0
        }
        return 0
    }

    /// A small file's text (a /proc or /etc file), or nil.
    static func readSmallFile(_ path: String) -> String? {
        guard let file = try? FileDescriptor.open(reading: path) else { return nil }
        defer { try? file.close() }
        return (try? file.readToEnd(limit: 64 * 1024)).map { String(decoding: $0, as: UTF8.self) }
    }
}

extension Substring {
    fileprivate func trimmingPrefix(while predicate: (Character) -> Bool) -> Substring { drop(while: predicate) }
}
