#if canImport(Glibc)
    import Glibc
#endif

/// A hook file that passed the trust checks, held open: the exact file that was checked is the
/// one that runs.
///
/// ``HookDirectory/open(_:)`` opens the file with `O_PATH | O_CLOEXEC` (following a symlink),
/// checks `fstat` of that descriptor, and ``HookRunner`` executes the same descriptor. Renaming
/// another file over the hook's name after the check changes nothing: the descriptor still
/// names the checked inode.
///
/// - Important: Keep the value alive until the hook process has exited. A script's interpreter
///   opens the script by the path the kernel hands it (``executablePath``), which is valid only
///   while this descriptor is open in the agent.
public final class OpenedHook: Sendable {
    /// The file name in the hooks directory (argv[0] of the hook).
    public let name: String
    /// The device and inode of the checked file.
    public let device: UInt64
    public let inode: UInt64
    /// The checked file's mode, owner and size.
    public let mode: UInt32
    public let owner: UInt32
    public let size: Int64
    let descriptor: Int32

    init(name: String, descriptor: Int32, status: stat) {
        self.name = name
        self.descriptor = descriptor
        self.device = UInt64(status.st_dev)
        self.inode = UInt64(status.st_ino)
        self.mode = UInt32(status.st_mode)
        self.owner = UInt32(status.st_uid)
        self.size = Int64(status.st_size)
    }

    deinit { close(descriptor) }

    /// The path that executes the held descriptor from a child process: `/proc/AGENT_PID/fd/N`.
    ///
    /// Why not `/proc/self/fd/N` or `execveat(fd, "", AT_EMPTY_PATH)`: the child closes every
    /// descriptor above 2 before it execs (swift-subprocess does, and a hook must not inherit
    /// the agent's descriptors), so in the child the descriptor no longer exists. The agent's
    /// own entry stays valid, names the same open file, and is reachable by the child, which has
    /// the agent's credentials. For a `#!` script the kernel passes this path to the interpreter,
    /// which reopens it — still the checked inode, because the agent holds it open.
    public var executablePath: String { "/proc/\(getpid())/fd/\(descriptor)" }
}
