// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathCore
import TestSupport
import Testing

/// networkd-dispatcher scripts run by the real agent on real link changes in a namespace,
/// compared variable by variable with what networkd-dispatcher(8) documents.
@Suite(.enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct NetworkdDialectTests {
    struct Run: Decodable {
        var argv: [String]
        var env: [String: String]
    }

    /// Records argv (with $0) and the environment as one JSON line per run.
    static func recorder(log: String) -> String {
        """
        #!/usr/bin/python3
        import json, os, sys
        with open("\(log)", "a") as f:
            f.write(json.dumps({"argv": sys.argv, "env": dict(os.environ)}) + "\\n")
        """
    }

    /// The states netpath enters, each with a recording script in /etc's directory.
    static let states = ["configuring", "configured", "linger", "off", "no-carrier", "carrier", "degraded", "routable"]

    @Test(
        "carrier, a link-local address, several IPv4 and IPv6 addresses without a gateway, a default route, and the interface going away"
    )
    func realLinkChanges() async throws {
        try await NetworkNamespace.with(["ndd", "peer"]) { namespaces in
            let (ns, peer) = (namespaces[0], namespaces[1])
            try ns.addVeth("up0", peer: "up0p", in: peer)
            // No kernel-made link-local address: the IPv6 addresses are exactly the test's.
            try ns.ip("link", "set", "up0", "addrgenmode", "none")
            try ns.ip("link", "set", "up0", "up")
            let mac = try ns.ip("-br", "link", "show", "up0").split(separator: " ", omittingEmptySubsequences: true)[2]

            let scratch = try ScratchDirectory.make("np-ndd")
            defer { try? FileManager.default.removeItem(at: scratch) }
            chmod(scratch.path, 0o755)
            let etc = scratch.appendingPathComponent("etc-networkd-dispatcher")
            let lib = scratch.appendingPathComponent("lib-networkd-dispatcher")
            let log = scratch.appendingPathComponent("nd.jsonl")
            for directory in [etc, lib] + Self.states.map({ etc.appendingPathComponent("\($0).d") })
                + [lib.appendingPathComponent("routable.d")]
            {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
                chmod(directory.path, 0o755)
            }
            var scripts = Self.states.map {
                (etc.appendingPathComponent("\($0).d/10-record"), Self.recorder(log: log.path))
            }
            // /etc's routable.d/10-record overrides /usr/lib's, which would leave a mark.
            scripts.append(
                (lib.appendingPathComponent("routable.d/10-record"), "#!/bin/sh\ntouch \(scratch.path)/lib-ran\n")
            )
            for (file, text) in scripts {
                try text.write(to: file, atomically: true, encoding: .utf8)
                chmod(file.path, 0o755)
            }
            let agent = try await AgentHarness(
                namespace: ns,
                config: """
                    [agent]
                    startup_events = false
                    [[hook_dir]]
                    path = ["\(etc.path)", "\(lib.path)"]
                    dialect = "networkd"
                    """
            )
            defer { agent.stop() }
            try await agent.awaitReady()
            var seen = 0
            func next(_ what: String) async throws -> Run {
                seen += 1
                let lines = try await agent.awaitLines(in: log, what, count: seen) { _ in true }
                var run = try JSONDecoder().decode(Run.self, from: Data(lines[seen - 1].utf8))
                // Python sets LC_CTYPE in its own environment when it starts without a locale
                // (PEP 538): not from the agent.
                if run.env["LC_CTYPE"] == "C.UTF-8" { run.env["LC_CTYPE"] = nil }
                return run
            }
            /// Compares `run` with networkd-dispatcher's variables for `state`, `json` apart.
            func expect(
                _ run: Run,
                state: String,
                operational: String,
                administrative: String,
                addr: String = "",
                ipv4: String = "",
                ipv6: String = "",
                _ comment: Comment
            ) throws -> [String: Any] {
                #expect(run.argv == [etc.appendingPathComponent("\(state).d/10-record").path], comment)
                var env = run.env
                let json = try #require(env["json"], comment)
                env["json"] = nil
                #expect(
                    env == [
                        "IFACE": "up0", "STATE": state, "OperationalState": operational,
                        "AdministrativeState": administrative, "ADDR": addr, "IP_ADDRS": ipv4, "IP6_ADDRS": ipv6,
                        "ESSID": "", "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                    ],
                    comment
                )
                let object = try #require(
                    try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
                    comment
                )
                #expect(object["InterfaceName"] as? String == "up0", comment)
                #expect(object["OperationalState"] as? String == operational, comment)
                #expect(object["AdministrativeState"] as? String == administrative, comment)
                #expect(object["State"] as? String == "\(operational) (\(administrative))", comment)
                #expect(object["Type"] as? String == "ether", comment)
                #expect(object["HW Address"] as? String == String(mac), comment)
                return object
            }

            // Carrier without an address.
            try peer.ip("link", "set", "up0p", "up")
            _ = try expect(
                try await next("carrier"),
                state: "carrier",
                operational: "carrier",
                administrative: "configuring",
                "carrier"
            )

            // A link-local address only: degraded; ADDR shows it, the lists leave it out.
            try ns.ip("-6", "addr", "add", "fe80::10/64", "dev", "up0", "nodad")
            _ = try expect(
                try await next("degraded"),
                state: "degraded",
                operational: "degraded",
                administrative: "configuring",
                addr: "fe80::10",
                "degraded"
            )

            // Carrier lost; the addresses added meanwhile change no state.
            try peer.ip("link", "set", "up0p", "down")
            _ = try expect(
                try await next("no-carrier"),
                state: "no-carrier",
                operational: "no-carrier",
                administrative: "configuring",
                addr: "fe80::10",
                "no-carrier"
            )
            for address in ["192.0.2.10/24", "198.51.100.10/24"] { try ns.ip("addr", "add", address, "dev", "up0") }
            for address in ["2001:db8::10/64", "2001:db8:1::10/64"] {
                try ns.ip("-6", "addr", "add", address, "dev", "up0", "nodad")
            }

            // Carrier again, with two global addresses of each family and no gateway: routable.
            try peer.ip("link", "set", "up0p", "up")
            let routable = try expect(
                try await next("routable"),
                state: "routable",
                operational: "routable",
                administrative: "configuring",
                addr: "192.0.2.10",
                ipv4: "192.0.2.10 198.51.100.10",
                ipv6: "2001:db8::10 2001:db8:1::10",
                "routable without a gateway"
            )
            #expect(
                routable["Address"] as? [String]
                    == ["192.0.2.10", "198.51.100.10", "2001:db8::10", "2001:db8:1::10", "fe80::10"]
            )
            #expect(routable["Gateway"] == nil, "no gateway, no Gateway key")

            // A default route makes the interface usable: configured, with its gateway.
            try ns.ip("route", "add", "default", "via", "192.0.2.1", "dev", "up0")
            let configured = try expect(
                try await next("configured"),
                state: "configured",
                operational: "routable",
                administrative: "configured",
                addr: "192.0.2.10",
                ipv4: "192.0.2.10 198.51.100.10",
                ipv6: "2001:db8::10 2001:db8:1::10",
                "configured"
            )
            #expect(configured["Gateway"] as? [String] == ["192.0.2.1"])

            // Carrier lost with the route in place: the administrative state first.
            try peer.ip("link", "set", "up0p", "down")
            let states = [try await next("configuring"), try await next("no-carrier again")]
            #expect(states.map { $0.env["STATE"] } == ["configuring", "no-carrier"])
            #expect(states.allSatisfy { $0.env["OperationalState"] == "no-carrier" })
            #expect(states.allSatisfy { $0.env["AdministrativeState"] == "configuring" })

            // The interface goes away: it lingers and is off (the kernel may show it down first).
            try ns.ip("link", "del", "up0")
            let gone = [try await next("gone"), try await next("gone, second state")]
            #expect(Set(gone.compactMap { $0.env["STATE"] }) == ["linger", "off"], "\(gone.map(\.env))")
            #expect(gone.allSatisfy { $0.env["IFACE"] == "up0" && $0.env["OperationalState"] == "off" })
            #expect(gone.last?.env["AdministrativeState"] == "linger")

            #expect(!FileManager.default.fileExists(atPath: scratch.appendingPathComponent("lib-ran").path))
            let hooks = try Command.run([BuiltProducts.path("netpathctl"), "hooks", "--socket", agent.socketPath])
            #expect(hooks.stdout.contains("\(etc.path)/routable.d (networkd):"), "\(hooks.stdout) \(hooks.stderr)")
            #expect(hooks.stdout.contains("\(lib.path)/routable.d (networkd):"), "\(hooks.stdout)")
            #expect(hooks.stdout.contains("overridden"), "\(hooks.stdout)")
            // Every run so far was expected: nothing ran twice or out of turn.
            let lines = ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n")
            #expect(lines.count == seen, "\(lines)")
        }
    }
}
