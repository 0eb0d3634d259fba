// SPDX-License-Identifier: Apache-2.0

import Foundation
import TestSupport
import Testing

/// `netpathctl explain --local`: prefer wired over a lower-metric Wi-Fi, and say why.
@Suite(.enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct ExplainCommandTests {
    static let config = """
        [[interface]]
        match = "wlan*"
        type = "wifi"
        [[interface]]
        match = "eth*"
        type = "wired"
        [[interface]]
        match = "wwan*"
        type = "cellular"
        [[policy]]
        name = "default"
        metered = "deny"
        prefer = ["wired", "wifi", "cellular"]
        [[rule]]
        name = "wired-up"
        on = ["up"]
        type = ["wired"]
        run = ["20-modem-off"]
        """

    @Test("a policy that requires connectivity without [connectivity]: explain says probing is off")
    func probingOff() async throws {
        try await NetworkNamespace.with(["explainoff"]) { namespaces in
            let file = FileManager.default.temporaryDirectory.appendingPathComponent(
                "np-explain-\(UUID().uuidString).toml"
            )
            try "[[policy]]\nname = \"default\"\nrequire_connectivity = \"full\"\n"
                .write(to: file, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: file) }
            let text = try Command.check([
                "ip", "netns", "exec", namespaces[0].name, BuiltProducts.path("netpathctl"), "explain", "--local",
                "--config", file.path,
            ])
            #expect(text.contains("probing is off (no [connectivity] table)"), "\(text)")
        }
    }

    @Test("wired wins over a lower-metric Wi-Fi under prefer, the modem is denied, and each reason is given")
    func preferWired() async throws {
        try await NetworkNamespace.with(["explain", "peer"]) { namespaces in
            let (ns, peer) = (namespaces[0], namespaces[1])
            for (n, (name, metric)) in [("eth0", "600"), ("wlan0", "100"), ("wwan0", "50")].enumerated() {
                try ns.addVeth(name, peer: name + "p", in: peer)
                try ns.ip("link", "set", name, "up")
                try peer.ip("link", "set", name + "p", "up")
                try ns.ip("addr", "add", "10.\(n + 1).0.2/24", "dev", name)
                try ns.ip("route", "add", "default", "via", "10.\(n + 1).0.1", "dev", name, "metric", metric)
            }
            let file = FileManager.default.temporaryDirectory.appendingPathComponent(
                "np-explain-\(UUID().uuidString).toml"
            )
            try Self.config.write(to: file, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: file) }
            let base = [
                "ip", "netns", "exec", ns.name, BuiltProducts.path("netpathctl"), "explain", "--local", "--config",
                file.path,
            ]

            let text = try Command.check(base)
            #expect(text.contains("Policy \"default\""))
            #expect(text.contains("satisfied via eth0 (wired)"))
            #expect(text.contains("lost: wifi comes after wired in prefer"))
            #expect(text.contains("metered denied"))

            let json = try Command.check(base + ["--json"])
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
            let policy = try #require((object["policies"] as? [[String: Any]])?.first)
            #expect((policy["path"] as? [String: Any])?["primary"] as? String == "eth0")
            let verdicts = try #require(policy["interfaces"] as? [[String: Any]])
            func verdict(_ name: String) -> [String: Any]? { verdicts.first { $0["name"] as? String == name } }
            #expect(verdict("eth0")?["outcome"] as? String == "primary")
            #expect(verdict("wlan0")?["reason"] as? String == "lower-preference")
            #expect(verdict("wwan0")?["reason"] as? String == "metered-denied")
            let rule = try #require((object["rules"] as? [[String: Any]])?.first)
            #expect(rule["rule"] as? String == "wired-up")
            let events = try #require(rule["events"] as? [[String: Any]])
            let matched = events.filter { $0["matched"] as? Bool == true }
            #expect(matched.count == 1)
            #expect(matched.first?["interface"] as? String == "eth0")
            #expect(matched.first?["target"] as? String == "hooks 20-modem-off; timeout 30s")
        }
    }
}
