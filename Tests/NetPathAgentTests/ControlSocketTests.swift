// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPath
import NetPathControl
import TestSupport
import Testing

/// The control socket against a running agent: answers, monitors, permissions, bad input.
@Suite(.enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct ControlSocketTests {
    static func netpathctl(_ namespace: NetworkNamespace, _ arguments: [String]) throws -> Command.Result {
        try Command.run(["ip", "netns", "exec", namespace.name, BuiltProducts.path("netpathctl")] + arguments)
    }

    @Test("status from the agent equals status --local")
    func statusMatchesLocal() async throws {
        try await NetworkNamespace.with(["ctl", "peer"]) { namespaces in
            try AgentLifecycleTests.uplink(namespaces)
            let agent = try await AgentHarness(namespace: namespaces[0], config: "")
            defer { agent.stop() }
            try await agent.awaitReady()
            // The kernel may still be settling (IPv6 DAD ends ~1.3 s after carrier) between the
            // two reads: compare until one pair agrees, for a bounded time.
            var last: (StatusReport, StatusReport)?
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline {
                let remote = try Self.netpathctl(namespaces[0], ["status", "--json", "--socket", agent.socketPath])
                let local = try Self.netpathctl(
                    namespaces[0],
                    ["status", "--json", "--local", "--config", agent.configFile.path]
                )
                try #require(remote.status == 0 && local.status == 0, "\(remote.stderr)\(local.stderr)")
                let decoder = JSONDecoder()
                var agentReport = try decoder.decode(StatusReport.self, from: Data(remote.stdout.utf8))
                // Only the agent can say whether it probes; --local leaves it out.
                #expect(agentReport.probing == false)
                agentReport.probing = nil
                let pair = (agentReport, try decoder.decode(StatusReport.self, from: Data(local.stdout.utf8)))
                last = pair
                if pair.0 == pair.1 { break }
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(last.map { $0.0 == $0.1 } == true, "agent and --local never agreed: \(String(describing: last))")
        }
    }

    @Test("two monitors get the same events; a stalled one is dropped without delaying hooks")
    func monitors() async throws {
        try await NetworkNamespace.with(["mon", "peer"]) { namespaces in
            try AgentLifecycleTests.uplink(namespaces)
            let agent = try await AgentHarness(namespace: namespaces[0], config: "")
            defer { agent.stop() }
            try await agent.awaitReady()

            let first = try ControlClient(path: agent.socketPath)
            let second = try ControlClient(path: agent.socketPath)
            #expect(try first.request(.monitor).monitoring == true)
            #expect(try second.request(.monitor).monitoring == true)
            // A third monitor that never reads: the agent must drop it, not wait for it.
            let stalled = try ControlClient(path: agent.socketPath)
            _ = try stalled.request(.monitor)

            try namespaces[1].ip("link", "set", "up0p", "down")
            func events(_ client: ControlClient) throws -> [String] {
                var names: [String] = []
                while let line = try client.readLine() {
                    let event = try JSONDecoder().decode(Event.self, from: Data(line.utf8))
                    names.append("\(event.name) \(event.interface ?? "-")")
                    if event.scope == .path { return names }
                }
                return names
            }
            let a = try events(first)
            let b = try events(second)
            #expect(a == ["carrier-down up0", "down up0", "unsatisfied -"])
            #expect(a == b)

            // A monitor that keeps reading, as a separate process, beside the stalled one.
            let reader = try RunningProcess([
                BuiltProducts.path("netpathctl"), "monitor", "--json", "--socket", agent.socketPath,
            ])
            defer { reader.terminate() }
            let read = Recorder<String>()
            await read.record(reader.stdoutLines)
            let readerReady = Recorder<String>()
            await readerReady.record(reader.stderrLines)
            _ = try await readerReady.next("the reading monitor's ready line") { $0.hasPrefix("monitoring netpathd") }

            // About 2 MB of events: 150 addresses added, then removed, 25 per batch. Each event
            // carries the interface's state, addresses included, so they grow to ~12 kB. Every
            // one is a net change (a batch never adds and removes the same address, which the
            // engine would rightly collapse), so each batch's last event is a reliable marker.
            // The reader is at most one batch (~0.3 MB) behind, under the 1 MiB backlog limit;
            // the stalled client falls ever further behind.
            let addresses = (1...150).map { "198.51.100.\($0)" }
            for (verb, event) in [("add", "address-added"), ("del", "address-removed")] {
                for start in stride(from: 0, to: addresses.count, by: 25) {
                    let batch = addresses[start..<start + 25]
                    try namespaces[0].batch(batch.map { "address \(verb) \($0)/32 dev up0" })
                    let last = batch.last!
                    _ = try await read.next("\(event) of \(last) at the reading monitor", timeout: .seconds(30)) {
                        $0.contains("\"event\":\"\(event)\"") && $0.hasPrefix("{\"address\":{\"address\":\"\(last)\"")
                    }
                }
            }
            _ = try await agent.stderr.next("the agent dropping the stalled monitor", timeout: .seconds(30)) {
                $0.contains("dropping a monitor client that does not read")
            }
            #expect(reader.isRunning)
            // The stalled client's connection was closed: after its backlog, end of stream.
            var drained = 0
            while (try? stalled.readLine()) ?? nil != nil { drained += 1 }
            #expect(drained > 0)
            // And hooks were never held up by it: the next change still runs its hook at once.
            try namespaces[1].ip("link", "set", "up0p", "up")
            try await agent.awaitHookRun("a hook after the flood") { $0.hasPrefix("- up up0 0") }
        }
    }

    @Test("reload needs root: a non-root peer is refused, root is obeyed")
    func reloadNeedsRoot() async throws {
        try await NetworkNamespace.with(["perm", "peer"]) { namespaces in
            try AgentLifecycleTests.uplink(namespaces)
            let agent = try await AgentHarness(namespace: namespaces[0], config: "")
            defer { agent.stop() }
            try await agent.awaitReady()
            var info = stat()
            #expect(stat(agent.socketPath, &info) == 0)
            #expect(info.st_mode & 0o777 == 0o660)
            #expect(info.st_uid == 0)

            // With the default mode, another user cannot even connect.
            let denied = try Command.run([
                "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", BuiltProducts.path("netpathctl"),
                "status", "--socket", agent.socketPath,
            ])
            #expect(denied.status != 0)
            #expect(denied.stderr.contains("permission denied on \(agent.socketPath)"), "\(denied.stderr)")

            // Opened up, it can ask for status but not reload: the agent checks SO_PEERCRED.
            chmod(agent.socketPath, 0o666)
            chmod(agent.directory.path, 0o755)
            chmod(agent.directory.appendingPathComponent("run").path, 0o755)
            let status = try Command.run([
                "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", BuiltProducts.path("netpathctl"),
                "status", "--socket", agent.socketPath,
            ])
            #expect(status.status == 0, "\(status.stderr)")
            let reload = try Command.run([
                "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", BuiltProducts.path("netpathctl"),
                "reload", "--socket", agent.socketPath,
            ])
            #expect(reload.status != 0)
            #expect(reload.stderr.contains("only root may reload"), "\(reload.stderr)")
            let rootReload = try Command.run([BuiltProducts.path("netpathctl"), "reload", "--socket", agent.socketPath])
            #expect(rootReload.status == 0, "\(rootReload.stderr)")
        }
    }

    @Test("garbage and a 10 MB request get error replies, and the agent keeps answering")
    func badRequests() async throws {
        try await NetworkNamespace.with(["bad", "peer"]) { namespaces in
            try AgentLifecycleTests.uplink(namespaces)
            let agent = try await AgentHarness(namespace: namespaces[0], config: "")
            defer { agent.stop() }
            try await agent.awaitReady()

            for request in ["garbage\n", "{\"command\":\"format-disk\"}\n", "{}\n", "[1,2,3]\n"] {
                let reply = try RawClient(path: agent.socketPath).exchange(Array(request.utf8))
                #expect(reply.contains("\"ok\":false"), "\(request): \(reply)")
                #expect(reply.contains("malformed request"), "\(request): \(reply)")
            }
            let huge = [UInt8](repeating: UInt8(ascii: "x"), count: 10 << 20)
            let reply = try RawClient(path: agent.socketPath).exchange(huge)
            #expect(reply.contains("request longer than"), "\(reply.prefix(200))")

            let status = try ControlClient(path: agent.socketPath).request(.status)
            #expect(status.ok && status.status?.paths.first?.status == .satisfied)
            #expect(agent.process.isRunning)
        }
    }

    @Test("a client that half-closes after its request gets its reply, with or without the final newline, then the end")
    func halfClosedRequest() async throws {
        try await NetworkNamespace.with(["half", "peer"]) { namespaces in
            try AgentLifecycleTests.uplink(namespaces)
            let agent = try await AgentHarness(namespace: namespaces[0], config: "")
            defer { agent.stop() }
            try await agent.awaitReady()

            for request in [#"{"command":"status"}"# + "\n", #"{"command":"status"}"#] {
                // Several times: the agent may see the request and the end in one wake-up or two.
                for _ in 0..<5 {
                    let (reply, ended) = try RawClient(path: agent.socketPath).halfClosedExchange(Array(request.utf8))
                    let lines = reply.split(separator: "\n")
                    #expect(lines.count == 1 && lines[0].contains(#""ok":true"#), "\(request): \(reply.prefix(200))")
                    #expect(ended, "\(request): the agent kept the connection open after the reply")
                }
            }
        }
    }
}

/// Writes raw bytes to the socket (until the agent stops reading) and returns the first reply line.
struct RawClient {
    let fd: Int32

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        let connected = withUnixSocketAddress(path) { connect(fd, $0, $1) }
        guard connected == 0 else { throw TestFailure("connect: \(errno)") }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    func exchange(_ bytes: [UInt8]) throws -> String {
        defer { close(fd) }
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { break }  // the agent closed after refusing: expected for oversized input
            offset += n
        }
        var reply: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !reply.contains(10) {
            let n = recv(fd, &chunk, chunk.count, 0)
            if n <= 0 { break }
            reply += chunk[..<n]
        }
        return String(decoding: reply, as: UTF8.self)
    }

    /// Sends `bytes`, shuts down the sending side, and reads until the agent closes the connection.
    /// Returns what was read, and whether the read ended because the agent closed (not a timeout).
    func halfClosedExchange(_ bytes: [UInt8]) throws -> (reply: String, ended: Bool) {
        defer { close(fd) }
        let sent = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == bytes.count else { throw TestFailure("send: \(sent) of \(bytes.count) bytes") }
        guard shutdown(fd, Int32(SHUT_WR)) == 0 else { throw TestFailure("shutdown: \(errno)") }
        var reply: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &chunk, chunk.count, 0)
            if n == 0 { return (String(decoding: reply, as: UTF8.self), true) }
            if n < 0 { return (String(decoding: reply, as: UTF8.self), false) }
            reply += chunk[..<n]
        }
    }
}
