// SPDX-License-Identifier: Apache-2.0

import Logging
import NetPathCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The hooks directory: which files are hooks, in which order, and whether each may run.
///
/// Hooks are the files of the directory in lexical (byte) order, minus ignored names (see
/// ``HookEntry/IgnoreReason``). Whether a hook may run is decided when it is about to run, by
/// ``open(_:)`` (every directory from `/`, then the file), or for an event's first hook by
/// ``snapshot()`` (the directories, walked for the event's listing just before) and
/// ``open(_:in:)`` (the file); ``entries()`` applies the same checks for `netpathctl hooks`.
/// "Every directory from `/`" is checked by a walk (``TrustedPath``) the first time and whenever
/// anything changed; in between, the kept walk is confirmed by an `lstat` of each directory on the
/// path (``TrustedPath/recheck(policy:)``), which establishes the same, for fewer system calls.
///
/// Change detection: before each use the directory's status is read (by the check of
/// ``snapshot()``; by a `stat` for ``hookNames()``) and it is re-listed only
/// when its device, inode, mtime or ctime differ from the last listing. That is cheaper than an
/// inotify watch (no extra thread, descriptor or queue overflow to handle) and enough, because a
/// listing holds only names: trust is re-checked on every run anyway, so a `chmod` or `chown`
/// (which does not touch the directory's mtime) takes effect at the next event. A listing made
/// within ``racyWindow`` of the directory's mtime is not trusted, since the kernel's timestamp
/// clock is coarse and a second change in the same tick would not move the mtime (git's "racily
/// clean" problem).
package final class HookDirectory: Sendable {
    /// How close to the directory's mtime a listing may be taken and still be reused.
    static let racyWindow: Int64 = 2_000_000_000

    /// The directory's path (`hooks_dir`).
    package let path: String
    private let policy: TrustPolicy
    private let logger: Logger
    private let cache = Mutex<Listing?>(nil)
    /// The last walk of ``path`` from `/`, kept (an `O_PATH` descriptor) while ``path`` names it
    /// without a symlink, `.` or `..`: later checks confirm it with
    /// ``TrustedPath/recheck(policy:)`` instead of walking again, and walk again when that fails.
    /// (The descriptor keeps the directory's file system busy: to unmount one holding the hooks
    /// directory, stop the agent first.)
    private let walked = Mutex<TrustedPath?>(nil)
    /// Refusals already logged, as `name \0 code`, so each is logged once until the file changes.
    private let logged = Mutex<Set<String>>([])

    private struct Stamp: Equatable {
        var device: UInt64
        var inode: UInt64
        var mtime: Int64
        var ctime: Int64

        init(_ status: stat) {
            device = UInt64(status.st_dev)
            inode = UInt64(status.st_ino)
            mtime = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
            ctime = Int64(status.st_ctim.tv_sec) * 1_000_000_000 + Int64(status.st_ctim.tv_nsec)
        }
    }

    private struct Listing {
        var stamp: Stamp
        var names: [String]
        var reusable: Bool
    }

    /// - Parameters:
    ///   - path: The hooks directory.
    ///   - logger: Where refusals are logged (once per file and reason).
    package convenience init(path: String, logger: Logger) {
        self.init(path: path, policy: .current, logger: logger)
    }

    init(path: String, policy: TrustPolicy, logger: Logger) {
        self.path = path
        self.policy = policy
        self.logger = logger
    }

    /// The candidate hook names in lexical byte order: every file except ignored names.
    ///
    /// Re-lists the directory only when it changed. A missing directory has no hooks.
    package func hookNames() -> [String] {
        guard let stamp = stampNow() else {
            cache.withLock { $0 = nil }
            return []
        }
        return names(at: stamp)
    }

    /// An event's view of the directory: the hook names, and the directory itself as checked
    /// just now, which the event's first hook is opened from.
    package struct Snapshot: Sendable {
        /// ``HookDirectory/hookNames()``.
        package let names: [String]
        /// The directory walked and checked from `/` (``TrustedPath``); `nil` when it is not
        /// trusted or not there (each hook's ``HookDirectory/open(_:in:)`` then says why).
        let checked: TrustedPath?
        /// Which directory took it, and when: ``HookDirectory/open(_:in:)`` walks again for
        /// another directory's snapshot or one older than ``HookDirectory/snapshotLifetime``.
        let owner: ObjectIdentifier
        let taken: ContinuousClock.Instant
    }

    /// How long a ``Snapshot``'s check stands in for the walk: it is taken for the hook about to
    /// be spawned, not for later ones.
    static let snapshotLifetime: Duration = .milliseconds(100)

    /// The hook names, and the directory walked and checked for the event's first hook: one walk
    /// and its `fstat` serve as the listing's change check and as that hook's directory check.
    /// (A separate `stat` of the path before the walk made every event look at the directory
    /// twice; BENCHMARKS.md, "A `stat` of the hooks directory".) Hooks run later in the event walk
    /// again: a check is only as fresh as its run.
    package func snapshot() -> Snapshot {
        let taken = ContinuousClock.now
        guard let (directory, status) = try? checkedDirectory(), status.st_mode & S_IFMT == S_IFDIR else {
            return Snapshot(names: hookNames(), checked: nil, owner: ObjectIdentifier(self), taken: taken)
        }
        return Snapshot(
            names: names(at: Stamp(status)),
            checked: directory,
            owner: ObjectIdentifier(self),
            taken: taken
        )
    }

    /// The hooks directory, checked from `/` now, and its status now: the kept walk when
    /// ``TrustedPath/recheck(policy:)`` confirms it, else a new walk (kept when ``path`` is
    /// already resolved; a path through a symlink is walked every time, so a symlink pointed
    /// elsewhere takes effect at the next check).
    private func checkedDirectory() throws(HookRefusal) -> (TrustedPath, stat) {
        if let kept = walked.withLock({ $0 }), let status = kept.recheck(policy: policy) {
            return (kept, status)
        }
        do {
            let directory = try TrustedPath.open(path, policy: policy)
            // Bytes, not String's ==: canonically equivalent spellings (é precomposed or not) are
            // different paths to the kernel, and one may be a symlink to the other.
            let keep = directory.path.utf8.elementsEqual(path.utf8) && directory.status.st_mode & S_IFMT == S_IFDIR
            walked.withLock { $0 = keep ? directory : nil }
            return (directory, directory.status)
        } catch {
            walked.withLock { $0 = nil }
            throw error
        }
    }

    /// The names at `stamp`: the cached listing when it is still good, else a new one.
    private func names(at stamp: Stamp) -> [String] {
        if let names = cache.withLock({ $0.flatMap { $0.stamp == stamp && $0.reusable ? $0.names : nil } }) {
            return names
        }
        let names = (try? listNames()) ?? []
        let candidates = names.filter { HookEntry.IgnoreReason(name: $0) == nil && Self.isValidName($0) }
        let now = Self.realtimeNanoseconds()
        let listing = Listing(stamp: stamp, names: candidates, reusable: now - stamp.mtime > Self.racyWindow)
        cache.withLock { $0 = listing }
        return candidates
    }

    /// Every file in the directory with its status, in lexical order: `netpathctl hooks`.
    ///
    /// Trust is checked now, on each file; refusals are logged as by ``open(_:)``.
    package func entries() -> [HookEntry] {
        let names = (try? listNames()) ?? []
        return names.map { name in
            if let reason = HookEntry.IgnoreReason(name: name) {
                return HookEntry(name: name, status: .ignored(reason))
            }
            if !Self.isValidName(name) { return HookEntry(name: name, status: .refused(.invalidName)) }
            do throws(HookRefusal) {
                _ = try open(name)
                return HookEntry(name: name, status: .accepted)
            } catch {
                return HookEntry(name: name, status: .refused(error))
            }
        }
    }

    /// Opens hook `name` and checks the open file: the returned value is what runs.
    ///
    /// - Throws: The ``HookRefusal`` that keeps it from running; the first time a file is
    ///   refused for a reason, the refusal is logged at `warning`.
    package func open(_ name: String) throws(HookRefusal) -> OpenedHook {
        try open(name, in: nil)
    }

    /// ``open(_:)`` from `snapshot`'s checked directory, taken just before by this directory's
    /// ``snapshot()`` (the walk from `/` is not repeated); `nil`, another directory's snapshot or
    /// an old one walks as ``open(_:)`` does.
    package func open(_ name: String, in snapshot: Snapshot?) throws(HookRefusal) -> OpenedHook {
        let fresh = snapshot.flatMap { snapshot in
            snapshot.owner == ObjectIdentifier(self) && ContinuousClock.now - snapshot.taken < Self.snapshotLifetime
                ? snapshot.checked : nil
        }
        do {
            let hook = try check(name, in: fresh)
            // A file refused before and fixed since is logged again if it breaks again.
            logged.withLock { set in
                if !set.isEmpty { set = set.filter { !$0.hasPrefix(name + "\0") } }
            }
            return hook
        } catch {
            let key = name + "\0" + error.code
            if logged.withLock({ $0.insert(key).inserted }) {
                logger.warning(
                    "hook refused: \(name.escapingControlCharacters): \(error)",
                    metadata: ["hook": .string(name), "reason": .string(error.code), "hooks_dir": .string(path)]
                )
            }
            throw error
        }
    }

    private func check(_ name: String, in checked: TrustedPath?) throws(HookRefusal) -> OpenedHook {
        // By bytes: String's own `contains` compares Characters, before every run.
        guard !name.isEmpty, !name.containsUTF8(UInt8(ascii: "/")), name != ".", name != ".." else {
            throw .cannotOpen(errno: ENOENT)
        }
        guard Self.isValidName(name) else { throw .invalidName }
        // Every directory from `/` to the hooks directory, then the hook (following a symlink:
        // the target is what runs, so the target and every directory on its way are checked).
        let directory: TrustedPath
        let status: stat
        if let checked {
            (directory, status) = (checked, checked.status)
        } else {
            (directory, status) = try checkedDirectory()
        }
        guard status.st_mode & S_IFMT == S_IFDIR else { throw .cannotOpen(errno: ENOTDIR) }
        let file = try TrustedPath.open(name, from: directory, policy: policy)
        if let refusal = policy.refusal(mode: UInt32(file.status.st_mode), owner: UInt32(file.status.st_uid)) {
            throw refusal
        }
        return OpenedHook(name: name, directory: directory.path, file: file)
    }

    /// Whether `name` can be a hook's name: valid UTF-8 (as listed, without repairs) and no
    /// control characters, so it fits one line of `netpathctl hooks` and of the log.
    static func isValidName(_ name: String) -> Bool {
        !name.containsReplacementCharacter && !name.containsControlCharacters
    }

    private func stampNow() -> Stamp? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return Stamp(status)
    }

    /// The directory's entries in byte order; names that are not UTF-8 are kept (repaired, with
    /// U+FFFD) so that ``entries()`` lists them as refused.
    private func listNames() throws(HookRefusal) -> [String] {
        guard let stream = opendir(path) else { throw .cannotOpen(errno: errno) }
        defer { closedir(stream) }
        var names: [[UInt8]] = []
        while let entry = readdir(stream) {
            let bytes = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                Array(raw.prefix { $0 != 0 })
            }
            if bytes == [UInt8(ascii: ".")] || bytes == [UInt8(ascii: "."), UInt8(ascii: ".")] { continue }
            names.append(bytes)
        }
        // Lexical order is byte order, as in run-parts and `LC_ALL=C ls`, never locale collation.
        names.sort { $0.lexicographicallyPrecedes($1) }
        return names.map { String(decoding: $0, as: UTF8.self) }
    }

    static func realtimeNanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }
}
