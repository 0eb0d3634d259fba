// SPDX-License-Identifier: Apache-2.0

import Foundation
import TestSupport
import Testing

/// Which agent `status`, `monitor`, `explain` and `hooks` ask, and the flags that only make sense
/// without one: each flag is obeyed or refused, never ignored.
struct SourceOptionsTests {
    /// A configuration file whose agent listens at `socket`; removed by the caller.
    static func config(socket: String, extra: String = "") throws -> URL {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("np-source-\(UUID().uuidString).toml")
        try "[agent]\ncontrol_socket = \"\(socket)\"\n\(extra)".write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    static func netpathctl(_ arguments: [String]) throws -> Command.Result {
        try Command.run([BuiltProducts.path("netpathctl")] + arguments)
    }

    @Test(
        "without --local, --config FILE decides which agent socket is asked",
        arguments: ["status", "monitor", "explain", "hooks"]
    )
    func configChoosesTheSocket(_ command: String) throws {
        // No agent listens there: the error names the socket that was tried.
        let socket = "/nonexistent-np/\(command)-agent.sock"
        let file = try Self.config(socket: socket)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try Self.netpathctl([command, "--config", file.path])
        #expect(result.status != 0)
        #expect(result.stderr.contains("no netpathd is answering on \(socket) "), "\(result.stderr)")
    }

    @Test("an explicit --socket wins over --config's control_socket", arguments: ["status", "monitor"])
    func socketWins(_ command: String) throws {
        let file = try Self.config(socket: "/nonexistent-np/configured.sock")
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try Self.netpathctl([command, "--config", file.path, "--socket", "/nonexistent-np/explicit.sock"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("on /nonexistent-np/explicit.sock "), "\(result.stderr)")
        #expect(!result.stderr.contains("configured.sock"), "\(result.stderr)")
    }

    @Test("--config naming a broken or missing file says so, rather than asking some other agent")
    func brokenConfig() throws {
        let file = try Self.config(socket: "/nonexistent-np/agent.sock", extra: "settle = \"fast\"\n")
        defer { try? FileManager.default.removeItem(at: file) }
        let broken = try Self.netpathctl(["status", "--config", file.path])
        #expect(broken.status == 1)
        #expect(broken.stderr.hasPrefix("\(file.path):3:10: error: settle: invalid duration"), "\(broken.stderr)")
        #expect(!broken.stderr.contains("netpathd is answering"), "\(broken.stderr)")

        let missing = try Self.netpathctl(["explain", "--config", "/nonexistent-np/netpath.toml"])
        #expect(missing.status == 1)
        #expect(missing.stderr == "/nonexistent-np/netpath.toml: error: configuration file not found\n")
    }

    @Test("monitor --record without --local is refused before anything runs, saying what to do instead")
    func recordNeedsLocal() throws {
        let trace = FileManager.default.temporaryDirectory.appendingPathComponent("np-trace-\(UUID().uuidString)")
        let result = try Self.netpathctl(["monitor", "--record", trace.path, "--socket", "/nonexistent-np/agent.sock"])
        #expect(result.status == 64, "a usage error: \(result.stderr)")
        #expect(result.stderr.contains("--record needs --local"), "\(result.stderr)")
        #expect(result.stderr.contains("netpathd with --record FILE"), "\(result.stderr)")
        #expect(!result.stderr.contains("no netpathd is answering"), "not even tried: \(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: trace.path))
    }

    @Test(
        "--sysfs-root without --local, and --socket with --local, are refused",
        arguments: [
            ["status", "--sysfs-root", "/tmp"], ["explain", "--local", "--socket", "/run/x.sock"],
        ]
    )
    func flagsForTheOtherSource(_ arguments: [String]) throws {
        let result = try Self.netpathctl(arguments)
        #expect(result.status == 64, "a usage error: \(result.stderr)")
        #expect(
            result.stderr.contains(
                arguments.contains("--local") ? "--socket and --local" : "--sysfs-root applies only with --local"
            ),
            "\(result.stderr)"
        )
    }
}
