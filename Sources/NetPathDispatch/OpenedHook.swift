// SPDX-License-Identifier: Apache-2.0

#if canImport(Glibc)
    import Glibc
#endif

/// A hook file that passed the trust checks: what runs, and what it was when it was checked.
///
/// ``HookDirectory/open(_:)`` checks every directory from `/` to the hooks directory (a walk,
/// ``TrustedPath``, or a confirmation of the last one: ``TrustedPath/recheck(policy:)``) and on a
/// symlink target's path, then the file itself. ``HookRunner`` executes
/// ``executablePath``, so a script's `$0` is its real path and `dirname "$0"` works as hook
/// authors (and the scripts other dispatchers run) expect.
///
/// How the check-then-exec race stays closed: the kernel resolves ``executablePath`` again at
/// exec, but every directory it passes through is owned by root or the agent's user and closed
/// to group and others, and so is the file. Between the check and the exec only those two can
/// rename, replace or rewrite anything on the way — and they could equally edit the hook itself.
/// (Before the directories were checked, the runner executed the checked descriptor through
/// `/proc/PID/fd/N`, which closed the race for the file but gave scripts a useless `$0`.)
package struct OpenedHook: Hashable, Sendable {
    /// The file name in the hooks directory (argv[0] of the hook).
    package let name: String
    /// The path that is executed: the hooks directory's resolved path (no symlinks) and ``name``.
    package let executablePath: String
    /// Where the name leads, every symlink followed: the file that was checked.
    package let resolvedPath: String
    /// The device and inode of the checked file.
    package let device: UInt64
    package let inode: UInt64
    /// The checked file's mode, owner and size.
    package let mode: UInt32
    package let owner: UInt32
    package let size: Int64

    init(name: String, directory: String, file: TrustedPath) {
        self.name = name
        self.executablePath = TrustedPath.joined(directory, name)
        self.resolvedPath = file.path
        self.device = UInt64(file.status.st_dev)
        self.inode = UInt64(file.status.st_ino)
        self.mode = UInt32(file.status.st_mode)
        self.owner = UInt32(file.status.st_uid)
        self.size = Int64(file.status.st_size)
    }
}
