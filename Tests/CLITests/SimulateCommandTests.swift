// SPDX-License-Identifier: Apache-2.0

import Foundation
import TestSupport
import Testing

/// `netpathctl simulate` on the shipped traces, compared with the checked-in expected output.
struct SimulateCommandTests {
    static let traces = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Examples/traces").standardizedFileURL

    static func simulate(trace: String, config: String) throws -> Command.Result {
        try Command.run([
            BuiltProducts.path("netpathctl"), "simulate",
            "--config", traces.appendingPathComponent(config).path,
            "--trace", traces.appendingPathComponent(trace).path,
        ])
    }

    @Test(
        "simulate prints the expected dispatch lines",
        arguments: [
            ("wired-unplugged", "uplinks-rules"), ("wired-unplugged", "uplinks-settle"),
            ("flapping-link", "uplinks-rules"), ("flapping-link", "uplinks-settle"),
        ]
    )
    func matchesExpectedOutput(trace: String, config: String) throws {
        let result = try Self.simulate(trace: "\(trace).jsonl", config: "\(config).toml")
        #expect(result.status == 0, "\(result.stderr)")
        let expected = try String(
            contentsOf: Self.traces.appendingPathComponent("\(trace).\(config).expected"),
            encoding: .utf8
        )
        #expect(result.stdout == expected)
    }

    @Test("unplugging wired moves the path to Wi-Fi, not the metered modem, and restarts the VPN")
    func wiredUnpluggedPicksWifi() throws {
        let lines = try Self.simulate(trace: "wired-unplugged.jsonl", config: "uplinks-rules.toml").stdout.split(
            separator: "\n"
        )
        let change = try #require(lines.first { $0.contains("path changed") })
        #expect(change.contains("via wlan0 (wifi), was eth0"))
        #expect(change.contains("rule \"restart-vpn-on-path-change\": hooks 50-vpn-restart; timeout 10s"))
    }

    @Test("settle collapses the flapping link to its net change; with 0 every flap goes through")
    func settleCollapsesFlapping() throws {
        let immediate = try Self.simulate(trace: "flapping-link.jsonl", config: "uplinks-rules.toml").stdout
        let settled = try Self.simulate(trace: "flapping-link.jsonl", config: "uplinks-settle.toml").stdout
        func count(_ text: String, _ needle: String) -> Int { text.components(separatedBy: needle).count - 1 }
        #expect(count(immediate, "carrier-down eth0") == 3)
        #expect(count(immediate, "carrier-up eth0") == 3)
        #expect(count(settled, "carrier-down") == 0)
        #expect(count(settled, "path changed") == 0)
        // The flaps net out to nothing; what remains is the MTU change made after them.
        #expect(count(settled, "interface changed eth0 (wired) [mtu]") == 1)
    }

    @Test(
        "a malformed trace gives a line-numbered error and exit status 1",
        arguments: [
            (
                "{\"netpath_trace\":1}\n{\"time\":\"2026-01-01T00:00:00Z\",\"state\":{\"interfaces\":[]}}\n{oops\n", 3,
                "not valid JSON"
            ),
            (
                "{\"netpath_trace\":1}\n{\"time\":\"yesterday\",\"state\":{\"interfaces\":[]}}\n", 2,
                "not an RFC 3339 time"
            ),
            (
                "{\"netpath_trace\":1}\n{\"time\":\"2026-01-01T00:00:00Z\",\"state\":{\"interfaces\":[{\"name\":\"x\"}]}}\n",
                2, "interfaces[0].index: missing"
            ),
            ("{\"netpath_trace\":7}\n", 1, "trace version 7 is not supported"),
            ("# just a comment\n{\"time\":\"2026-01-01T00:00:00Z\"}\n", 2, "expected the header"),
            ("", 1, "empty trace"),
        ]
    )
    func malformedTrace(text: String, line: Int, message: String) throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("np-bad-\(UUID().uuidString).jsonl")
        try text.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try Command.run([
            BuiltProducts.path("netpathctl"), "simulate", "--trace", file.path, "--config",
            Self.traces.appendingPathComponent("uplinks.toml").path,
        ])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("\(file.path):\(line): error: "), "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }
}

/// `netpathctl simulate` on traces that are damaged, or merely written differently.
struct SimulateDamagedTraceTests {
    /// Runs simulate on `bytes` written to a temporary file; returns the result and the file's path.
    static func simulate(_ bytes: [UInt8], config: String = "uplinks-rules.toml") throws -> (Command.Result, String) {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("np-trace-\(UUID().uuidString).jsonl")
        try Data(bytes).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try Command.run([
            BuiltProducts.path("netpathctl"), "simulate", "--trace", file.path, "--config",
            SimulateCommandTests.traces.appendingPathComponent(config).path,
        ])
        return (result, file.path)
    }

    static func shipped(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: SimulateCommandTests.traces.appendingPathComponent(name)))
    }

    static func expected(_ name: String) throws -> String {
        try String(contentsOf: SimulateCommandTests.traces.appendingPathComponent(name), encoding: .utf8)
    }

    @Test("a CRLF trace replays exactly like its LF original")
    func crlfTrace() throws {
        let lf = try Self.shipped("wired-unplugged.jsonl")
        let crlf = lf.flatMap { $0 == UInt8(ascii: "\n") ? [UInt8(ascii: "\r"), $0] : [$0] }
        let (result, _) = try Self.simulate(crlf)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == (try Self.expected("wired-unplugged.uplinks-rules.expected")))
    }

    @Test("a trace that is not UTF-8 is an error at its line and column, not a CocoaError")
    func invalidUTF8() throws {
        var bytes = try Self.shipped("wired-unplugged.jsonl")
        let lineStarts = [0] + bytes.indices.filter { bytes[$0] == UInt8(ascii: "\n") }.map { $0 + 1 }
        // The third line's tenth byte (ASCII JSON punctuation or key) becomes 0xFF.
        bytes[lineStarts[2] + 9] = 0xFF
        let (result, path) = try Self.simulate(bytes)
        #expect(result.status == 1)
        #expect(
            result.stderr
                == "\(path):3:10: error: byte 0xFF (offset \(lineStarts[2] + 9)) is not valid UTF-8; the file must be UTF-8 text\n"
        )
    }

    @Test("a trace cut short in its last record replays the records before it, warns, and exits 0")
    func truncatedTrace() throws {
        let whole = try Self.shipped("flapping-link.jsonl")
        let lines = whole.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        #expect(lines.last?.isEmpty == true, "the shipped trace ends in a newline")
        let complete = lines.dropLast(2).flatMap { Array($0) + [UInt8(ascii: "\n")] }
        let last = try #require(lines.dropLast().last)
        // As a full disk leaves it: the last record's first half, no newline.
        let cut = complete + last.prefix(last.count / 2)

        let (reference, _) = try Self.simulate(complete)
        #expect(reference.status == 0, "\(reference.stderr)")
        let (result, path) = try Self.simulate(cut)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == reference.stdout)
        #expect(!result.stdout.isEmpty)
        let records = lines.dropLast(2).filter { !$0.isEmpty && $0.first != UInt8(ascii: "#") }.count - 1
        #expect(
            result.stderr
                == "\(path):\(lines.count - 1): warning: the last line is cut short (incomplete JSON, and no newline at its end), as a recording stopped by a full disk or a crash leaves it; ignored it and kept the \(records) complete records before it\n"
        )
    }

    @Test("a bad value with a newline in it gives exactly one line of error")
    func oneLineError() throws {
        let text =
            "{\"netpath_trace\":1}\n{\"time\":\"2026-01-01T00:00:00Z\",\"state\":{\"interfaces\":[{\"index\":1,\"name\":\"lo\",\"addresses\":[{\"address\":\"10.0.0.1\\nrm -rf\",\"prefix_len\":8}]}]}}\n"
        let (result, path) = try Self.simulate(Array(text.utf8))
        #expect(result.status == 1)
        #expect(
            result.stderr
                == #"\#(path):2: error: state.interfaces[0].addresses[0].address: not an IP address: "10.0.0.1\nrm -rf""#
                + "\n"
        )
    }

    @Test(
        "values no kernel reports are errors naming the line and the key",
        arguments: [
            (#"{"index":1,"name":"lo","mtu":70000000000}"#, "state.interfaces[0].mtu: expected an MTU"),
            (#"{"index":-2,"name":"lo"}"#, "state.interfaces[0].index: expected an interface index"),
            (
                #"{"index":1,"name":"lo","addresses":[{"address":"10.0.0.1","prefix_len":40}]}"#,
                "prefix_len: expected an IPv4 prefix length"
            ),
        ]
    )
    func impossibleValues(_ interface: String, _ message: String) throws {
        let text =
            "{\"netpath_trace\":1}\n{\"time\":\"2026-01-01T00:00:00Z\",\"state\":{\"interfaces\":[\(interface)]}}\n"
        let (result, path) = try Self.simulate(Array(text.utf8))
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("\(path):2: error: "), "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }

    @Test("a duplicate interface name in one record is an error at its line")
    func duplicateName() throws {
        let record =
            #"{"time":"2026-01-01T00:00:00Z","state":{"interfaces":[{"index":2,"name":"eth0"},{"index":3,"name":"eth0"}]}}"#
        let (result, path) = try Self.simulate(Array("{\"netpath_trace\":1}\n\(record)\n".utf8))
        #expect(result.status == 1)
        #expect(
            result.stderr
                == "\(path):2: error: state.interfaces[1].name: name \"eth0\" is also interfaces[0]'s; each interface needs its own\n"
        )
    }
}

/// `simulate --run-hooks`: the same replay, with the real hooks run by the agent's dispatcher.
struct SimulateRunHooksTests {
    /// `simulate --run-hooks` of the wired-unplugged trace with the uplinks rules, the hooks in `dir`.
    static func runHooks(in dir: URL) throws -> Command.Result {
        try Command.run([
            BuiltProducts.path("netpathctl"), "simulate", "--run-hooks", "--hooks-dir", dir.path,
            "--config", SimulateCommandTests.traces.appendingPathComponent("uplinks-rules.toml").path,
            "--trace", SimulateCommandTests.traces.appendingPathComponent("wired-unplugged.jsonl").path,
        ])
    }

    @Test("--run-hooks runs the hooks the rules name, with the event's argv and rule")
    func runsTheNamedHooks() throws {
        let dir = try ScratchDirectory.make("np-simhooks")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        chmod(dir.path, 0o755)
        let log = dir.appendingPathComponent("ran.log").path
        for name in ["20-modem-off", "50-vpn-restart", "60-backups-pause"] {
            let hook = dir.appendingPathComponent(name)
            try "#!/bin/sh\necho \"\(name) $NETPATH_RULE $2 ${1:--}\" >> \(log)\n".write(
                to: hook,
                atomically: true,
                encoding: .utf8
            )
            chmod(hook.path, 0o755)
        }
        let result = try Self.runHooks(in: dir)
        #expect(result.status == 0, "\(result.stderr)")
        // stdout is the same dispatch listing as the dry run.
        let expected = try String(
            contentsOf: SimulateCommandTests.traces.appendingPathComponent("wired-unplugged.uplinks-rules.expected"),
            encoding: .utf8
        )
        #expect(result.stdout == expected)
        let ran = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(
            ran == [
                "20-modem-off stop-modem-when-wired-returns up eth0",
                "50-vpn-restart restart-vpn-on-path-change changed wlan0",
            ]
        )
        #expect(result.stderr.contains("ran 2 hooks, 0 failed or timed out"))
    }

    @Test(
        "--run-hooks started with descriptors 0, 1 and 2 closed: netpathctl opens them on /dev/null, and each hook gets its event on stdin"
    )
    func closedStandardDescriptors() async throws {
        let dir = try ScratchDirectory.make("np-simfds")
        defer { try? FileManager.default.removeItem(at: dir) }
        chmod(dir.path, 0o755)
        let log = dir.appendingPathComponent(".ran").path
        // Each run: its event's name from stdin, and where netpathctl's (its parent's) 1 leads.
        let hook = dir.appendingPathComponent("20-modem-off")
        try """
        #!/bin/sh
        event=$(sed -n 's/.*"event":"\\([^"]*\\)".*/\\1/p')
        echo "$2 $event $(readlink /proc/$PPID/fd/1)" >> \(log)
        """.write(to: hook, atomically: true, encoding: .utf8)
        chmod(hook.path, 0o755)
        let result = try Command.run([
            "/bin/sh", "-c", "exec \"$@\" <&- >&- 2>&-", "sh",
            BuiltProducts.path("netpathctl"), "simulate", "--run-hooks", "--hooks-dir", dir.path,
            "--config", SimulateCommandTests.traces.appendingPathComponent("uplinks-rules.toml").path,
            "--trace", SimulateCommandTests.traces.appendingPathComponent("wired-unplugged.jsonl").path,
        ])
        #expect(result.status == 0)
        let ran = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(ran == ["up up /dev/null"])
    }

    @Test("--run-hooks runs the [[hook_dir]] directories too, each with its dialect")
    func runsDialectDirectories() throws {
        let dir = try ScratchDirectory.make("np-simdialects")
        defer { try? FileManager.default.removeItem(at: dir) }
        chmod(dir.path, 0o755)
        let log = dir.appendingPathComponent("ran.log").path
        let scripts = [
            ("nm/10-record", #"echo "nm $1 $2" >> \#(log)"#),
            ("nd/routable.d/10-record", #"echo "nd $STATE $IFACE $#" >> \#(log)"#),
            ("nd/no-carrier.d/10-record", #"echo "nd $STATE $IFACE $#" >> \#(log)"#),
        ]
        for directory in ["nm", "nd", "nd/routable.d", "nd/no-carrier.d", "hooks.d"] {
            let url = dir.appendingPathComponent(directory)
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
            chmod(url.path, 0o755)
        }
        for (name, body) in scripts {
            let file = dir.appendingPathComponent(name)
            try "#!/bin/sh\n\(body)\n".write(to: file, atomically: true, encoding: .utf8)
            chmod(file.path, 0o755)
        }
        let config = dir.appendingPathComponent("netpath.toml")
        try String(contentsOf: Self.tracesFile("uplinks.toml"), encoding: .utf8).appending(
            """

            [[hook_dir]]
            path = "\(dir.appendingPathComponent("nm").path)"
            dialect = "networkmanager"
            [[hook_dir]]
            path = "\(dir.appendingPathComponent("nd").path)"
            dialect = "networkd"
            """
        ).write(to: config, atomically: true, encoding: .utf8)
        let result = try Command.run([
            BuiltProducts.path("netpathctl"), "simulate", "--run-hooks",
            "--hooks-dir", dir.appendingPathComponent("hooks.d").path, "--config", config.path,
            "--trace", Self.tracesFile("wired-unplugged.jsonl").path,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let ran = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map(String.init)
        // eth0 starts usable (up; routable), then loses its carrier (down; no-carrier).
        #expect(ran.contains("nm eth0 up"), "\(ran)")
        #expect(ran.contains("nm eth0 down"), "\(ran)")
        #expect(ran.contains("nd routable eth0 0"), "\(ran)")
        #expect(ran.contains("nd no-carrier eth0 0"), "\(ran)")
        #expect(
            ran.firstIndex(of: "nd routable eth0 0")! < ran.firstIndex(of: "nd no-carrier eth0 0")!,
            "\(ran)"
        )
    }

    static func tracesFile(_ name: String) -> URL { SimulateCommandTests.traces.appendingPathComponent(name) }
}
