// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing

@testable import NetPathDispatch

/// Pipes made ahead of the runs that take them (SparePipes).
struct SparePipesTests {
    /// The six ends of `pipes`, with the inode each names (the pipe's).
    static func ends(_ pipes: HookPipes) -> [(fd: Int32, inode: UInt64)] {
        [
            pipes.input.readEnd, pipes.input.writeEnd, pipes.output.read, pipes.output.write, pipes.error.read,
            pipes.error.write,
        ]
        .map { fd in
            var status = stat()
            return (fd, fstat(fd, &status) == 0 ? UInt64(status.st_ino) : 0)
        }
    }

    /// Whether `end` is closed: its number names nothing, or (reused by another test running
    /// meanwhile) something else.
    static func isClosed(_ end: (fd: Int32, inode: UInt64)) -> Bool {
        var status = stat()
        return fstat(end.fd, &status) != 0 || UInt64(status.st_ino) != end.inode
    }

    @Test("a set taken is fresh and complete, refilling keeps exactly `keep` sets, and discarding closes all six ends")
    func takeRefillDiscard() throws {
        let spares = SparePipes(keep: 2)
        #expect(spares.count == 0)
        // Nothing spare: made on the spot.
        let first = try spares.take()
        spares.refill()
        #expect(spares.count == 2)
        spares.refill()
        #expect(spares.count == 2, "refill made more than it keeps")
        let second = try spares.take()
        #expect(spares.count == 1)
        let ends = [first, second].flatMap(Self.ends)
        #expect(Set(ends.map(\.fd)).count == 12, "two sets share a descriptor")
        #expect(Set(ends.map(\.inode)).count == 6, "not three pipes a set")
        for pipes in [first, second] {
            // Close-on-exec everywhere; the runner's ends non-blocking, the hook's blocking.
            for fd in [
                pipes.input.readEnd, pipes.input.writeEnd, pipes.output.read, pipes.output.write, pipes.error.read,
                pipes.error.write,
            ] {
                #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0)
            }
            for fd in [pipes.input.writeEnd, pipes.output.read, pipes.error.read] {
                #expect(fcntl(fd, F_GETFL) & O_NONBLOCK != 0)
            }
            for fd in [pipes.input.readEnd, pipes.output.write, pipes.error.write] {
                #expect(fcntl(fd, F_GETFL) & O_NONBLOCK == 0)
            }
            // A pipe: what goes in one end comes out of the other.
            var byte: UInt8 = 42
            #expect(write(pipes.output.write, &byte, 1) == 1)
            byte = 0
            #expect(read(pipes.output.read, &byte, 1) == 1 && byte == 42)
            pipes.discard()
        }
        #expect(ends.allSatisfy(Self.isClosed), "a discarded set left a descriptor open")
        // The one set still spare.
        let last = try spares.take()
        #expect(spares.count == 0)
        let lastEnds = Self.ends(last)
        #expect(!lastEnds.contains(where: Self.isClosed))
        last.discard()
        #expect(lastEnds.allSatisfy(Self.isClosed), "a discarded set left a descriptor open")
    }
}
