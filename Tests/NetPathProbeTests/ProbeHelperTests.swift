// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathCore
import TestSupport
import Testing

@testable import NetPathProbe

/// The real netpath-probe, driven by SandboxedProbe, against a real HTTP server
/// (Tests/Fixtures/probe/endpoint.py) in throwaway namespaces; nothing leaves them.
///
///     [probe ns]  up0 10.9.0.1 ── srv0 10.9.0.2  [srv ns: lo 10.7.0.1, 10.7.0.2; endpoint :8080]
///                 up1 10.8.0.1 ── dead0 10.8.0.2 [dead ns: no route to 10.7.0.0/24]
///     default via 10.9.0.2 dev up0 metric 100; default via 10.8.0.2 dev up1 metric 200
///
/// An unbound socket always leaves through up0, so a probe on up1 that finds nothing shows that
/// the probe really is bound to its interface.
@Suite(.serialSuite, .enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct ProbeHelperTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/probe")
    static let endpoint = "http://10.7.0.1:8080"

    struct Topology {
        var probe: NetworkNamespace
        var server: NetworkNamespace
        var probes: SandboxedProbe
        var scratch: URL
        var index: Int32
    }

    /// The helper, started inside `namespace` (by `ip netns exec`, as the agent would start it in
    /// its own), optionally through `setpriv` as nobody: an agent that is not root.
    /// With `unitBoundingSet`, it starts with netpathd.service's CapabilityBoundingSet (no
    /// CAP_SETPCAP), as the agent's unit starts it.
    static func helper(
        in namespace: NetworkNamespace,
        scratch: URL,
        asNobody: Bool = false,
        unitBoundingSet: Bool = false,
        name: String = "helper"
    ) throws -> String {
        let ip = try Command.check(["sh", "-c", "command -v ip"]).trimmingCharacters(in: .whitespacesAndNewlines)
        let setpriv = try Command.check(["sh", "-c", "command -v setpriv"]).trimmingCharacters(
            in: .whitespacesAndNewlines
        )
        var drop = asNobody ? "\(setpriv) --reuid=65534 --regid=65534 --clear-groups " : ""
        if unitBoundingSet {
            drop +=
                "\(setpriv) --bounding-set=-all,+net_admin,+net_raw,+setuid,+setgid,+kill,+dac_read_search,+dac_override,+chown,+fowner,+audit_write "
        }
        let script = scratch.appendingPathComponent(name)
        try
            "#!/bin/sh\nexec \(ip) netns exec \(namespace.name) \(drop)'\(BuiltProducts.path("netpath-probe"))' \"$@\"\n"
            .write(to: script, atomically: true, encoding: .utf8)
        guard chmod(script.path, 0o755) == 0 else { throw TestFailure("chmod \(script.path)") }
        return script.path
    }

    static func withTopology(_ body: (Topology) async throws -> Void) async throws {
        try await NetworkNamespace.with(["probe", "srv", "dead"]) { spaces in
            let (probe, server, dead) = (spaces[0], spaces[1], spaces[2])
            try probe.addVeth("up0", peer: "srv0", in: server)
            try probe.addVeth("up1", peer: "dead0", in: dead)
            try probe.batch([
                "addr add 10.9.0.1/24 dev up0", "link set up0 up", "addr add 10.8.0.1/24 dev up1", "link set up1 up",
                "route add default via 10.9.0.2 dev up0 metric 100",
                "route add default via 10.8.0.2 dev up1 metric 200",
            ])
            try server.batch([
                "addr add 10.9.0.2/24 dev srv0", "link set srv0 up", "addr add 10.7.0.1/32 dev lo",
                "addr add 10.7.0.2/32 dev lo",
            ])
            try dead.batch(["addr add 10.8.0.2/24 dev dead0", "link set dead0 up"])
            let endpoint = try RunningProcess([
                "ip", "netns", "exec", server.name, "python3", fixtures.appendingPathComponent("endpoint.py").path,
                "8080",
            ])
            defer { endpoint.terminate() }
            try await firstLine(of: endpoint, is: "ready")
            let scratch = try ScratchDirectory.make("probe")
            defer { try? FileManager.default.removeItem(at: scratch) }
            let probes = SandboxedProbe(helperPath: try helper(in: probe, scratch: scratch))
            try await body(
                Topology(
                    probe: probe,
                    server: server,
                    probes: probes,
                    scratch: scratch,
                    index: try probe.index(of: "up0")
                )
            )
            await probes.stop()
        }
    }

    static func firstLine(of process: RunningProcess, is expected: String) async throws {
        let line = try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask { await process.stdoutLines.first { _ in true } }
            group.addTask {
                try await Task.sleep(for: .seconds(10))
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
        guard line == expected else {
            throw TestFailure("the endpoint did not say \(expected) within 10 s (said \(line ?? "nothing"))")
        }
    }

    static func http(
        _ path: String,
        on interface: String = "up0",
        expect response: String = "",
        timeout: Duration = .seconds(2)
    ) -> ProbeRequest {
        ProbeRequest(
            interface: interface,
            index: 0,
            method: .http(uri: endpoint + path, response: response),
            timeout: timeout
        )
    }

    /// The helper's /proc/PID/status fields.
    static func procStatus(_ pid: Int32) throws -> [String: String] {
        let text = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        var fields: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2 { fields[String(parts[0])] = parts[1].trimmingCharacters(in: .whitespaces) }
        }
        return fields
    }

    @Test("each answer of the endpoint gets its verdict, a portal its URL")
    func verdicts() async throws {
        try await Self.withTopology { topology in
            let cases: [(String, String, Connectivity, String?)] = [
                ("/204", "", .full, nil),
                ("/ok", "Netpath", .full, nil),
                ("/302", "", .portal, "http://portal.example/login?from=probe"),
                ("/page", "", .portal, Self.endpoint + "/page"),
                ("/500", "", .limited, nil),
                ("/wrong", "Netpath", .limited, nil),
                ("/204", "Netpath", .limited, nil),
            ]
            for (path, response, state, portal) in cases {
                let result = await topology.probes.probe(Self.http(path, expect: response))
                #expect(result.connectivity == state, "\(path): \(result.evidence)")
                #expect(result.portalURL == portal, "\(path)")
                #expect(result.interface == "up0")
            }
            let full = await topology.probes.probe(Self.http("/204"))
            #expect(full.loss == 0 && full.roundTrip != nil && full.evidence == "HTTP 204 as expected")
        }
    }

    @Test("no listener, or packets dropped on the way back: none within the timeout")
    func noAnswer() async throws {
        try await Self.withTopology { topology in
            let refused = await topology.probes.probe(
                ProbeRequest(
                    interface: "up0",
                    index: 0,
                    method: .http(uri: "http://10.7.0.1:8081/", response: ""),
                    timeout: .seconds(2)
                )
            )
            #expect(refused.connectivity == .none && refused.loss == 1, "\(refused.evidence)")
            // The server's answers to the probe's address go nowhere.
            try topology.server.ip("route", "add", "blackhole", "10.9.0.1/32")
            let started = ContinuousClock.now
            let dropped = await topology.probes.probe(Self.http("/204"))
            #expect(dropped.connectivity == .none, "\(dropped.evidence)")
            #expect(ContinuousClock.now - started < .seconds(4), "the timeout (2 s) and the grace (2 s)")
        }
    }

    @Test("hostile answers each get a verdict within the timeout, and the helper stays small")
    func hostileAnswers() async throws {
        try await Self.withTopology { topology in
            let cases: [(String, Connectivity)] = [
                ("/headers", .limited),  // 10 MB of headers
                ("/endless", .portal),  // an endless page
                ("/slow", .none),  // a byte a minute
                ("/hang", .none),  // accepts, never answers
                ("/loop", .portal),  // a redirect to itself: not followed
                ("/badutf8", .portal),  // invalid UTF-8 and an escape sequence in Location
            ]
            for (path, state) in cases {
                let started = ContinuousClock.now
                let result = await topology.probes.probe(Self.http(path))
                let elapsed = ContinuousClock.now - started
                #expect(result.connectivity == state, "\(path): \(result.evidence)")
                // The timeout (2 s) and SandboxedProbe's grace (2 s): on two shared cores a probe
                // may end a little after its timeout; the byte a minute alone would take 26 min.
                #expect(elapsed < .seconds(4), "\(path) took \(elapsed)")
                #expect(!result.evidence.unicodeScalars.contains { $0.properties.generalCategory == .control })
            }
            let loop = await topology.probes.probe(Self.http("/loop"))
            #expect(loop.portalURL == Self.endpoint + "/loop")
            let bad = await topology.probes.probe(Self.http("/badutf8"))
            #expect(bad.portalURL == "http://portal.example/\\xff\\xfe\\x1b[31m")
            let pid = try #require(await topology.probes.status().first?.processID)
            let peak = try #require(Self.procStatus(pid)["VmHWM"]?.split(separator: " ").first.flatMap { Int($0) })
            #expect(peak < 32 * 1024, "the helper's peak RSS is \(peak) kB")
            print("ProbeHelperTests: the helper's peak RSS after the hostile answers: \(peak) kB")
            #expect(await topology.probes.status().first?.starts == 1, "the helper survived all of it")
        }
    }

    @Test(
        "an answer that is not usable HTTP is limited with its evidence, never unknown; nothing at all is none",
        arguments: [
            ("/garbage", Connectivity.limited, "bytes that arrived"),  // 25,600 arbitrary bytes: HTTP/0.9 to libcurl
            ("/version", .limited, "bytes that arrived"),  // HTTP/9.9 999999999999 X
            ("/status99", .limited, "bytes that arrived"),  // HTTP/1.1 99 X: libcurl rejects it
            ("/status600", .limited, "HTTP 600"),  // libcurl passes it on; the verdict rule rejects it
            ("/cut", .limited, "7 bytes that arrived"),  // "HTTP/1.", then the connection closes
            ("/tls", .limited, "bytes that arrived"),  // a TLS ServerHello to a plain http:// request
            ("/close", .none, "Empty reply from server"),  // the request read, then closed without a byte
        ]
    )
    func unusableAnswers(path: String, state: Connectivity, evidence: String) async throws {
        try await Self.withTopology { topology in
            let result = await topology.probes.probe(Self.http(path))
            #expect(result.connectivity == state, "\(path): \(result.evidence)")
            #expect(result.evidence.contains(evidence), "\(path): \(result.evidence)")
            #expect(result.loss == (state == .none ? 1 : 0), "\(path)")
            #expect(await topology.probes.status().first?.starts == 1, "the helper survived \(path)")
        }
    }

    @Test("https:// to a plain HTTP port: the server's plain answer to the TLS handshake is limited")
    func tlsToPlainPort() async throws {
        try await Self.withTopology { topology in
            let result = await topology.probes.probe(
                ProbeRequest(
                    interface: "up0",
                    index: 0,
                    method: .http(uri: "https://10.7.0.1:8080/204", response: ""),
                    timeout: .seconds(2)
                )
            )
            #expect(result.connectivity == .limited, "\(result.evidence)")
            #expect(result.evidence.contains("bytes that arrived"), "\(result.evidence)")
        }
    }

    @Test("two uplinks, one reaching the endpoint: each gets its own verdict (the probe is bound)")
    func boundToInterface() async throws {
        try await Self.withTopology { topology in
            async let working = topology.probes.probe(Self.http("/204", on: "up0"))
            async let cut = topology.probes.probe(Self.http("/204", on: "up1"))
            let (a, b) = await (working, cut)
            #expect(a.connectivity == .full, "\(a.evidence)")
            #expect(b.connectivity == .none, "\(b.evidence)")
            let missing = await topology.probes.probe(Self.http("/204", on: "nosuch0"))
            #expect(
                missing.connectivity == .unknown && missing.evidence.contains("SO_BINDTODEVICE"),
                "\(missing.evidence)"
            )
        }
    }

    @Test("icmp: two hosts, reliability 1, on both uplinks; raw sockets with CAP_NET_RAW alone, ping sockets with none")
    func icmp() async throws {
        try await Self.withTopology { topology in
            func request(_ interface: String, reliability: Int) -> ProbeRequest {
                ProbeRequest(
                    interface: interface,
                    index: 0,
                    method: .icmp(hosts: ["10.7.0.1", "10.6.6.6"], count: 2, reliability: reliability),
                    timeout: .seconds(1)
                )
            }
            let up = await topology.probes.probe(request("up0", reliability: 1))
            #expect(
                up.connectivity == .full && up.loss == 0.5 && up.roundTrip != nil,
                "\(up.evidence) loss \(String(describing: up.loss))"
            )
            let down = await topology.probes.probe(request("up1", reliability: 1))
            #expect(down.connectivity == .none && down.loss == 1, "\(down.evidence)")
            let strict = await topology.probes.probe(request("up0", reliability: 2))
            #expect(strict.connectivity == .limited, "\(strict.evidence)")
            // A name that does not resolve counts against reliability, as DNS failing: limited.
            let started = ContinuousClock.now
            let unresolved = await topology.probes.probe(
                ProbeRequest(
                    interface: "up0",
                    index: 0,
                    method: .icmp(hosts: ["10.7.0.1", "no-such-host.invalid"], count: 1, reliability: 2),
                    timeout: .seconds(1)
                )
            )
            #expect(unresolved.connectivity == .limited, "\(unresolved.evidence)")
            #expect(unresolved.evidence.contains("not resolved: no-such-host.invalid"), "\(unresolved.evidence)")
            #expect(ContinuousClock.now - started < .seconds(3))
            // ping_group_range is "1 0" in a new namespace: the helper kept CAP_NET_RAW, and only it.
            let raw = try #require(await topology.probes.status().first { $0.mode == "icmp" })
            #expect(raw.effectiveCapabilities == 1 << 13)
            #expect(try Self.procStatus(try #require(raw.processID))["CapEff"] == "0000000000002000")

            try Command.check([
                "ip", "netns", "exec", topology.probe.name, "sysctl", "-qw", "net.ipv4.ping_group_range=0 2147483647",
            ])
            let pings = SandboxedProbe(
                helperPath: try Self.helper(in: topology.probe, scratch: topology.scratch, name: "helper-ping")
            )
            let viaPing = await pings.probe(request("up0", reliability: 1))
            #expect(viaPing.connectivity == .full, "\(viaPing.evidence)")
            let status = try #require(await pings.status().first)
            #expect(status.effectiveCapabilities == 0)
            #expect(try Self.procStatus(try #require(status.processID))["CapEff"] == "0000000000000000")
            await pings.stop()
        }
    }

    @Test(
        "under netpathd.service's bounding set (no CAP_SETPCAP to empty it) the helper still becomes another user without capabilities and probes"
    )
    func sandboxedUnderTheUnitsBoundingSet() async throws {
        try await Self.withTopology { topology in
            let probes = SandboxedProbe(
                helperPath: try Self.helper(
                    in: topology.probe,
                    scratch: topology.scratch,
                    unitBoundingSet: true,
                    name: "helper-unit"
                )
            )
            let result = await probes.probe(Self.http("/204"))
            #expect(result.connectivity == .full, "\(result.evidence)")
            let pid = try #require(await probes.status().first?.processID)
            let status = try Self.procStatus(pid)
            #expect(status["Uid"]?.split(separator: "\t").allSatisfy { $0 != "0" } == true, "\(status["Uid"] ?? "")")
            #expect(status["CapEff"] == "0000000000000000" && status["CapPrm"] == "0000000000000000")
            #expect(status["NoNewPrivs"] == "1")
            #expect(status["Seccomp"] == "2")
            await probes.stop()
        }
    }

    @Test("the helper runs as another user, with no capabilities, no_new_privs, seccomp, and only its socket open")
    func sandboxed() async throws {
        try await Self.withTopology { topology in
            #expect(await topology.probes.probe(Self.http("/204")).connectivity == .full)
            let pid = try #require(await topology.probes.status().first?.processID)
            let status = try Self.procStatus(pid)
            let uids = status["Uid"]?.split(separator: "\t").compactMap { Int($0) } ?? []
            #expect(uids.count == 4 && uids.allSatisfy { $0 != 0 }, "Uid: \(status["Uid"] ?? "")")
            #expect(status["Groups"] == "", "no supplementary groups")
            #expect(status["CapEff"] == "0000000000000000" && status["CapPrm"] == "0000000000000000")
            #expect(status["CapBnd"] == "0000000000000000")
            #expect(status["NoNewPrivs"] == "1")
            #expect(status["Seccomp"] == "2")
            let fds = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").sorted()
            #expect(fds == ["0", "1", "2", "3"])
            for fd in ["0", "1", "2"] {
                #expect(
                    try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)") == "/dev/null"
                )
            }
        }
    }

    @Test("an unprivileged agent's helper adds no_new_privs and seccomp, and probes")
    func unprivilegedAgent() async throws {
        try await Self.withTopology { topology in
            let probes = SandboxedProbe(
                helperPath: try Self.helper(
                    in: topology.probe,
                    scratch: topology.scratch,
                    asNobody: true,
                    name: "helper-nobody"
                )
            )
            let result = await probes.probe(Self.http("/204"))
            #expect(result.connectivity == .full, "\(result.evidence)")
            let pid = try #require(await probes.status().first?.processID)
            let status = try Self.procStatus(pid)
            #expect(
                status["Uid"]?.hasPrefix("65534") == true && status["NoNewPrivs"] == "1" && status["Seccomp"] == "2"
            )
            await probes.stop()
        }
    }

    @Test("SIGKILL mid-probe: that probe is unknown, the helper is restarted and the next verdict arrives")
    func killedMidProbe() async throws {
        try await Self.withTopology { topology in
            #expect(await topology.probes.probe(Self.http("/204")).connectivity == .full)
            let pid = try #require(await topology.probes.status().first?.processID)
            async let hanging = topology.probes.probe(Self.http("/hang", timeout: .seconds(10)))
            // The request is on its way once the endpoint has a connection from the helper.
            try await waitUntil("the helper connected to /hang") {
                let out = try Command.check([
                    "ip", "netns", "exec", topology.server.name, "ss", "-Htn", "state", "established", "sport",
                    "= :8080",
                ])
                return !out.isEmpty
            }
            kill(pid, SIGKILL)
            let killed = await hanging
            #expect(killed.connectivity == .unknown && killed.evidence.contains("signal 9"), "\(killed.evidence)")
            let next = await topology.probes.probe(Self.http("/204"))
            #expect(next.connectivity == .full, "\(next.evidence)")
            let status = try #require(await topology.probes.status().first)
            #expect(status.starts == 2 && status.processID != pid)
        }
    }
}
