// SPDX-License-Identifier: Apache-2.0

import NetPathCore
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// Why a file in the hooks directory is not run.
///
/// The checks are made on the open file that would be executed (see ``HookDirectory/open(_:)``),
/// so a refusal names what the file was at that moment, not when the directory was listed.
package enum HookRefusal: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file (after following symlinks) is not a regular file; the payload names what it is.
    case notRegularFile(String)
    /// No execute bit that applies to the agent is set.
    case notExecutable(mode: UInt32)
    /// Owned by someone other than root or the agent's own user.
    case untrustedOwner(uid: UInt32)
    /// The group or others may write the file.
    case writableByGroupOrOthers(mode: UInt32)
    /// The setuid or setgid bit is set.
    case setuidOrSetgid(mode: UInt32)
    /// A directory on the hook's path (`/` down to the hooks directory, and every directory a
    /// symlink leads through) is owned by someone other than root or the agent's user, who could
    /// swap the hook.
    case directoryUntrustedOwner(path: String, uid: UInt32)
    /// The group or others may write a directory on the hook's path (a sticky bit does not make it
    /// safe), so they could swap the hook.
    case directoryWritableByGroupOrOthers(path: String, mode: UInt32)
    /// The name is not valid UTF-8 or holds a control character, so it cannot be named in config,
    /// shown in one line of a listing or a log, or passed as argv[0] unchanged.
    case invalidName
    /// Opening or inspecting the file failed (dangling symlink, loop, permission).
    case cannotOpen(errno: Int32)

    /// A stable identifier for the reason (`not-regular-file`, `untrusted-owner`, …), for JSON
    /// output and metrics labels.
    package var code: String {
        switch self {
        case .notRegularFile: return "not-regular-file"
        case .notExecutable: return "not-executable"
        case .untrustedOwner: return "untrusted-owner"
        case .writableByGroupOrOthers: return "writable-by-group-or-others"
        case .setuidOrSetgid: return "setuid-or-setgid"
        case .directoryUntrustedOwner: return "directory-untrusted-owner"
        case .directoryWritableByGroupOrOthers: return "directory-writable-by-group-or-others"
        case .invalidName: return "invalid-name"
        case .cannotOpen: return "cannot-open"
        }
    }

    package var description: String {
        switch self {
        case .notRegularFile(let kind): return "not a regular file (\(kind))"
        case .notExecutable(let mode): return "not executable (mode \(Self.octal(mode)))"
        case .untrustedOwner(let uid): return "owned by uid \(uid), not by root or the agent's user"
        case .writableByGroupOrOthers(let mode): return "writable by group or others (mode \(Self.octal(mode)))"
        case .setuidOrSetgid(let mode): return "setuid or setgid (mode \(Self.octal(mode)))"
        case .directoryUntrustedOwner(let path, let uid):
            return "directory \(path.escapingControlCharacters) is owned by uid \(uid), not by root or the agent's user"
        case .directoryWritableByGroupOrOthers(let path, let mode):
            return
                "directory \(path.escapingControlCharacters) is writable by group or others (mode \(Self.octal(mode)))"
        case .invalidName: return "the file name is not valid UTF-8 or holds a control character"
        case .cannotOpen(let code): return "cannot open: \(Errno(rawValue: code).description)"
        }
    }

    static func octal(_ mode: UInt32) -> String {
        let digits = String(mode & 0o7777, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

/// The trust rules of docs/hooks.md, applied to `stat` results: pure, so every rule is checked in
/// one place and can be read top to bottom.
struct TrustPolicy: Sendable {
    /// The owners a hook may have: root and the agent's effective user.
    var trustedOwners: Set<UInt32>
    /// The agent's effective uid: decides which execute bit applies.
    var effectiveUID: UInt32

    static var current: TrustPolicy {
        let euid = UInt32(geteuid())
        return TrustPolicy(trustedOwners: [0, euid], effectiveUID: euid)
    }

    /// The first rule a file breaks, or `nil` when it may run. Its directories are checked apart,
    /// by ``directoryRefusal(path:mode:owner:)``, as the path is walked (``TrustedPath``).
    ///
    /// Order: what the file is, who owns it, who may write it, setuid/setgid, and last whether it
    /// can run at all.
    func refusal(mode: UInt32, owner: UInt32) -> HookRefusal? {
        let type = mode & UInt32(S_IFMT)
        guard type == UInt32(S_IFREG) else { return .notRegularFile(Self.kind(type)) }
        guard trustedOwners.contains(owner) else { return .untrustedOwner(uid: owner) }
        if mode & UInt32(S_IWGRP | S_IWOTH) != 0 { return .writableByGroupOrOthers(mode: mode) }
        if mode & UInt32(S_ISUID | S_ISGID) != 0 { return .setuidOrSetgid(mode: mode) }
        // Root may execute a file with any execute bit; anyone else (the agent's own user owning
        // the file, as just checked) needs the owner's bit.
        let executeBits = effectiveUID == 0 ? UInt32(S_IXUSR | S_IXGRP | S_IXOTH) : UInt32(S_IXUSR)
        if mode & executeBits == 0 { return .notExecutable(mode: mode) }
        return nil
    }

    /// The rule directory `path` breaks, or `nil` when only root or the agent's user can change
    /// its entries: owned by one of them, not writable by group or others. The sticky bit is not
    /// an exception (see ``TrustedPath``).
    func directoryRefusal(path: @autoclosure () -> String, mode: UInt32, owner: UInt32) -> HookRefusal? {
        guard trustedOwners.contains(owner) else { return .directoryUntrustedOwner(path: path(), uid: owner) }
        if mode & UInt32(S_IWGRP | S_IWOTH) != 0 { return .directoryWritableByGroupOrOthers(path: path(), mode: mode) }
        return nil
    }

    static func kind(_ type: UInt32) -> String {
        switch type {
        case UInt32(S_IFDIR): return "directory"
        case UInt32(S_IFIFO): return "fifo"
        case UInt32(S_IFSOCK): return "socket"
        case UInt32(S_IFCHR): return "character device"
        case UInt32(S_IFBLK): return "block device"
        case UInt32(S_IFLNK): return "symlink"
        default: return "unknown type"
        }
    }
}
