// SPDX-License-Identifier: Apache-2.0

import Foundation
import Logging
import TestSupport
import Testing

@testable import NetPathAgent

/// The `/metrics` server against scrapers that stop reading, over loopback in this process.
@Suite struct MetricsServerTests {
    /// 8 MB of text: far more than loopback's socket buffers hold for a scraper that reads nothing.
    static let largeText = String(repeating: "netpath_test_sample{label=\"filler\"} 1\n", count: 8 << 20 / 39)

    static func server(responseTimeout: Duration = .seconds(10)) throws -> MetricsServer {
        var logger = Logger(label: "metrics-test")
        logger.logLevel = .critical
        let text = largeText
        let server = MetricsServer(
            address: "127.0.0.1:0",
            responseTimeout: responseTimeout,
            logger: logger,
            text: { text }
        )
        try server.start()
        return server
    }

    /// A scraper with a small receive buffer that sends its request and then reads nothing.
    final class StalledScraper {
        let fd: Int32

        init(port: UInt16) throws {
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var size: Int32 = 4096
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0 else {
                throw TestFailure("connect to port \(port): \(String(cString: strerror(errno)))")
            }
            let request = Array("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
            guard send(fd, request, request.count, Int32(MSG_NOSIGNAL)) == request.count else {
                throw TestFailure("send: \(String(cString: strerror(errno)))")
            }
        }

        deinit { close(fd) }

        /// Waits (at most 10 s) until the response has begun to arrive: the server is sending.
        func awaitResponse() throws {
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 10_000) == 1 else { throw TestFailure("no response began within 10 s") }
        }

        /// Reads to the end (at most `timeout`): the whole response, or what came before the deadline.
        func readAll(timeout: Duration) -> [UInt8] {
            let deadline = ContinuousClock.now + timeout
            var received: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let left = ContinuousClock.now.duration(to: deadline)
                guard left > .zero else { return received }
                var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&ready, 1, Int32(left / .milliseconds(1)) + 1) == 1 else { continue }
                let n = recv(fd, &chunk, chunk.count, 0)
                if n <= 0 { return received }
                received += chunk[..<n]
            }
        }
    }

    /// Runs `body` on its own thread; whether it returned within `limit`.
    static func returns(within limit: Duration, _ body: @escaping @Sendable () -> Void) async -> Bool {
        let once = OnceBox<Bool>()
        return await withCheckedContinuation { continuation in
            once.set(continuation)
            Thread {
                body()
                once.resume(true)
            }.start()
            Task {
                try? await Task.sleep(for: limit)
                once.resume(false)
            }
        }
    }

    @Test("stop returns at once while a scraper holds a large response unread")
    func stopIsNotHeldByAStalledScraper() async throws {
        let server = try Self.server()
        let scraper = try StalledScraper(port: server.port)
        try scraper.awaitResponse()
        let stopped = await Self.returns(within: .seconds(5)) { server.stop() }
        #expect(stopped, "stop() was still waiting for the scraper after 5 s")
        withExtendedLifetime(scraper) {}
    }

    @Test("a scraper that stops reading is dropped after the response timeout, and the next scrape is served")
    func aStalledScraperIsDropped() async throws {
        let server = try Self.server(responseTimeout: .milliseconds(300))
        defer { server.stop() }
        let stalled = try StalledScraper(port: server.port)
        try stalled.awaitResponse()
        // Queued behind the stalled one: served once the server gives up on it.
        let next = try StalledScraper(port: server.port)
        let response = next.readAll(timeout: .seconds(20))
        let expected = Self.largeText.utf8.count
        #expect(String(decoding: response.prefix(15), as: UTF8.self) == "HTTP/1.1 200 OK")
        #expect(response.count > expected, "got \(response.count) bytes of a \(expected)-byte body")
        // The stalled scraper's connection was closed: it reaches the end of what it was sent.
        #expect(stalled.readAll(timeout: .seconds(20)).count < response.count)
    }
}
