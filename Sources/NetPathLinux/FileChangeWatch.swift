// SPDX-License-Identifier: Apache-2.0

import Glibc
import Synchronization

/// Tells when what reading one file returns may have changed, through inotify: the file itself
/// (written in place), and each name on the way to it (a symlink's hops: `/etc/resolv.conf` →
/// `/run/systemd/resolve/stub-resolv.conf`) created, replaced, moved or removed.
///
/// A ``NetlinkEngine`` follows it (``NetlinkEngine/start(delivering:watching:)``): it polls
/// ``descriptor``, and when the file may have changed, ``consume()`` marks it and the engine
/// publishes a snapshot. ``check()`` then answers the file's reader without a system call. Why it
/// exists: the engine used to `stat(2)` `resolv.conf` for every snapshot (a path walk on the way
/// from the kernel to a hook), and still saw a change only with the next netlink message, while a
/// DHCP client writes `resolv.conf` after its last address and route.
///
/// A write is a change when the file is closed (`IN_CLOSE_WRITE`), not at each `write(2)` nor at
/// the `open(O_TRUNC)` that empties the file first: read then, it would say "no servers" for as
/// long as the writer takes. A regular file created at a name on the way is a change once written
/// and closed too; anything else that appears there (a symlink) at once.
///
/// ``check()`` answers ``Reading/unknown`` (and the reader looks for itself) while no engine
/// follows the watch, and while the watch does not cover the whole way: a directory on it is
/// missing (a symlink into a resolver's directory that does not exist yet), or inotify is not
/// available (``unavailableBecause``). Some changes it cannot see at all (an ancestor directory
/// renamed, a bind mount changed over the path, a network file system's remote writes): a reader
/// that must see them looks for itself now and then too, as `SystemStateBuilder` does.
package final class FileChangeWatch: Sendable {
    /// What ``check()`` knows about the file since it was last asked.
    package enum Reading: Sendable, Equatable {
        /// Nothing that could change it happened.
        case unchanged
        /// It may have changed: read it again.
        case changed
        /// The watch cannot tell: ask the file itself.
        case unknown
    }

    /// The inotify descriptor, non-blocking and close-on-exec; -1 when inotify is unavailable.
    package let descriptor: Int32
    /// Why there is no ``descriptor`` (`inotify_init1`'s errno: a limit reached, a sandbox); 0
    /// when there is one.
    package let unavailableBecause: Int32
    /// The path watched, as given.
    package let path: String
    private let state: Mutex<State>

    private struct State {
        /// Set by a change and by every ``rearm()``, cleared by ``check()``.
        var changed = true
        /// Every directory on the way, and the file when it exists, are watched.
        var complete = false
        /// How many engines follow the watch now.
        var followers = 0
        /// The watches: each hop's directory with the names on the way it holds, and the file.
        var watches: [Int32: Watched] = [:]
    }

    private enum Watched {
        /// A directory: only events about these names matter.
        case directory(path: String, names: Set<String>)
        /// The file at the end of the way: every event matters.
        case file
    }

    /// How many symlinks are followed: the kernel's own limit (`MAXSYMLINKS`).
    private static let maximumHops = 40

    /// Starts watching `path`.
    package init(path: String) {
        self.path = path
        let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        self.descriptor = descriptor
        unavailableBecause = descriptor < 0 ? errno : 0
        state = Mutex(State())
        rearm()
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// Whether the file may have changed since the last call (which clears the mark).
    package func check() -> Reading {
        state.withLock { state in
            guard state.complete, state.followers > 0 else { return .unknown }
            defer { state.changed = false }
            return state.changed ? .changed : .unchanged
        }
    }

    /// An engine follows the watch from now on (its thread, until ``detach()``): until one does,
    /// nothing reads the events, and ``check()`` cannot answer.
    package func attach() { state.withLock { $0.followers += 1 } }

    /// The engine that called ``attach()`` stopped following the watch.
    package func detach() { state.withLock { $0.followers -= 1 } }

    /// Reads every pending event; returns whether the file may have changed (and marks it for
    /// ``check()``). After a change the watches are set again: the way may lead elsewhere now.
    @discardableResult
    package func consume() -> Bool {
        guard descriptor >= 0 else { return false }
        var changed = false
        let header = MemoryLayout<inotify_event>.size
        // Room for 16 events with the longest names (NAME_MAX, 255 bytes, and a NUL).
        let size = 16 * (header + 256)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: MemoryLayout<inotify_event>.alignment)
        defer { buffer.deallocate() }
        while true {
            let count = read(descriptor, buffer, size)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            // Looked up after the read: a rearm on another thread may have added watches.
            let watches = state.withLock { $0.watches }
            var offset = 0
            while offset + header <= count {
                let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                let name = UnsafeRawBufferPointer(start: buffer + offset + header, count: Int(event.len))
                offset += header + Int(event.len)
                if Self.matters(event, name: name, in: watches) { changed = true }
            }
        }
        if changed { rearm() }
        return changed
    }

    private static func matters(_ event: inotify_event, name: UnsafeRawBufferPointer, in watches: [Int32: Watched])
        -> Bool
    {
        // The queue overflowed: anything may have happened.
        if event.mask & UInt32(IN_Q_OVERFLOW) != 0 { return true }
        switch watches[event.wd] {
        case nil:
            // A watch a rearm removed (its IN_IGNORED last); anything else from one is late news,
            // and a rearm marks a change anyway.
            return false
        case .file:
            return true
        case .directory(let directory, let names):
            // The directory itself moved, went away, or its watch did.
            if event.mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED) != 0 || event.len == 0 { return true }
            let length = name.firstIndex(of: 0) ?? name.count
            let entry = String(decoding: name[..<length], as: UTF8.self)
            guard names.contains(entry) else { return false }
            // A regular file just created is empty: it counts once written and closed.
            if event.mask & UInt32(IN_CREATE) != 0 {
                var status = stat()
                return lstat(directory + "/" + entry, &status) != 0 || status.st_mode & S_IFMT != S_IFREG
            }
            return true
        }
    }

    /// Watches the way to the file as it is now: each hop's directory, then the file. Marks the
    /// file changed: whatever happened before the new watches were in place went unseen. Safe
    /// from any thread.
    package func rearm() {
        guard descriptor >= 0 else { return }
        state.withLock { state in
            var watches: [Int32: Watched] = [:]
            var complete = false
            var current = path
            for _ in 0..<Self.maximumHops {
                let (directory, name) = Self.split(current)
                let mask = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ATTRIB
                let watch = inotify_add_watch(
                    descriptor,
                    directory,
                    UInt32(mask | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
                )
                guard watch >= 0 else { break }
                // Two hops in one directory share its watch (the same inode, the same number).
                if case .directory(_, let names) = watches[watch] {
                    watches[watch] = .directory(path: directory, names: names.union([name]))
                } else {
                    watches[watch] = .directory(path: directory, names: [name])
                }
                guard let target = Self.symlinkTarget(current) else {
                    // The end of the way: a file, or nothing yet (its directory sees it appear).
                    complete = true
                    break
                }
                current = target.hasPrefix("/") ? target : directory + "/" + target
            }
            // The file itself, wherever the way ends: an in-place write to a file bind-mounted
            // over the path (`ip netns exec` mounts /etc/netns/NAME/resolv.conf so) reaches no
            // watched directory. Its absence (ENOENT) or a symlink loop (ELOOP) leave nothing to
            // watch; another failure (the watch limit) leaves such writes unseen.
            let file = inotify_add_watch(
                descriptor,
                path,
                UInt32(IN_CLOSE_WRITE | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF)
            )
            if file >= 0 {
                watches[file] = .file
            } else if errno != ENOENT && errno != ELOOP {
                complete = false
            }
            // Watches no longer on the way.
            for watch in state.watches.keys where watches[watch] == nil { inotify_rm_watch(descriptor, watch) }
            state.watches = watches
            state.complete = complete
            state.changed = true
        }
    }

    /// The directory and the last component of `path` (a relative path's directory is `.`).
    private static func split(_ path: String) -> (directory: String, name: String) {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return (".", String(trimmed)) }
        let directory = slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
        return (directory, String(trimmed[trimmed.index(after: slash)...]))
    }

    /// What the symlink at `path` points to; `nil` when it is not one (or is not there).
    private static func symlinkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
