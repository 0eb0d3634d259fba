import Dispatch
import Foundation
import Glibc
import NetPath
import TestSupport
import Testing

/// The control client against a socket that accepts but never answers (a stuck agent): every
/// request gives up at its timeout with an error that says so, and so does `AgentPathSource`.
@Suite(.timeLimit(.minutes(1)))
struct ControlClientTests {
    /// A listening Unix socket that never replies; with `partial`, it accepts the first
    /// connection and sends those bytes (no newline) before going silent.
    final class SilentServer: @unchecked Sendable {
        // @unchecked: `listener` and `path` are set in init and only read afterwards; `accepted`
        // is written by the accepting thread before `done` is signalled, and read after it.
        let path: String
        private let listener: Int32
        private var accepted: Int32 = -1
        private let done = DispatchSemaphore(value: 0)
        private var accepting = false

        init(partial: String? = nil) throws {
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
            guard let partial else { return }
            accepting = true
            Thread { [self] in
                let fd = accept(listener, nil, nil)
                if fd >= 0 { _ = Array(partial.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) } }
                accepted = fd
                done.signal()
            }.start()
        }

        deinit {
            // The client has connected by now (each test does), so the thread has finished.
            if accepting, done.wait(timeout: .now() + 5) == .success, accepted >= 0 { close(accepted) }
            close(listener)
            unlink(path)
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
            #expect("\(error)".contains("did not reply within"), "\(error)")
        }
        let waited = ContinuousClock.now - started
        #expect(waited >= .milliseconds(300), "gave up early: \(waited)")
        #expect(waited < .seconds(5), "the timeout did not hold: \(waited)")
    }

    @Test("a reply that starts but never ends also fails at the timeout")
    func partialReply() throws {
        let server = try SilentServer(partial: "{\"ok\":")
        let client = try ControlClient(path: server.path)
        #expect(throws: ControlClient.Failure.self) { _ = try client.request(.hooks, timeout: .milliseconds(300)) }
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
