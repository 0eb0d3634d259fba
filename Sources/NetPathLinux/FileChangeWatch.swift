import Glibc
import Synchronization

/// Tells when what reading one file returns may have changed, through inotify: the file itself
/// (written in place), and each name on the way to it (a symlink's hops: `/etc/resolv.conf` →
/// `/run/systemd/resolve/stub-resolv.conf`) created, replaced, moved or removed.
///
/// Its ``descriptor`` belongs in a `poll()` set; when it is readable, ``consume()`` reads the
/// events and says whether the file may have changed. ``check()`` then answers the file's reader
/// without a system call. Why it exists: the engine used to `stat(2)` `resolv.conf` for every
/// snapshot (a path walk on the way from the kernel to a hook), and still saw a change only with
/// the next netlink message, while a DHCP client writes `resolv.conf` after its last address and
/// route.
///
/// Where a directory on the way is missing (a symlink into a resolver's directory that does not
/// exist yet), a change could go unseen: ``check()`` answers ``Reading/unknown`` and the reader
/// looks for itself, and calls ``rearm()`` when it sees the file change.
package final class FileChangeWatch: Sendable {
    /// What ``check()`` knows about the file since it was last asked.
    package enum Reading: Sendable, Equatable {
        /// Nothing that could change it happened.
        case unchanged
        /// It may have changed: read it again.
        case changed
        /// The watch does not cover the whole way to the file (or there is no inotify): ask the
        /// file itself.
        case unknown
    }

    /// The inotify descriptor, non-blocking and close-on-exec; -1 when inotify is unavailable (a
    /// limit reached, a sandbox), and then ``check()`` always answers ``Reading/unknown``.
    package let descriptor: Int32
    /// The path watched, as given.
    package let path: String
    private let state: Mutex<State>

    private struct State {
        /// Set by a change, cleared by ``check()``; true at first, so the file is read once.
        var changed = true
        /// Every directory on the way is watched.
        var complete = false
        /// The watches: each hop's directory with the names on the way it holds, and the file.
        var watches: [Int32: Watched] = [:]
    }

    private enum Watched {
        /// A directory: only events about these names matter.
        case directory(names: Set<String>)
        /// The file at the end of the way: every event matters.
        case file
    }

    /// How many symlinks are followed: the kernel's own limit (`MAXSYMLINKS`).
    private static let maximumHops = 40

    /// Starts watching `path`.
    package init(path: String) {
        self.path = path
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        state = Mutex(State())
        rearm()
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// Whether the file may have changed since the last call (which clears the mark).
    package func check() -> Reading {
        state.withLock { state in
            guard state.complete else { return .unknown }
            defer { state.changed = false }
            return state.changed ? .changed : .unchanged
        }
    }

    /// Reads every pending event; returns whether the file may have changed (and marks it for
    /// ``check()``). After a change the watches are set again: the way may lead elsewhere now.
    @discardableResult
    package func consume() -> Bool {
        guard descriptor >= 0 else { return false }
        let watches = state.withLock { $0.watches }
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
            var offset = 0
            while offset + header <= count {
                let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                let name = UnsafeRawBufferPointer(start: buffer + offset + header, count: Int(event.len))
                offset += header + Int(event.len)
                if Self.matters(event, name: name, in: watches) { changed = true }
            }
        }
        if changed {
            state.withLock { $0.changed = true }
            rearm()
        }
        return changed
    }

    private static func matters(_ event: inotify_event, name: UnsafeRawBufferPointer, in watches: [Int32: Watched])
        -> Bool
    {
        // The queue overflowed: anything may have happened.
        if event.mask & UInt32(IN_Q_OVERFLOW) != 0 { return true }
        switch watches[event.wd] {
        case nil:
            // A watch the last rearm removed (its IN_IGNORED among them).
            return false
        case .file:
            return true
        case .directory(let names):
            // The directory itself moved, went away, or its watch did.
            if event.mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED) != 0 || event.len == 0 { return true }
            let length = name.firstIndex(of: 0) ?? name.count
            return names.contains(String(decoding: name[..<length], as: UTF8.self))
        }
    }

    /// Watches the way to the file as it is now: each hop's directory, then the file. Safe from
    /// any thread.
    package func rearm() {
        guard descriptor >= 0 else { return }
        state.withLock { state in
            var watches: [Int32: Watched] = [:]
            var complete = true
            var current = path
            for _ in 0..<Self.maximumHops {
                let (directory, name) = Self.split(current)
                let mask = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ATTRIB
                let watch = inotify_add_watch(
                    descriptor,
                    directory,
                    UInt32(mask | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
                )
                guard watch >= 0 else {
                    complete = false
                    break
                }
                // Two hops in one directory share its watch (the same inode, the same number).
                if case .directory(let names) = watches[watch] {
                    watches[watch] = .directory(names: names.union([name]))
                } else {
                    watches[watch] = .directory(names: [name])
                }
                guard let target = Self.symlinkTarget(current) else { break }
                current = target.hasPrefix("/") ? target : directory + "/" + target
            }
            // The file itself, wherever the way ends: an in-place write to a file bind-mounted
            // over the path (`ip netns exec` mounts /etc/netns/NAME/resolv.conf so) reaches no
            // watched directory. None while it does not exist: its directory sees it appear.
            let file = inotify_add_watch(
                descriptor,
                path,
                UInt32(IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF)
            )
            if file >= 0 { watches[file] = .file }
            // Watches no longer on the way.
            for watch in state.watches.keys where watches[watch] == nil { inotify_rm_watch(descriptor, watch) }
            state.watches = watches
            state.complete = complete
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
