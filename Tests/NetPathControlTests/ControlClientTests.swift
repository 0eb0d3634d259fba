// SPDX-License-Identifier: Apache-2.0

import Dispatch
import Foundation
import Glibc
import NetPathControl
import Synchronization
import TestSupport
import Testing

/// The control client against a socket that accepts but never answers (a stuck agent): every
/// request gives up at its timeout with an error that says so.
@Suite(.timeLimit(.minutes(1)))
struct ControlClientTests {
    /// One `readLine()` on a thread of its own, and when it returned.
    final class Reading: @unchecked Sendable {
        // @unchecked: only `run()`'s thread touches `client` (besides `shutdown()`, which is safe
        // from any thread); `ended` is behind a lock.
        private let client: ControlClient
        private let end = Mutex<ContinuousClock.Instant?>(nil)

        init(_ client: ControlClient) { self.client = client }

        var ended: ContinuousClock.Instant? { end.withLock { $0 } }

        func run() {
            _ = try? client.readLine()
            end.withLock { $0 = .now }
        }
    }

    @Test("a request to an agent that never answers fails at its timeout, naming the socket")
    func noReply() throws {
        let server = try SilentServer()
        let client = try ControlClient(path: server.path)
        let started = ContinuousClock.now
        do {
            _ = try client.request(.status, timeout: .milliseconds(300))
            Issue.record("a reply came from a server that never writes")
        } catch {
            guard case .noReply(let path, let timeout) = error else {
                Issue.record("expected noReply, got \(error)")
                return
            }
            #expect(path == server.path)
            #expect(timeout == .milliseconds(300))
            #expect("\(error)".contains("did not answer within"), "\(error)")
        }
        let waited = ContinuousClock.now - started
        #expect(waited >= .milliseconds(300), "gave up early: \(waited)")
        #expect(waited < .seconds(5), "the timeout did not hold: \(waited)")
    }

    @Test("a reply that starts but never ends also fails at the timeout, and the connection is given up")
    func partialReply() throws {
        let server = try SilentServer(sending: "{\"ok\":")
        let client = try ControlClient(path: server.path)
        do {
            _ = try client.request(.hooks, timeout: .milliseconds(300))
            Issue.record("half a line was taken as a reply")
        } catch {
            guard case .noReply = error else {
                Issue.record("expected noReply, got \(error)")
                return
            }
        }
        // A late reply must not answer the next request: the client refuses to reuse the line.
        #expect(throws: ControlClient.Failure.self) { _ = try client.request(.status, timeout: .milliseconds(300)) }
    }

    @Test("an agent that refuses the connection before reading the request: its reply is returned, not the broken pipe")
    func refusedConnection() throws {
        let server = try SilentServer(
            sending: #"{"ok":false,"error":"too many clients: 64 connections are open; try again later"}"# + "\n",
            thenClosing: true
        )
        let client = try ControlClient(path: server.path)
        #expect(server.awaitSent(), "the server never accepted")
        let reply = try client.request(.status, timeout: .milliseconds(300))
        #expect(!reply.ok)
        #expect(reply.error?.hasPrefix("too many clients") == true, "\(reply)")
    }

    @Test("after the monitor acknowledgement, reading events waits past the reply timeout")
    func monitorStreamWaits() async throws {
        let server = try SilentServer(sending: "{\"ok\":true,\"monitoring\":true}\n")
        let client = try ControlClient(path: server.path)
        let reply = try client.request(.monitor, timeout: .milliseconds(200))
        #expect(reply.ok && reply.monitoring == true)
        let reading = Reading(client)
        let started = ContinuousClock.now
        Thread { reading.run() }.start()
        // Twice the reply timeout with no event: the reader must still be waiting.
        try await Task.sleep(for: .milliseconds(400))
        #expect(reading.ended == nil, "readLine() gave up while the agent was only quiet")
        client.shutdown()
        let deadline = ContinuousClock.now + .seconds(5)
        while reading.ended == nil && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        let end = try #require(reading.ended, "readLine() did not return after shutdown()")
        #expect(end - started >= .milliseconds(400))
    }

    @Test("queries wait 10 s, a reload 60 s (it may wait for startup hooks)")
    func defaultTimeouts() {
        #expect(ControlClient.replyTimeout(for: .status) == .seconds(10))
        #expect(ControlClient.replyTimeout(for: .monitor) == .seconds(10))
        #expect(ControlClient.replyTimeout(for: .reload) == .seconds(60))
    }
}
