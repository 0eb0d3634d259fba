// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathCore
import TestSupport
import Testing

/// NetworkManager-dispatcher scripts run by the real agent on real link changes in a namespace,
/// compared variable by variable with what NetworkManager-dispatcher(8) documents.
@Suite(.enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct NetworkManagerDialectTests {
    struct Run: Decodable {
        var argv: [String]
        var env: [String: String]
    }

    /// Records argv (after $0) and the environment as one JSON line per run.
    static func recorder(log: String) -> String {
        """
        #!/usr/bin/python3
        import json, os, sys
        with open("\(log)", "a") as f:
            f.write(json.dumps({"argv": sys.argv[1:], "env": dict(os.environ)}) + "\\n")
        """
    }

    /// The environment NetworkManager gives every script of a device action.
    static func device(_ action: String, _ interface: String = "up0") -> [String: String] {
        [
            "CONNECTION_UUID": "", "CONNECTION_ID": interface, "CONNECTION_EXTERNAL": "1", "DEVICE_IFACE": interface,
            "DEVICE_IP_IFACE": interface, "NM_DISPATCHER_ACTION": action,
            "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        ]
    }

    @Test("up, dhcp4-change, dhcp6-change, down, up without a gateway, and the interface going away")
    func realLinkChanges() async throws {
        try await NetworkNamespace.with(["nmd", "peer"]) { namespaces in
            let (ns, peer) = (namespaces[0], namespaces[1])
            try ns.addVeth("up0", peer: "up0p", in: peer)
            // No kernel-made link-local address: the IPv6 addresses are exactly the test's.
            try ns.ip("link", "set", "up0", "addrgenmode", "none")
            try ns.ip("link", "set", "up0", "up")
            for address in ["192.0.2.10/24", "198.51.100.10/24"] { try ns.ip("addr", "add", address, "dev", "up0") }
            for address in ["2001:db8::10/64", "2001:db8:1::10/64"] {
                try ns.ip("-6", "addr", "add", address, "dev", "up0", "nodad")
            }
            // Routes on a link without carrier yet: the interface becomes usable with both at once.
            try ns.ip("route", "add", "default", "via", "192.0.2.1", "dev", "up0")
            try ns.ip("-6", "route", "add", "default", "via", "2001:db8::1", "dev", "up0")

            let scratch = try ScratchDirectory.make("np-nm")
            defer { try? FileManager.default.removeItem(at: scratch) }
            chmod(scratch.path, 0o755)
            let etc = scratch.appendingPathComponent("etc-dispatcher.d")
            let lib = scratch.appendingPathComponent("lib-dispatcher.d")
            let log = scratch.appendingPathComponent("nm.jsonl")
            for directory in [etc, lib] {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
                chmod(directory.path, 0o755)
            }
            // /etc's 10-record overrides /usr/lib's, which would leave a mark.
            let scripts = [
                (etc.appendingPathComponent("10-record"), Self.recorder(log: log.path)),
                (lib.appendingPathComponent("10-record"), "#!/bin/sh\ntouch \(scratch.path)/lib-ran\n"),
            ]
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
                    dialect = "networkmanager"
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
            func expect(_ run: Run, _ argv: [String], _ ip: [String: String], _ comment: Comment) {
                var expected = Self.device(argv[1], argv[0]).merging(ip) { $1 }
                expected["CONNECTION_UUID"] = run.env["CONNECTION_UUID"]
                #expect(run.argv == argv, comment)
                #expect(run.env == expected, comment)
            }

            // Carrier: usable with both default routes, two addresses of each family.
            try peer.ip("link", "set", "up0p", "up")
            let up = try await next("up")
            expect(
                up,
                ["up0", "up"],
                [
                    "IP4_ADDRESS_0": "192.0.2.10/24 192.0.2.1", "IP4_ADDRESS_1": "198.51.100.10/24 192.0.2.1",
                    "IP4_NUM_ADDRESSES": "2", "IP4_GATEWAY": "192.0.2.1", "IP4_NUM_ROUTES": "0",
                    "IP6_ADDRESS_0": "2001:db8::10/64 2001:db8::1", "IP6_ADDRESS_1": "2001:db8:1::10/64 2001:db8::1",
                    "IP6_NUM_ADDRESSES": "2", "IP6_GATEWAY": "2001:db8::1",
                ],
                "up"
            )
            let uuid = try #require(up.env["CONNECTION_UUID"])
            #expect(uuid.split(separator: "-").map(\.count) == [8, 4, 4, 4, 12])

            try ns.ip("addr", "add", "203.0.113.10/24", "dev", "up0")
            let dhcp4 = try await next("dhcp4-change")
            #expect(dhcp4.argv == ["up0", "dhcp4-change"])
            #expect(dhcp4.env["IP4_NUM_ADDRESSES"] == "3")
            #expect(dhcp4.env["IP4_ADDRESS_2"] == "203.0.113.10/24 192.0.2.1")
            #expect(dhcp4.env["CONNECTION_UUID"] == uuid, "the same interface keeps its UUID")

            try ns.ip("-6", "addr", "add", "2001:db8:2::10/64", "dev", "up0", "nodad")
            let dhcp6 = try await next("dhcp6-change")
            #expect(dhcp6.argv == ["up0", "dhcp6-change"])
            #expect(dhcp6.env["IP6_NUM_ADDRESSES"] == "3")
            #expect(dhcp6.env["IP6_ADDRESS_2"] == "2001:db8:2::10/64 2001:db8::1")

            // Without default routes the interface is no longer usable: down, without IP variables.
            try ns.ip("route", "del", "default", "via", "192.0.2.1", "dev", "up0")
            try ns.ip("-6", "route", "del", "default", "via", "2001:db8::1", "dev", "up0")
            expect(try await next("down"), ["up0", "down"], [:], "down")

            // A default route with no gateway: NetworkManager writes 0.0.0.0.
            try ns.ip("route", "add", "default", "dev", "up0")
            let bare = try await next("up without a gateway")
            #expect(bare.argv == ["up0", "up"])
            #expect(bare.env["IP4_GATEWAY"] == "0.0.0.0")
            #expect(bare.env["IP4_ADDRESS_0"] == "192.0.2.10/24 0.0.0.0")
            #expect(bare.env["IP6_GATEWAY"] == "0.0.0.0")
            #expect(bare.env["IP6_ADDRESS_0"] == "2001:db8::10/64 0.0.0.0")

            // The interface goes away: down, then nothing more.
            try ns.ip("link", "del", "up0")
            expect(try await next("down of a removed link"), ["up0", "down"], [:], "removed")

            #expect(!FileManager.default.fileExists(atPath: scratch.appendingPathComponent("lib-ran").path))
            let hooks = try Command.run([
                BuiltProducts.path("netpathctl"), "hooks", "--socket", agent.socketPath,
            ])
            #expect(hooks.stdout.contains("\(etc.path) (networkmanager):"), "\(hooks.stdout) \(hooks.stderr)")
            #expect(hooks.stdout.contains("overridden"), "\(hooks.stdout)")
        }
    }
}
