import Dispatch
import Foundation
import Glibc
import NetPath
import NetPathControl
import Synchronization
import TestSupport
import Testing

/// The control client against a socket that accepts but never answers (a stuck agent): every
/// request gives up at its timeout with an error that says so, and so does `AgentPathSource`.
@Suite(.timeLimit(.minutes(1)))
struct ControlClientTests {
    /// A listening Unix socket that never replies; with `sending`, it accepts the first
    /// connection and sends those bytes before going silent (keeping the connection open), or
    /// with `thenClosing`, closing it without reading anything (as an agent refuses a client).
    final class SilentServer: Sendable {
        let path: String
        private let listener: Int32
        /// The accepted connection, set by the accepting thread, closed by deinit.
        private let accepted = Descriptor()
        /// Signalled once the bytes are sent (and the connection closed, with `thenClosing`).
        private let sent = DispatchSemaphore(value: 0)

        final class Descriptor: Sendable {
            let fd = Mutex<Int32>(-1)
        }

        init(sending bytes: String? = nil, thenClosing: Bool = false) throws {
            let path = FileManager.default.temporaryDirectory
                .appendingPathComponent("np-silent-\(UUID().uuidString.prefix(8)).sock").path
            let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard listener >= 0 else { throw POSIXError(.init(rawValue: errno)!) }
            let bound = withUnixSocketAddress(path) { bind(listener, $0, $1) }
            guard bound == 0, listen(listener, 8) == 0 else {
                close(listener)
                throw POSIXError(.init(rawValue: errno)!)
            }
            self.path = path
            self.listener = listener
            guard let bytes else { return }
            // Captures only the descriptor and the box, not the server: deinit can always run,
            // and its shutdown(listener) wakes an accept still waiting.
            let accepted = accepted
            let sent = sent
            Thread {
                let fd = accept(listener, nil, nil)
                guard fd >= 0 else { return }
                _ = Array(bytes.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if thenClosing { close(fd) } else { accepted.fd.withLock { $0 = fd } }
                sent.signal()
            }.start()
        }

        /// Waits until the bytes are sent; false after 5 s.
        func awaitSent() -> Bool {
            sent.wait(timeout: .now() + 5) == .success
        }

        deinit {
            _ = shutdown(listener, Int32(SHUT_RDWR))
            close(listener)
            accepted.fd.withLock { if $0 >= 0 { close($0) } }
            unlink(path)
        }
    }

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

    @Test("AgentPathSource reports a stuck agent as not responding, and does not fall back to local evaluation")
    func stuckAgentSource() throws {
        let server = try SilentServer()
        let source = AgentPathSource(
            socketPath: server.path,
            fallback: .local(KernelPathSource()),
            replyTimeout: .milliseconds(300)
        )
        do {
            _ = try source.currentPath(for: .init(name: "default"))
            Issue.record("a path came from a server that never writes")
        } catch let error as AgentPathSourceError {
            #expect(error.code == .notResponding, "\(error)")
            #expect(error.description.contains(server.path), "\(error)")
            #expect(error.description.contains("may be stuck"), "\(error)")
        }
        #expect(!source.isConnected)
    }
}
