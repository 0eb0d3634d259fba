// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathControl
import NetPathCore
import TestSupport
import Testing

/// netpathd and netpathctl with the real probe helper (netpath-probe, started by them as they
/// would be started on a host) against a real HTTP endpoint in throwaway namespaces: two uplinks
/// to one server, and a return route that can be cut for one of them. Nothing leaves the
/// namespaces.
@Suite(.serialSuite, .enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct ConnectivityEndToEndTests {
    static let endpoint = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/probe/endpoint.py")

    /// `host` reaches the server at 10.7.0.1 through up0 (metric 100) and up1 (metric 200); the
    /// endpoint's /chosen answers as `choices` says per client address (endpoint.py).
    static func withUplinks(
        choices: URL? = nil,
        _ body: (NetworkNamespace, NetworkNamespace) async throws -> Void
    ) async throws {
        try await NetworkNamespace.with(["e2e", "srv"]) { spaces in
            let (host, server) = (spaces[0], spaces[1])
            try host.addVeth("up0", peer: "srv0", in: server)
            try host.addVeth("up1", peer: "srv1", in: server)
            try host.batch([
                "addr add 10.9.0.1/24 dev up0", "link set up0 up", "addr add 10.8.0.1/24 dev up1", "link set up1 up",
                "route add default via 10.9.0.2 dev up0 metric 100",
                "route add default via 10.8.0.2 dev up1 metric 200",
            ])
            try server.batch([
                "addr add 10.9.0.2/24 dev srv0", "link set srv0 up", "addr add 10.8.0.2/24 dev srv1",
                "link set srv1 up", "addr add 10.7.0.1/32 dev lo", "addr add 10.7.0.2/32 dev lo",
            ])
            let endpoint = try RunningProcess(
                [
                    "ip", "netns", "exec", server.name, "python3", Self.endpoint.path, "8080",
                ] + (choices.map { [$0.path] } ?? [])
            )
            defer { endpoint.terminate() }
            let first = try await withThrowingTaskGroup(of: String?.self) { group in
                group.addTask { await endpoint.stdoutLines.first { _ in true } }
                group.addTask {
                    try await Task.sleep(for: .seconds(10))
                    return nil
                }
                defer { group.cancelAll() }
                return try await group.next() ?? nil
            }
            guard first == "ready" else { throw TestFailure("the endpoint did not say ready within 10 s") }
            try await body(host, server)
        }
    }

    @Test("netpathctl probe --local runs the helper itself: a portal's URL, and each uplink's own verdict")
    func localProbe() async throws {
        try await Self.withUplinks { host, server in
            let scratch = try ScratchDirectory.make("np-e2e")
            defer { try? FileManager.default.removeItem(at: scratch) }
            let config = scratch.appendingPathComponent("netpath.toml")
            try "[connectivity]\nuri = \"http://10.7.0.1:8080/302\"\ntimeout = \"2s\"\n"
                .write(to: config, atomically: true, encoding: .utf8)
            // up1's answers cannot come back: its verdict is its own, not up0's.
            try server.ip("route", "add", "blackhole", "10.8.0.1/32")
            let result = try ControlSocketTests.netpathctl(
                host,
                ["probe", "--local", "--json", "--config", config.path]
            )
            #expect(result.status == 0, "\(result.stderr)")
            struct Document: Decodable {
                struct Probe: Decodable {
                    var interface: String
                    var verdict: String
                    var portal_url: String?
                }
                var probes: [Probe]
            }
            let probes = try JSONDecoder().decode(Document.self, from: Data(result.stdout.utf8)).probes
            #expect(probes.map(\.interface) == ["up0", "up1"], "\(result.stdout)")
            #expect(probes.first?.verdict == "portal", "\(result.stdout)")
            #expect(probes.first?.portal_url == "http://portal.example/login?from=probe", "\(result.stdout)")
            #expect(probes.last?.verdict == "none", "\(result.stdout)")
        }
    }

    static let http = """
        [connectivity]
        uri = "http://10.7.0.1:8080/204"
        timeout = "2s"
        interval = "1h"
        """

    /// mwan3's way: echo requests to two hosts, one answer is enough.
    static let icmp = """
        [connectivity]
        method = "icmp"
        hosts = ["10.7.0.1", "10.7.0.2"]
        reliability = 1
        timeout = "2s"
        interval = "1h"
        """

    @Test(
        "netpathd with the real helper: require_connectivity moves the primary to the uplink that reaches the endpoint, and back; the helper is sandboxed",
        arguments: ["http", "icmp"]
    )
    func failoverWithTheRealHelper(method: String) async throws {
        try await Self.withUplinks { host, server in
            let agent = try await AgentHarness(
                namespace: host,
                config: """
                    [[policy]]
                    name = "default"
                    require_connectivity = "full"

                    \(method == "icmp" ? Self.icmp : Self.http)
                    """
            )
            defer { agent.stop() }
            try await agent.awaitReady()
            try await Self.awaitPrimary(agent, "up0", connectivity: .full)

            // The helper runs as an unprivileged user, sandboxed, as netpathd's child.
            let helper = try #require(Self.helpers(of: agent.process.processIdentifier).first, "no netpath-probe")
            let status = try String(contentsOfFile: "/proc/\(helper)/status", encoding: .utf8)
            #expect(status.contains("NoNewPrivs:\t1") && status.contains("Seccomp:\t2"), "\(status)")
            #expect(!status.contains("Uid:\t0\t"), "\(status)")

            // up0's answers stop coming back: once it is probed again, up1 carries the path.
            try server.ip("route", "add", "blackhole", "10.9.0.1/32")
            _ = try ControlSocketTests.netpathctl(host, ["probe", "up0", "--socket", agent.socketPath])
            try await Self.awaitPrimary(agent, "up1", connectivity: .full)
            try await agent.awaitHookRun("up0's connectivity-changed to none") {
                $0.hasPrefix("- connectivity-changed up0")
            }

            try server.ip("route", "del", "blackhole", "10.9.0.1/32")
            _ = try ControlSocketTests.netpathctl(host, ["probe", "up0", "--socket", agent.socketPath])
            try await Self.awaitPrimary(agent, "up0", connectivity: .full)
        }
    }

    /// Each answer of the server that is not usable HTTP, as endpoint.py sends it, and its verdict.
    static let hostileAnswers: [(path: String, verdict: Connectivity)] = [
        ("/garbage", .limited),  // 25,600 arbitrary bytes after the request: HTTP/0.9 to libcurl
        ("/version", .limited),  // HTTP/9.9 999999999999 X
        ("/status99", .limited),  // HTTP/1.1 99 X
        ("/status600", .limited),  // HTTP/1.1 600 X
        ("/cut", .limited),  // "HTTP/1.", then the connection closes
        ("/tls", .limited),  // a TLS ServerHello to a plain http:// request
        ("/close", .none),  // the request read, then closed without a byte
    ]

    @Test(
        "require_connectivity = full: each answer that is not usable HTTP gets its verdict and moves the path to the other uplink, a 204 brings it back; both hostile: unsatisfied"
    )
    func hostileAnswersMoveThePath() async throws {
        let choices = try ScratchDirectory.make("np-choices")
        defer { try? FileManager.default.removeItem(at: choices) }
        chmod(choices.path, 0o755)
        let up0 = choices.appendingPathComponent("10.9.0.1")
        let up1 = choices.appendingPathComponent("10.8.0.1")
        try await Self.withUplinks(choices: choices) { host, server in
            let agent = try await AgentHarness(
                namespace: host,
                config: """
                    [[policy]]
                    name = "default"
                    require_connectivity = "full"

                    [connectivity]
                    uri = "http://10.7.0.1:8080/chosen"
                    timeout = "2s"
                    interval = "1h"
                    """
            )
            defer { agent.stop() }
            try await agent.awaitReady()
            try await Self.awaitPrimary(agent, "up0", connectivity: .full)
            for (path, verdict) in Self.hostileAnswers {
                try path.write(to: up0, atomically: true, encoding: .utf8)
                _ = try ControlSocketTests.netpathctl(host, ["probe", "up0", "--socket", agent.socketPath])
                try await Self.awaitPrimary(agent, "up1", connectivity: .full)
                let status = try #require(try ControlClient(path: agent.socketPath).request(.status).status)
                let interface = status.interfaces.first { $0.name == "up0" }
                #expect(interface?.connectivity == verdict, "\(path): \(interface?.connectivityEvidence ?? "")")

                try FileManager.default.removeItem(at: up0)
                _ = try ControlSocketTests.netpathctl(host, ["probe", "up0", "--socket", agent.socketPath])
                try await Self.awaitPrimary(agent, "up0", connectivity: .full)
            }

            // Both uplinks' answers are garbage: no interface is left, the path says why.
            try "/garbage".write(to: up0, atomically: true, encoding: .utf8)
            try "/garbage".write(to: up1, atomically: true, encoding: .utf8)
            _ = try ControlSocketTests.netpathctl(host, ["probe", "--socket", agent.socketPath])
            try await waitUntil("the path is unsatisfied for want of connectivity", timeout: .seconds(20)) {
                let path = try? ControlClient(path: agent.socketPath).request(.status).status?.paths.first
                return path?.status == .unsatisfied && path?.unsatisfiedReason == .noConnectivity
            }
            try FileManager.default.removeItem(at: up0)
            try FileManager.default.removeItem(at: up1)
            _ = try ControlSocketTests.netpathctl(host, ["probe", "--socket", agent.socketPath])
            try await Self.awaitPrimary(agent, "up0", connectivity: .full)
        }
    }

    /// Waits until the default path's primary is `name` with `connectivity`.
    static func awaitPrimary(_ agent: AgentHarness, _ name: String, connectivity: Connectivity) async throws {
        var last = "no status"
        do {
            try await waitUntil("the primary is \(name) with \(connectivity) connectivity", timeout: .seconds(20)) {
                guard let status = try? ControlClient(path: agent.socketPath).request(.status).status,
                    let path = status.paths.first
                else { return false }
                last = "\(path.primary?.name ?? "none") \(path.connectivity)"
                return path.primary?.name == name && path.connectivity == connectivity
            }
        } catch {
            throw TestFailure("\(error); the last status said \(last)")
        }
    }

    /// The netpath-probe processes whose parent is `pid`.
    static func helpers(of pid: Int32) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { candidate in
            guard let stat = try? String(contentsOfFile: "/proc/\(candidate)/stat", encoding: .utf8),
                stat.contains("(netpath-probe)"),
                let fields = stat.split(separator: ")").last?.split(separator: " "), fields.count > 2
            else { return false }
            return Int32(fields[1]) == pid
        }
    }
}
