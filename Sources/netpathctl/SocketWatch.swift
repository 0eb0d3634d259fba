// SPDX-License-Identifier: Apache-2.0

import Glibc
import NetPathCore

/// Waits, through inotify and without polling, for a new file at a path: the control socket of
/// a netpathd that is starting or restarting.
///
/// netpathd binds its socket under another name and renames it into place once it listens, so a
/// new file at the path is a socket that takes connections. Its directory (`/run/netpath`,
/// which systemd removes when the unit stops) may not exist yet: the nearest directory above it
/// that does is watched instead, and the watch moves down as the directories appear.
enum SocketWatch {
    /// A file's identity: another file at the same path has another one.
    struct Identity: Equatable {
        var device: UInt64
        var inode: UInt64
        var changed: timespec

        static func == (a: Self, b: Self) -> Bool {
            a.device == b.device && a.inode == b.inode && a.changed.tv_sec == b.changed.tv_sec
                && a.changed.tv_nsec == b.changed.tv_nsec
        }
    }

    /// The identity of the file at `path` now; `nil` when there is none.
    static func identity(of path: String) -> Identity? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino), changed: info.st_ctim)
    }

    /// Returns `true` once a file other than `old` is at `path` (at once if one is already
    /// there), `false` when `deadline` passes first (`nil`: wait as long as it takes) or
    /// inotify is not available.
    static func waitForNewFile(at path: String, replacing old: Identity?, until deadline: ContinuousClock.Instant?)
        -> Bool
    {
        let descriptor = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        while true {
            // Watch first, then look: a file that appears in between is seen either way.
            guard let child = watchNearestDirectory(of: path, with: descriptor) else { return false }
            if let now = identity(of: path), now != old { return true }
            guard waitForEvent(about: child, on: descriptor, until: deadline) else { return false }
        }
    }

    /// Watches the deepest existing directory on the way to `path`; returns the name in it that
    /// leads to `path`, or `nil` when nothing could be watched.
    private static func watchNearestDirectory(of path: String, with descriptor: Int32) -> String? {
        var directory = path
        var child = ""
        repeat {
            let slash = directory.lastIndex(of: "/")
            child = String(directory[(slash.map { directory.index(after: $0) } ?? directory.startIndex)...])
            directory = slash.map { $0 == directory.startIndex ? "/" : String(directory[..<$0]) } ?? "."
            let mask =
                IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF
                | IN_ONLYDIR
            if inotify_add_watch(descriptor, directory, UInt32(mask)) >= 0 { return child }
        } while directory != "/" && directory != "."
        return nil
    }

    /// Waits until an event names `child` or concerns the watched directory itself (gone,
    /// moved, the watch dropped, the queue overflowed); `false` at the deadline.
    private static func waitForEvent(
        about child: String,
        on descriptor: Int32,
        until deadline: ContinuousClock.Instant?
    )
        -> Bool
    {
        let header = MemoryLayout<inotify_event>.size
        let size = 16 * (header + Int(NAME_MAX) + 1)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: MemoryLayout<inotify_event>.alignment)
        defer { buffer.deallocate() }
        while true {
            var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let result = poll(&ready, 1, deadline?.pollTimeout() ?? -1)
            if result < 0 && errno == EINTR { continue }
            guard result > 0 else { return false }
            let count = read(descriptor, buffer, size)
            guard count > 0 else { continue }
            var offset = 0
            while offset + header <= count {
                let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                let bytes = UnsafeRawBufferPointer(start: buffer + offset + header, count: Int(event.len))
                offset += header + Int(event.len)
                let selfEvents = IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED | IN_Q_OVERFLOW
                if event.mask & UInt32(selfEvents) != 0 { return true }
                let name = String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
                if name == child { return true }
            }
        }
    }
}
