// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathCore
import TestSupport
import Testing

@testable import NetPathAgent

/// `/metrics` as Prometheus scrapes it.
@Suite(.enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct MetricsTests {
    /// `curl`-free HTTP GET over loopback inside the namespace, through the agent's own port.
    static func scrape(_ namespace: NetworkNamespace, port: Int) throws -> String {
        let script =
            "import socket,sys;s=socket.create_connection(('127.0.0.1',\(port)),5);s.sendall(b'GET /metrics HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n');d=b''\nwhile True:\n c=s.recv(65536)\n if not c: break\n d+=c\nsys.stdout.write(d.decode())"
        return try Command.check(["ip", "netns", "exec", namespace.name, "python3", "-c", script])
    }

    /// Samples `name{labels} value` → value, for one metric family.
    static func samples(_ text: String, _ name: String) -> [String: Double] {
        var result: [String: Double] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix(name) && !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            if parts.count >= 2, let value = Double(parts[parts.count - 1]) { result[String(parts[0])] = value }
        }
        return result
    }

    /// Connects to the port at argv[1] with a small receive buffer, sends a scrape, prints
    /// `receiving` once the response has begun, and never reads it.
    static let stalledScraper = """
        import select, socket, sys, time
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect(("127.0.0.1", int(sys.argv[1])))
        s.sendall(b"GET /metrics HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
        select.select([s], [], [], 30)
        print("receiving", flush=True)
        time.sleep(3600)
        """

    @Test("SIGTERM while a scraper holds a large response unread: netpathd still exits at once")
    func stopsDespiteAStalledScraper() async throws {
        try await NetworkNamespace.with(["mstall", "peer"]) { namespaces in
            try AgentLifecycleTests.uplink(namespaces)
            // Loopback's TCP send buffers grow to megabytes; capped at 4 KiB in this namespace (the
            // setting is the namespace's own), the agent's send blocks once the scraper stops.
            _ = try Command.check([
                "ip", "netns", "exec", namespaces[0].name, "sysctl", "-q", "-w", "net.ipv4.tcp_wmem=4096 4096 4096",
            ])
            let port = Int.random(in: 20000...60000)
            // 500 policies with long names: a response of about 60 KB, many times what the socket
            // buffers then hold while the scraper takes nothing.
            let policies = (0..<500).map { "[[policy]]\nname = \"p\($0)-\(String(repeating: "x", count: 60))\"\n" }
            let agent = try await AgentHarness(
                namespace: namespaces[0],
                config: "[agent]\nmetrics = \"127.0.0.1:\(port)\"\nstartup_events = false\n" + policies.joined()
            )
            defer { agent.stop() }
            try await agent.awaitReady()
            let scraper = try RunningProcess([
                "ip", "netns", "exec", namespaces[0].name, "python3", "-c", Self.stalledScraper, String(port),
            ])
            defer { scraper.terminate() }
            let lines = Recorder<String>()
            await lines.record(scraper.stdoutLines)
            _ = try await lines.next("the scraper receiving the start of the response") { $0 == "receiving" }

            agent.process.send(SIGTERM)
            let status = await agent.process.exitStatus(within: .seconds(15))
            #expect(status == 0, "netpathd did not exit within 15 s of SIGTERM while a scraper held its response")
        }
    }

    @Test("/metrics is valid Prometheus text and its counters move with a veth toggle")
    func countersMove() async throws {
        try await NetworkNamespace.with(["metrics", "peer"]) { namespaces in
            try AgentLifecycleTests.uplink(namespaces)
            let port = Int.random(in: 20000...60000)
            let agent = try await AgentHarness(
                namespace: namespaces[0],
                config: "[agent]\nmetrics = \"127.0.0.1:\(port)\"\n"
            )
            defer { agent.stop() }
            try await agent.awaitReady()

            let before = try Self.scrape(namespaces[0], port: port)
            #expect(before.hasPrefix("HTTP/1.1 200 OK"))
            #expect(before.contains("Content-Type: text/plain; version=0.0.4"))
            let body = String(before[before.range(of: "\r\n\r\n")!.upperBound...])
            // Every non-comment line is `name{labels} value`; every family has a TYPE line.
            for line in body.split(separator: "\n") where !line.hasPrefix("#") {
                #expect(
                    line.range(of: #"^[a-zA-Z_:][a-zA-Z0-9_:]*(\{.*\})? -?[0-9.e+-]+$"#, options: .regularExpression)
                        != nil,
                    "\(line)"
                )
            }
            #expect(body.contains("# TYPE netpath_events_total counter"))
            #expect(
                Self.samples(body, "netpath_build_info") == [
                    "netpath_build_info{version=\"\(NetPathVersion.current)\"}": 1
                ],
                "\(body)"
            )
            #expect(Self.samples(body, "netpath_path_satisfied")["netpath_path_satisfied{policy=\"default\"}"] == 1)
            #expect(
                Self.samples(body, "netpath_path_primary")["netpath_path_primary{policy=\"default\",interface=\"up0\"}"]
                    == 1
            )
            let downsBefore =
                Self.samples(body, "netpath_events_total")["netpath_events_total{event=\"down\",scope=\"interface\"}"]
                ?? 0

            try namespaces[1].ip("link", "set", "up0p", "down")
            try await agent.awaitHookRun("the down hook") { $0 == "- down up0 0" }
            let after = try Self.scrape(namespaces[0], port: port)
            let events = Self.samples(after, "netpath_events_total")
            #expect(events["netpath_events_total{event=\"down\",scope=\"interface\"}"] == downsBefore + 1)
            #expect(events["netpath_events_total{event=\"unsatisfied\",scope=\"path\"}"] == 1)
            #expect(Self.samples(after, "netpath_path_satisfied")["netpath_path_satisfied{policy=\"default\"}"] == 0)
            let runs = Self.samples(after, "netpath_hook_runs_total")
            #expect((runs["netpath_hook_runs_total{hook=\"10-record\",outcome=\"success\"}"] ?? 0) >= 1, "\(runs)")
            // Every run is in the histogram, not just the last one before a scrape.
            let successes = runs["netpath_hook_runs_total{hook=\"10-record\",outcome=\"success\"}"] ?? 0
            let durations = Self.samples(after, "netpath_hook_duration_seconds_count")
            #expect(durations["netpath_hook_duration_seconds_count{hook=\"10-record\"}"] == successes, "\(durations)")
            #expect(successes >= 3, "startup events and the toggle's events each ran the hook")
            #expect(after.contains("netpath_netlink_overruns_total 0"))
        }
    }
}

/// The metrics that need no agent running.
struct AgentMetricsTextTests {
    @Test("netpath_build_info carries the version both binaries print with --version")
    func buildInfoNamesTheVersion() {
        let text = AgentMetrics().text()

        #expect(text.contains("# TYPE netpath_build_info gauge"), "\(text)")
        let samples = MetricsTests.samples(text, "netpath_build_info")
        #expect(samples == ["netpath_build_info{version=\"\(NetPathVersion.current)\"}": 1], "\(text)")
    }
}
