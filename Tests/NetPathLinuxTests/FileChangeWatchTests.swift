// SPDX-License-Identifier: Apache-2.0

import Foundation
import Glibc
import NetPathLinux
import TestSupport
import Testing

/// The watch on one file through its symlinks. inotify queues an event before the system call
/// that caused it returns, so each `consume()` here sees what the lines before it did: no wait.
@Suite("FileChangeWatch")
struct FileChangeWatchTests {
    func withDirectory(_ body: (String) throws -> Void) throws {
        try TemporaryDirectory.with("netpath-watch", body)
    }

    /// `DIRECTORY/resolv.conf` with one server, and a followed watch on it whose first reading
    /// (the file changed: never read) is taken; `body` gets the directory, the path and the watch.
    func withWatchedFile(_ body: (String, String, FileChangeWatch) throws -> Void) throws {
        try withDirectory { directory in
            let path = directory + "/resolv.conf"
            try write("nameserver 192.0.2.1\n", to: path)
            let watch = FileChangeWatch(path: path)
            watch.attach()
            #expect(watch.check() == .changed, "never read yet")
            try body(directory, path, watch)
        }
    }

    func write(_ text: String, to path: String) throws {
        try text.write(toFile: path, atomically: false, encoding: .utf8)
    }

    @Test("a watch no engine follows cannot tell, and says so")
    func unfollowedWatchIsUnknown() throws {
        try withDirectory { directory in
            let path = directory + "/resolv.conf"
            try write("nameserver 192.0.2.1\n", to: path)
            let watch = FileChangeWatch(path: path)
            #expect(watch.check() == .unknown)
            watch.attach()
            #expect(watch.check() == .changed)
            watch.detach()
            #expect(watch.check() == .unknown)
        }
    }

    @Test("a write counts when the file is closed: not at the truncating open, nor at each write")
    func writeCountsAtClose() throws {
        try withWatchedFile { _, path, watch in
            // `cat new > resolv.conf`: emptied by the open, filled by the writes, then closed.
            let fd = open(path, O_WRONLY | O_TRUNC)
            #expect(fd >= 0)
            #expect(watch.consume() == false, "the file is empty now: not the moment to read it")
            #expect(Glibc.write(fd, "nameserver ", 11) == 11)
            #expect(watch.consume() == false)
            #expect(Glibc.write(fd, "192.0.2.2\n", 10) == 10)
            #expect(close(fd) == 0)
            #expect(watch.consume(), "closed: now")
            #expect(watch.check() == .changed)

            // Removed, then created anew: the creation counts once the new file is closed.
            #expect(unlink(path) == 0)
            #expect(watch.consume(), "a removal")
            _ = watch.check()
            let created = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o644)
            #expect(created >= 0)
            #expect(watch.consume() == false, "created, still empty")
            #expect(Glibc.write(created, "nameserver 192.0.2.3\n", 21) == 21)
            #expect(close(created) == 0)
            #expect(watch.consume())
            #expect(watch.check() == .changed)
        }
    }

    @Test("the first check reads the file; then only a change makes it read again")
    func firstCheckReadsThenOnlyChanges() throws {
        try withWatchedFile { _, _, watch in
            #expect(watch.check() == .unchanged)
            #expect(watch.consume() == false)
            #expect(watch.check() == .unchanged)
        }
    }

    @Test("a write in place, an atomic replace, a removal and a re-creation are each a change")
    func everyWayOfChangingTheFileIsSeen() throws {
        try withWatchedFile { directory, path, watch in
            try write("nameserver 192.0.2.2\n", to: path)
            #expect(watch.consume(), "a write in place")
            #expect(watch.check() == .changed)

            // As resolvconf and NetworkManager do: a new file renamed over the old one.
            try write("nameserver 192.0.2.3\n", to: directory + "/resolv.conf.new")
            #expect(rename(directory + "/resolv.conf.new", path) == 0)
            #expect(watch.consume(), "a rename over the file")
            #expect(watch.check() == .changed)
            // The watch follows the new inode: writing it in place is seen too.
            try write("nameserver 192.0.2.4\n", to: path)
            #expect(watch.consume(), "a write in place to the renamed-in file")
            _ = watch.check()

            #expect(unlink(path) == 0)
            #expect(watch.consume(), "a removal")
            #expect(watch.check() == .changed)
            try write("nameserver 192.0.2.5\n", to: path)
            #expect(watch.consume(), "a re-creation")
            #expect(watch.check() == .changed)
        }
    }

    @Test("other files in the same directory change nothing")
    func neighboursAreIgnored() throws {
        try withWatchedFile { directory, path, watch in
            try write("x", to: directory + "/hosts")
            #expect(unlink(directory + "/hosts") == 0)
            #expect(watch.consume() == false)
            #expect(watch.check() == .unchanged)
        }
    }

    @Test("through a symlink: the target's changes count, and a retargeted link leaves the old target behind")
    func symlinkHopsAreFollowed() throws {
        try withDirectory { directory in
            // /etc/resolv.conf -> ../run/resolver/stub.conf, as systemd-resolved lays it out.
            for sub in ["/etc", "/run", "/run/resolver", "/run/other"] { #expect(mkdir(directory + sub, 0o755) == 0) }
            try write("nameserver 127.0.0.53\n", to: directory + "/run/resolver/stub.conf")
            try write("nameserver 192.0.2.9\n", to: directory + "/run/other/plain.conf")
            let path = directory + "/etc/resolv.conf"
            #expect(symlink("../run/resolver/stub.conf", path) == 0)
            let watch = FileChangeWatch(path: path)
            watch.attach()
            _ = watch.check()

            // A symlink appearing at a name on the way counts at once (it is never written).
            #expect(unlink(path) == 0)
            #expect(symlink("../run/resolver/stub.conf", path) == 0)
            #expect(watch.consume(), "the link removed and made again")
            _ = watch.check()

            // The resolver replaces its file in its own directory.
            try write("nameserver 127.0.0.54\n", to: directory + "/run/resolver/.stub.conf")
            #expect(rename(directory + "/run/resolver/.stub.conf", directory + "/run/resolver/stub.conf") == 0)
            #expect(watch.consume(), "the target replaced in its directory")
            #expect(watch.check() == .changed)

            // The link now points elsewhere.
            #expect(unlink(path) == 0)
            #expect(symlink(directory + "/run/other/plain.conf", path) == 0)
            #expect(watch.consume(), "the link replaced")
            _ = watch.check()
            try write("nameserver 192.0.2.10\n", to: directory + "/run/other/plain.conf")
            #expect(watch.consume(), "a write to the new target")
            _ = watch.check()
            try write("nameserver 127.0.0.55\n", to: directory + "/run/resolver/stub.conf")
            #expect(watch.consume() == false, "the old target is no longer on the way")
            #expect(watch.check() == .unchanged)
        }
    }

    @Test("a missing directory on the way makes the watch unknown until rearmed after it appears")
    func missingDirectoryFallsBackToAsking() throws {
        try withDirectory { directory in
            let path = directory + "/etc/resolv.conf"
            #expect(mkdir(directory + "/etc", 0o755) == 0)
            #expect(symlink(directory + "/run/resolver/stub.conf", path) == 0)
            let watch = FileChangeWatch(path: path)
            watch.attach()
            #expect(watch.check() == .unknown)
            #expect(watch.check() == .unknown, "asked again, still unknown")

            #expect(mkdir(directory + "/run", 0o755) == 0)
            #expect(mkdir(directory + "/run/resolver", 0o755) == 0)
            try write("nameserver 127.0.0.53\n", to: directory + "/run/resolver/stub.conf")
            // The reader saw the file appear (its stat) and asks the watch to look again.
            watch.rearm()
            #expect(watch.check() == .changed)
            try write("nameserver 127.0.0.54\n", to: directory + "/run/resolver/stub.conf")
            #expect(watch.consume())
            #expect(watch.check() == .changed)
        }
    }
}
