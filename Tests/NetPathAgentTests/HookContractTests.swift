// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPath
import TestSupport
import Testing

/// The hook contract end to end: a kernel change in a namespace, the real agent, a real hook.
@Suite(.enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct HookContractTests {
    /// Records argv, environment, working directory and stdin as one JSON line per run.
    static func recorder(log: String) -> String {
        """
        #!/usr/bin/python3
        import json, os, sys
        record = {"argv": sys.argv[1:], "env": dict(os.environ), "cwd": os.getcwd(), "stdin": sys.stdin.read()}
        with open("\(log)", "a") as f:
            f.write(json.dumps(record) + "\\n")
        """
    }

    struct Run: Decodable {
        var argv: [String]
        var env: [String: String]
        var cwd: String
        var stdin: String
    }

    /// carrier-down, then down (the interface's), then the path's event (no interface).
    static func order(_ run: Run) -> (Int, Int) {
        ((run.argv.first ?? "").isEmpty ? 1 : 0, run.argv.dropFirst().first == "down" ? 1 : 0)
    }

    static let expectedNames: Set<String> = [
        "NETPATH_EVENT", "NETPATH_SCOPE", "NETPATH_POLICY", "NETPATH_RULE", "NETPATH_INTERFACE",
        "NETPATH_INTERFACE_TYPE", "NETPATH_INTERFACE_KIND", "NETPATH_PREVIOUS_INTERFACE", "NETPATH_STATUS",
        "NETPATH_METERED", "NETPATH_CONSTRAINED", "NETPATH_IPV4", "NETPATH_IPV6", "NETPATH_DNS",
        "NETPATH_ADDRESSES", "NETPATH_GATEWAYS", "NETPATH_STARTUP", "NETPATH_CONNECTIVITY",
        "NETPATH_PREVIOUS_CONNECTIVITY", "NETPATH_PORTAL_URL", "PATH", "LANG",
    ]

    @Test("a veth toggle runs the hook with the documented argv, environment and stdin, and nothing else")
    func vethToggle() async throws {
        try await NetworkNamespace.with(["contract", "peer"]) { namespaces in
            try AgentLifecycleTests.uplink(namespaces)
            let agent = try await AgentHarness(
                namespace: namespaces[0],
                config:
                    "[[rule]]\nname = \"watch\"\non = [\"carrier-down\", \"down\", \"unsatisfied\"]\nrun = [\"10-record\", \"20-contract\"]\n",
                environment: ["NETPATH_LEAK_MARKER": "must-not-reach-hooks", "HOME": "/root"]
            )
            defer { agent.stop() }
            let log = agent.directory.appendingPathComponent("contract.jsonl")
            let hook = agent.hooks.appendingPathComponent("20-contract")
            try Self.recorder(log: log.path).write(to: hook, atomically: true, encoding: .utf8)
            chmod(hook.path, 0o755)
            try await agent.awaitReady()

            try namespaces[1].ip("link", "set", "up0p", "down")
            // Three live runs (startup events match the rule too, with NETPATH_STARTUP=1). The
            // interface's and the path's hooks run concurrently, so order them by argv below.
            let lines = try await agent.awaitLines(in: log, "three live runs of the contract hook", count: 3) {
                $0.contains(#""NETPATH_STARTUP": "0""#)
            }
            let runs = try lines.map { try JSONDecoder().decode(Run.self, from: Data($0.utf8)) }
                .sorted { Self.order($0) < Self.order($1) }
            // Checked before indexing: a trap here would kill the test process and skip every
            // cleanup (the agent process, the namespaces).
            try #require(runs.map { $0.argv } == [["up0", "carrier-down"], ["up0", "down"], ["", "unsatisfied"]])

            for run in runs where run.argv.count == 2 {
                #expect(Set(run.env.keys) == Self.expectedNames, "\(run.env.keys.sorted())")
                #expect(run.env["PATH"] == "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
                #expect(run.env["LANG"] == "C.UTF-8")
                #expect(run.env["NETPATH_RULE"] == "watch")
                #expect(run.env["NETPATH_STARTUP"] == "0")
                #expect(run.cwd == "/")
                let event = try JSONDecoder().decode(Event.self, from: Data(run.stdin.utf8))
                #expect(event.name.rawValue == run.argv[1])
                #expect(run.env["NETPATH_EVENT"] == event.name.rawValue)
                #expect(run.env["NETPATH_SCOPE"] == event.scope.rawValue)
            }
            let down = runs[1]
            #expect(down.env["NETPATH_INTERFACE"] == "up0")
            #expect(down.env["NETPATH_INTERFACE_TYPE"] == "other")
            #expect(down.env["NETPATH_INTERFACE_KIND"] == "veth")
            #expect(down.env["NETPATH_METERED"] == "0")
            #expect(down.env["NETPATH_ADDRESSES"]?.contains("192.0.2.10/24") == true)
            let downEvent = try JSONDecoder().decode(Event.self, from: Data(down.stdin.utf8))
            #expect(downEvent.interfaceState?.carrier == false)
            #expect(downEvent.interfaceState?.defaultRoutes.first?.gateway == "192.0.2.1")

            let unsatisfied = runs[2]
            #expect(unsatisfied.env["NETPATH_POLICY"] == "default")
            #expect(unsatisfied.env["NETPATH_STATUS"] == "unsatisfied")
            #expect(unsatisfied.env["NETPATH_PREVIOUS_INTERFACE"] == "up0")
            #expect(unsatisfied.env["NETPATH_INTERFACE"] == "")
        }
    }

    @Test("a link whose name is not UTF-8 reaches hooks as the kernel's bytes, and JSON as the documented escape")
    func nameThatIsNotUTF8() async throws {
        try await NetworkNamespace.with(["bytes", "peer"]) { namespaces in
            let (ns, peer) = (namespaces[0], namespaces[1])
            // `ip` takes the name as raw bytes; Swift strings cannot hold 0xff, so a shell's printf
            // spells it.
            try Command.check([
                "sh", "-c",
                "ip -n \(ns.name) link add \"$(printf 'up\\377x')\" type veth peer name upp netns \(peer.name)",
            ])
            let agent = try await AgentHarness(
                namespace: ns,
                config: "[[rule]]\nname = \"watch\"\non = [\"carrier-up\"]\nrun = [\"20-bytes\"]\n"
            )
            defer { agent.stop() }
            // The hook writes its argv[1] and $NETPATH_INTERFACE byte for byte, and its stdin.
            let out = agent.directory.appendingPathComponent("bytes")
            let hook = agent.hooks.appendingPathComponent("20-bytes")
            try """
            #!/bin/sh
            printf '%s' "$1" > \(out.path).argv
            printf '%s' "$NETPATH_INTERFACE" > \(out.path).env
            cat > \(out.path).json
            echo done >> \(out.path).done
            """.write(to: hook, atomically: true, encoding: .utf8)
            chmod(hook.path, 0o755)
            try await agent.awaitReady()
            try Command.check(["sh", "-c", "ip -n \(ns.name) link set \"$(printf 'up\\377x')\" up"])
            try peer.ip("link", "set", "upp", "up")
            _ = try await agent.awaitLines(
                in: agent.directory.appendingPathComponent("bytes.done"),
                "the hook's run on carrier-up",
                count: 1
            ) { $0 == "done" }

            let kernel: [UInt8] = [0x75, 0x70, 0xff, 0x78]
            #expect(Array(try Data(contentsOf: URL(fileURLWithPath: out.path + ".argv"))) == kernel)
            #expect(Array(try Data(contentsOf: URL(fileURLWithPath: out.path + ".env"))) == kernel)
            let json = try String(contentsOfFile: out.path + ".json", encoding: .utf8)
            #expect(json.contains(#""interface":"up\\xffx""#), "\(json)")
            let status = try Command.check([
                BuiltProducts.path("netpathctl"), "status", "--json", "--socket", agent.socketPath,
            ])
            #expect(status.contains(#""name" : "up\\xffx""#), "\(status)")
        }
    }
}
