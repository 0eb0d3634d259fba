// SPDX-License-Identifier: Apache-2.0

import Foundation
import Logging
import NetPathControl
import NetPathCore
import TestSupport
import Testing

@testable import NetPathAgent

/// The control server in this process, with a reload the test completes when it chooses.
@Suite(.enabled(if: Privileges.namespaceTestsEnabled, "needs root: only root's reload is carried out"))
struct ControlServerTests {
    /// One line-oriented client on the socket, with a bounded read.
    final class LineClient {
        private(set) var fd: Int32
        private var buffer: [UInt8] = []

        init(path: String) throws {
            fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            guard withUnixSocketAddress(path, { connect(fd, $0, $1) }) == 0 else {
                Glibc.close(fd)
                throw TestFailure("connect \(path): \(String(cString: strerror(errno)))")
            }
        }

        deinit { close() }

        /// Closes the connection (once).
        func close() {
            if fd >= 0 { Glibc.close(fd) }
            fd = -1
        }

        func send(_ command: String) throws {
            let line = Array("{\"command\":\"\(command)\"}\n".utf8)
            guard Glibc.send(fd, line, line.count, Int32(MSG_NOSIGNAL)) == line.count else {
                throw TestFailure("send: \(String(cString: strerror(errno)))")
            }
        }

        /// The next line, waiting at most 10 s.
        func line() throws -> String {
            let deadline = ContinuousClock.now + .seconds(10)
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                if let newline = buffer.firstIndex(of: 10) {
                    defer { buffer.removeSubrange(...newline) }
                    return String(decoding: buffer[..<newline], as: UTF8.self)
                }
                let left = ContinuousClock.now.duration(to: deadline)
                var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard left > .zero, poll(&ready, 1, Int32(left / .milliseconds(1)) + 1) == 1 else {
                    throw TestFailure("no line within 10 s; have \(String(decoding: buffer, as: UTF8.self))")
                }
                let n = recv(fd, &chunk, chunk.count, 0)
                guard n > 0 else { throw TestFailure("the server closed the connection") }
                buffer += chunk[..<n]
            }
        }
    }

    @Test(
        "a reload's reply goes to the connection that asked: when that one left, a later connection (on its descriptor number) does not get it"
    )
    func reloadReplyFollowsItsConnection() async throws {
        try Privileges.requireRoot()
        let directory = try ScratchDirectory.make("np-server")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (reloads, reloadAsked) = AsyncStream.makeStream(of: (@Sendable (ControlReply) -> Void).self)
        var logger = Logger(label: "control-server-test")
        logger.logLevel = .critical
        let server = ControlServer(
            path: directory.appendingPathComponent("run/netpathd.sock").path,
            logger: logger,
            answer: { _ in ControlReply(ok: true, status: StatusReport(interfaces: [], paths: [])) },
            reload: { reply in reloadAsked.yield(reply) }
        )
        try server.start()
        defer { server.stop() }
        var pending = reloads.makeAsyncIterator()

        // The first client asks for a reload and leaves before it is done.
        let leaving = try LineClient(path: server.path)
        try leaving.send("reload")
        let completeFirst = try #require(await pending.next())
        leaving.close()
        // Once another client's request is answered, the server has seen the first one leave
        // (it polls every connection each pass) and freed its descriptor; the next connection
        // then most likely gets the same number.
        let probe = try LineClient(path: server.path)
        try probe.send("status")
        #expect(try probe.line().contains(#""ok":true"#))
        let next = try LineClient(path: server.path)

        completeFirst(ControlReply(ok: true, configuration: "first reload"))
        try next.send("status")
        let reply = try next.line()
        #expect(reply.contains(#""status":{"#), "the later connection got \(reply)")
        #expect(!reply.contains("first reload"))

        // A reload that is still waited for is answered to its own connection.
        try next.send("reload")
        let completeSecond = try #require(await pending.next())
        completeSecond(ControlReply(ok: true, configuration: "second reload"))
        #expect(try next.line().contains(#""configuration":"second reload""#))
    }
}
