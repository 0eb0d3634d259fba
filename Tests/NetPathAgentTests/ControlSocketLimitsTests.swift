// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPath
import NetPathControl
import Synchronization
import TestSupport
import Testing

/// The control socket under abuse: clients that hold connections without a word, and a client
/// that pipelines requests without reading its replies. They measure time (how soon a root
/// `status` is answered, when idle connections are closed): `make test` runs them serially.
@Suite(.serialSuite, .enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct ControlSocketLimitsTests {
    /// Opens `count` connections to the socket at argv[1] and never writes. Prints `refused N`
    /// when the agent refused connection N, `closed N SECONDS` when the agent closed it without a
    /// word SECONDS after the last connect, `answered N` for anything else.
    static let silentClients = """
        import select, socket, sys, time
        path, count = sys.argv[1], int(sys.argv[2])
        sockets = []
        for i in range(count):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            sockets.append(s)
        start = time.monotonic()
        print("connected", count, flush=True)
        waiting = {s.fileno(): (i, s) for i, s in enumerate(sockets)}
        received = {}
        while waiting:
            ready, _, _ = select.select(list(waiting), [], [], 60)
            for fd in ready:
                i, s = waiting[fd]
                data = s.recv(4096)
                if data:
                    received[i] = received.get(i, b"") + data
                    continue
                del waiting[fd]
                text = received.get(i, b"")
                if b"too many clients" in text:
                    print("refused", i, flush=True)
                elif text:
                    print("answered", i, flush=True)
                else:
                    print("closed", i, round(time.monotonic() - start, 2), flush=True)
        time.sleep(3600)
        """

    /// `netpathctl ARGS` as uid/gid 65534.
    static func unprivileged(_ arguments: [String]) throws -> Command.Result {
        try Command.run(
            ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", BuiltProducts.path("netpathctl")]
                + arguments
        )
    }

    @Test(
        "80 silent connections of another user: root's status and reload are answered at once, and the silent ones are closed after the idle deadline"
    )
    func silentConnections() async throws {
        try await NetworkNamespace.with(["silent", "peer"]) { namespaces in
            try AgentLifecycleTests.uplink(namespaces)
            let agent = try await AgentHarness(namespace: namespaces[0], config: "")
            defer { agent.stop() }
            try await agent.awaitReady()
            // Opened up, as reloadNeedsRoot does: a non-root user may connect.
            chmod(agent.socketPath, 0o666)
            chmod(agent.directory.appendingPathComponent("run").path, 0o755)

            let holder = try RunningProcess([
                "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c",
                Self.silentClients, agent.socketPath, "80",
            ])
            defer { holder.terminate() }
            let lines = Recorder<String>()
            await lines.record(holder.stdoutLines)
            // A refusal means every slot another user may take is held.
            _ = try await lines.next("the agent refusing one of the 80 connections") { $0.hasPrefix("refused ") }

            let asked = ContinuousClock.now
            let status = try ControlClient(path: agent.socketPath).request(.status)
            #expect(status.ok, "root's status was refused: \(status.error ?? "")")
            let reload = try ControlClient(path: agent.socketPath).request(.reload)
            #expect(reload.ok, "root's reload was refused: \(reload.error ?? "")")
            // Well inside the idle deadline: answered from the reserve, not after evictions.
            #expect(ContinuousClock.now - asked < .seconds(2), "answered after \(ContinuousClock.now - asked)")
            // The reserve is root's alone: the other user is refused while its slots are held.
            let refused = try Self.unprivileged(["status", "--socket", agent.socketPath])
            #expect(refused.status != 0 && refused.stderr.contains("too many clients"), "\(refused.stderr)")

            // The silent connections are closed once idle for the deadline, and not before.
            var closed: [Double] = []
            while closed.count < 64 {
                let line = try await lines.next("the agent closing silent connection \(closed.count + 1) of 64") {
                    $0.hasPrefix("closed ") || $0.hasPrefix("answered ")
                }
                #expect(line.hasPrefix("closed "), "\(line)")
                closed.append(Double(line.split(separator: " ").last ?? "") ?? -1)
            }
            let idle = Double(ControlProtocol.idleTimeout.components.seconds)
            #expect(closed.allSatisfy { $0 > idle - 1.5 && $0 < idle + 5 }, "closed after \(closed) s")
            #expect(await lines.all.filter { $0.hasPrefix("refused ") }.count == 16)
            // With the slots free again, the other user is answered.
            let answered = try Self.unprivileged(["status", "--socket", agent.socketPath])
            #expect(answered.status == 0, "\(answered.stderr)")
        }
    }

    @Test(
        "a client that pipelines 200,000 requests and reads nothing: the agent stops reading it, does not grow, answers others at once and closes it"
    )
    func pipelinedFlood() async throws {
        try await NetworkNamespace.with(["flood", "peer"]) { namespaces in
            try AgentLifecycleTests.uplink(namespaces)
            let agent = try await AgentHarness(namespace: namespaces[0], config: "")
            defer { agent.stop() }
            try await agent.awaitReady()
            let pid = agent.process.processIdentifier
            let before = try Self.residentKiB(pid)

            let flood = try Flood(path: agent.socketPath)
            let started = AsyncStream<Void>.makeStream()
            let sending = Task.detached { await onThread { flood.send(requests: 200_000, started: started.1) } }
            var iterator = started.0.makeAsyncIterator()
            _ = await iterator.next()

            // While the flood is on, another client's status is answered at once.
            var slowest: Duration = .zero
            for _ in 0..<10 {
                let asked = ContinuousClock.now
                let reply = try ControlClient(path: agent.socketPath).request(.status)
                slowest = max(slowest, ContinuousClock.now - asked)
                #expect(reply.ok)
            }
            #expect(slowest < .seconds(1), "a status took \(slowest) during the flood")

            let sent = await sending.value
            #expect(sent < 200_000, "the agent read all \(sent) requests of a client that reads no replies")
            let grown = try Self.residentKiB(pid) - before
            #expect(grown < 32 * 1024, "the agent grew by \(grown) KiB")
            // It is not kept forever either: the agent closes it once its reply waits too long.
            #expect(flood.awaitHangUp(within: .seconds(15)), "the flooding connection is still open")
            #expect(agent.process.isRunning)
        }
    }

    /// The process's resident set (VmRSS), in KiB.
    static func residentKiB(_ pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kib = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { throw TestFailure("no VmRSS in /proc/\(pid)/status") }
        return kib
    }
}

/// A connection that writes `status` requests as fast as the agent takes them and never reads.
final class Flood: Sendable {
    let fd: Int32

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        let connected = withUnixSocketAddress(path) { connect(fd, $0, $1) }
        guard connected == 0 else {
            close(fd)
            throw TestFailure("connect \(path): \(String(cString: strerror(errno)))")
        }
        // A send that waits this long means the agent stopped reading.
        var limit = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    /// Sends up to `requests` requests, 1,000 per write; returns how many the agent took.
    func send(requests: Int, started: AsyncStream<Void>.Continuation) -> Int {
        let request = Array(#"{"command":"status"}"#.utf8) + [10]
        let batch = Array([[UInt8]](repeating: request, count: 1000).joined())
        var sentBytes = 0
        defer { started.finish() }
        while sentBytes < request.count * requests {
            let offset = sentBytes % batch.count
            let n = batch.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            sentBytes += n
            started.yield()
        }
        return sentBytes / request.count
    }

    /// Whether the agent closed the connection within `timeout` (POLLHUP: it will read no more).
    func awaitHangUp(within timeout: Duration) -> Bool {
        var entry = pollfd(fd: fd, events: 0, revents: 0)
        let milliseconds = Int32(timeout.components.seconds * 1000)
        return poll(&entry, 1, milliseconds) == 1 && entry.revents & Int16(POLLHUP) != 0
    }
}

/// Runs blocking `body` on a thread of its own, off the cooperative pool.
func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}
