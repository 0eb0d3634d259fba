// SPDX-License-Identifier: Apache-2.0

import CLinux

#if canImport(Glibc)
    import Glibc
#endif

/// A file reached from `/` one component at a time, every directory on the way checked.
///
/// Why walk by hand instead of `open(path)` and `fstat`: the kernel resolves a path for us, but
/// tells nothing about the directories it passed through, and those decide who can change what
/// runs. A root-owned, mode 0755 hook inside `/tmp/x/` (or reached through a symlink into a
/// directory a user may write) can be swapped by that user between any check and any exec.
/// So, like OpenSSH's `safe_path()` and systemd's `chase()`, the walk opens each component with
/// `O_PATH | O_NOFOLLOW` relative to the directory it already holds and checked, reads symlinks
/// itself (an absolute target starts again at `/`, `..` goes up), and checks *every* directory it
/// enters — the ancestors of the hooks directory, the hooks directory, and every directory on a
/// symlink target's path — with ``TrustPolicy/directoryRefusal(path:mode:owner:)``: owned by root
/// or the agent's user and not writable by group or others. A sticky world-writable directory
/// (`/tmp`) does not pass: its owner and root can still rename entries in it, and a name that
/// does not exist yet there is anybody's.
///
/// When every directory on the path passes, only root or the agent's own user can change what
/// the path names: that is what lets the runner execute the hook by its path (so a script's `$0`
/// is its real path) without a check-then-exec race that anyone else could win.
final class TrustedPath: Sendable {
    /// The opened file (`O_PATH`), owned by this value; -1 for a file found by its name in a
    /// checked directory (``open(_:from:policy:)``'s shortcut), which nothing is opened from.
    let descriptor: Int32
    /// The resolved path: no symlinks, no `.` or `..`.
    let path: String
    /// `fstat` of ``descriptor``.
    let status: stat

    /// The kernel's limit on symlinks followed while resolving one path (MAXSYMLINKS).
    static let maximumSymlinks = 40

    /// `O_PATH` from `<fcntl.h>`, which Glibc's Swift module hides behind `_GNU_SOURCE`.
    static let openPath: Int32 = np_o_path()

    private init(descriptor: Int32, path: String, status: stat) {
        self.descriptor = descriptor
        self.path = path
        self.status = status
    }

    deinit { if descriptor >= 0 { close(descriptor) } }

    /// `directory/name` (`/name` in `/`), written at once into the string's own storage: a hook's
    /// run joins its path twice on its way to the spawn (its file here, its `$0` in
    /// ``OpenedHook``), and `+` makes each join two concatenations, each growing a string
    /// (BENCHMARKS.md, "a hook's path joined").
    static func joined(_ directory: String, _ name: String) -> String {
        var directory = directory
        var name = name
        return directory.withUTF8 { directory in
            name.withUTF8 { name in
                let base = directory.count == 1 && directory[0] == UInt8(ascii: "/") ? 0 : directory.count
                return String(unsafeUninitializedCapacity: base + 1 + name.count) { out in
                    _ = out.initialize(from: directory.prefix(base))
                    out[base] = UInt8(ascii: "/")
                    _ = UnsafeMutableBufferPointer(rebasing: out[(base + 1)...]).initialize(from: name)
                    return base + 1 + name.count
                }
            }
        }
    }

    /// Opens `path` (absolute, or relative to `base`) checking every directory it passes through.
    ///
    /// - Parameters:
    ///   - path: The path to open. A relative path without `base` is taken from the working
    ///     directory, resolved from `/` like an absolute one.
    ///   - base: An opened directory the relative path starts from; it and its ancestors were
    ///     checked when it was opened.
    ///   - policy: The rules each directory must pass.
    /// - Returns: The final component opened with `O_PATH`, whatever its type: the caller checks
    ///   it. (A file named directly in `base` is only `lstat`ed: its value has no descriptor.)
    /// - Throws: ``HookRefusal/directoryUntrustedOwner(path:uid:)`` or
    ///   ``HookRefusal/directoryWritableByGroupOrOthers(path:mode:)`` for the first directory that
    ///   fails, ``HookRefusal/cannotOpen(errno:)`` for a missing component, a loop (`ELOOP`) or a
    ///   file where a directory was needed (`ENOTDIR`).
    static func open(_ path: String, from base: TrustedPath? = nil, policy: TrustPolicy) throws(HookRefusal)
        -> TrustedPath
    {
        // The path resolved so far, without a trailing slash ("" is `/`): one string grown and cut
        // back, not a list of components joined for every directory (the walk runs before every hook).
        if let base, let file = try statName(path, in: base, policy: policy) { return file }
        var resolved: String
        var current: Int32
        var pending: [Substring]
        if let base, !path.hasPrefix("/") {
            current = fcntl(base.descriptor, F_DUPFD_CLOEXEC, 0)
            guard current >= 0 else { throw .cannotOpen(errno: errno) }
            resolved = base.path == "/" ? "" : base.path
            pending = Self.parts(path)
        } else {
            (current, resolved) = try openRoot(policy)
            pending = Self.parts(path.hasPrefix("/") ? path : Self.workingDirectory() + "/" + path)
        }
        var symlinks = 0
        do throws(HookRefusal) {
            while let part = pending.popLast() {
                if part == "." { continue }
                if part == ".." {
                    // `/..` is `/`; anywhere else the parent is opened from the descriptor, not
                    // from the text, and checked like any directory entered.
                    if resolved.isEmpty { continue }
                    let parent = openat(current, "..", openPath | O_DIRECTORY | O_CLOEXEC)
                    guard parent >= 0 else { throw HookRefusal.cannotOpen(errno: errno) }
                    close(current)
                    current = parent
                    // Cut at the last slash byte: a Character search would take `/` and a
                    // combining mark after it for one character, and cut too far.
                    let slash = resolved.utf8.lastIndex(of: UInt8(ascii: "/")) ?? resolved.startIndex
                    resolved = String(resolved[..<slash])
                    try check(try Self.status(of: current), path: Self.display(resolved), policy: policy)
                    continue
                }
                let (next, status) = try openEntry(String(part), in: current)
                switch status.st_mode & S_IFMT {
                case S_IFLNK:
                    symlinks += 1
                    let target = Self.readLink(next)
                    close(next)
                    guard symlinks <= maximumSymlinks else { throw HookRefusal.cannotOpen(errno: ELOOP) }
                    guard let target, !target.isEmpty else { throw HookRefusal.cannotOpen(errno: ENOENT) }
                    if target.hasPrefix("/") {
                        close(current)
                        current = -1
                        (current, resolved) = try openRoot(policy)
                    }
                    pending.append(contentsOf: Self.parts(target))
                case S_IFDIR:
                    close(current)
                    current = next
                    resolved += "/"
                    resolved += part
                    try check(status, path: Self.display(resolved), policy: policy)
                default:
                    // A file ends the walk; anything after it (`hook/x`) cannot be resolved.
                    guard pending.allSatisfy({ $0 == "." }) else {
                        close(next)
                        throw HookRefusal.cannotOpen(errno: ENOTDIR)
                    }
                    close(current)
                    return TrustedPath(descriptor: next, path: resolved + "/" + part, status: status)
                }
            }
        } catch {
            if current >= 0 { close(current) }
            throw error
        }
        var status = stat()
        guard fstat(current, &status) == 0 else {
            let code = errno
            close(current)
            throw .cannotOpen(errno: code)
        }
        return TrustedPath(descriptor: current, path: Self.display(resolved), status: status)
    }

    /// The common case of a walk from an opened directory: `name` is one component and not a
    /// symlink or a directory, so the walk would open it, `fstat` it and stop. Done directly, that
    /// saves duplicating `base`'s descriptor, splitting the name and opening the file (the walk
    /// runs before every hook): the value has the file's status and no descriptor. `nil` when the
    /// general walk must decide: a path, `.`/`..`, a symlink or a directory.
    private static func statName(_ name: String, in base: TrustedPath, policy: TrustPolicy) throws(HookRefusal)
        -> TrustedPath?
    {
        guard !name.isEmpty, name != ".", name != "..", !name.containsUTF8(UInt8(ascii: "/")) else { return nil }
        // The entry's own status (`lstat` relative to the checked directory): what `openat` with
        // `O_PATH | O_NOFOLLOW` and an `fstat` of it would say, without a descriptor to open and
        // close for a file nothing is opened from (two system calls of three, and a file
        // description allocated and freed, before every hook's spawn).
        var status = stat()
        let found = name.withCString { fstatat(base.descriptor, $0, &status, AT_SYMLINK_NOFOLLOW) }
        guard found == 0 else { throw .cannotOpen(errno: errno) }
        let type = status.st_mode & S_IFMT
        guard type != S_IFLNK, type != S_IFDIR else { return nil }
        return TrustedPath(descriptor: -1, path: joined(base.path, name), status: status)
    }

    /// Opens `name` in `directory` without following a symlink (`O_PATH | O_NOFOLLOW`), and
    /// `fstat`s it: the descriptor, owned by the caller, and its status.
    private static func openEntry(_ name: String, in directory: Int32) throws(HookRefusal) -> (Int32, stat) {
        // withCString, not the implicit conversion: that copies every string into a new array
        // first, a malloc on each hook's way to its spawn (withCString copies a short name to
        // the stack, and passes a long one's own bytes).
        let entry = name.withCString { openat(directory, $0, openPath | O_NOFOLLOW | O_CLOEXEC) }
        guard entry >= 0 else { throw .cannotOpen(errno: errno) }
        do {
            return (entry, try status(of: entry))
        } catch {
            close(entry)
            throw error
        }
    }

    /// Checks again that ``path`` names this directory through directories that pass `policy`,
    /// without opening anything: an `lstat` of every prefix of ``path`` (`/`, `/etc`,
    /// `/etc/netpath`, …) must find a directory (not a symlink) that passes, and the last one must
    /// be this very directory (device and inode). That is what a new walk from `/` would establish
    /// (``path`` is resolved: no symlink, `.` or `..`), for one `lstat` per directory instead of
    /// an `openat`, an `fstat` and a `close`, and without a file description to allocate and free:
    /// a new walk before every event slowed every hook's start
    /// (BENCHMARKS.md, "The hooks directory's walk from `/`").
    ///
    /// - Returns: The directory's status now, or `nil` when anything differs or fails: the caller
    ///   walks again, and that walk says why it refuses.
    func recheck(policy: TrustPolicy) -> stat? {
        guard status.st_mode & S_IFMT == S_IFDIR, path.hasPrefix("/") else { return nil }
        var path = path
        var current = stat()
        // A copy on the stack, cut into prefixes in place: no allocation before each hook's run.
        let passed = path.withUTF8 { utf8 in
            withUnsafeTemporaryAllocation(of: CChar.self, capacity: utf8.count + 1) { buffer -> Bool in
                for (index, byte) in utf8.enumerated() { buffer[index] = CChar(bitPattern: byte) }
                buffer[utf8.count] = 0
                return Self.prefixesAreTrusted(buffer, end: utf8.count, &current, policy)
            }
        }
        guard passed, current.st_dev == status.st_dev, current.st_ino == status.st_ino else { return nil }
        return current
    }

    /// Whether `/` and each directory prefix of the path in `buffer` (NUL at `end`) is a
    /// directory that passes `policy`; the last one's status is left in `current`.
    private static func prefixesAreTrusted(
        _ buffer: UnsafeMutableBufferPointer<CChar>,
        end: Int,
        _ current: inout stat,
        _ policy: TrustPolicy
    ) -> Bool {
        let base = buffer.baseAddress!
        // "/" first, then each prefix, cut at the next slash (or the end) by a NUL put there for
        // the call and taken away after.
        var index = 1
        guard isTrustedDirectory("/", &current, policy) else { return false }
        while index <= end {
            if index == end || buffer[index] == CChar(UInt8(ascii: "/")) {
                let saved = buffer[index]
                buffer[index] = 0
                let trusted = isTrustedDirectory(base, &current, policy)
                buffer[index] = saved
                guard trusted else { return false }
            }
            index += 1
        }
        return true
    }

    /// `lstat(path)` finds a directory that passes `policy`; its status is left in `status`.
    private static func isTrustedDirectory(
        _ path: UnsafePointer<CChar>,
        _ status: inout stat,
        _ policy: TrustPolicy
    ) -> Bool {
        guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else { return false }
        return policy.directoryRefusal(path: "", mode: UInt32(status.st_mode), owner: UInt32(status.st_uid)) == nil
    }

    private static func openRoot(_ policy: TrustPolicy) throws(HookRefusal) -> (Int32, String) {
        let root = Glibc.open("/", openPath | O_DIRECTORY | O_CLOEXEC)
        guard root >= 0 else { throw .cannotOpen(errno: errno) }
        do {
            try check(try status(of: root), path: "/", policy: policy)
        } catch {
            close(root)
            throw error
        }
        return (root, "")
    }

    private static func status(of descriptor: Int32) throws(HookRefusal) -> stat {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .cannotOpen(errno: errno) }
        return status
    }

    /// Checks a directory entered, by the `fstat` of its opened descriptor. The path is only
    /// spelled out for a refusal: the walk runs before every hook.
    private static func check(_ status: stat, path: @autoclosure () -> String, policy: TrustPolicy) throws(HookRefusal)
    {
        if let refusal = policy.directoryRefusal(
            path: path(),
            mode: UInt32(status.st_mode),
            owner: UInt32(status.st_uid)
        ) {
            throw refusal
        }
    }

    /// The target of the symlink opened (`O_PATH | O_NOFOLLOW`) as `descriptor`: an empty path
    /// makes `readlinkat` read the link itself (Linux 2.6.39), so nothing is looked up by name.
    private static func readLink(_ descriptor: Int32) -> String? {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = buffer.withUnsafeMutableBufferPointer { raw in
            raw.withMemoryRebound(to: CChar.self) { readlinkat(descriptor, "", $0.baseAddress!, $0.count) }
        }
        guard count >= 0, count < buffer.count else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }

    private static func parts(_ path: String) -> [Substring] {
        // Split at slash bytes, not Characters: `/` followed by a combining mark is one
        // Character, and a component holding it would have the kernel walk a directory the walk
        // never checked. A slash byte always ends a scalar, so each piece is valid UTF-8.
        // Reversed: the walk pops the next component from the end.
        path.utf8.split(separator: UInt8(ascii: "/")).reversed().map { Substring($0) }
    }

    /// `resolved` as a path: `/` for the root.
    private static func display(_ resolved: String) -> String { resolved.isEmpty ? "/" : resolved }

    private static func workingDirectory() -> String {
        guard let cwd = getcwd(nil, 0) else { return "/" }
        defer { free(cwd) }
        return String(cString: cwd)
    }
}
