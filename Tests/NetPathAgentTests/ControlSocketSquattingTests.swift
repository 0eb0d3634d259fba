// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathControl
import TestSupport
import Testing

/// Nobody but root may stand where the control socket is: the agent refuses a directory others
/// can write, and `netpathctl` refuses a socket that another user's process serves.
@Suite(.enabled(if: Privileges.namespaceTestsEnabled, "needs root for namespaces and other users"))
struct ControlSocketSquattingTests {
    /// A config whose hooks directory is an empty, trusted directory inside `base`.
    private static func config(in base: URL) throws -> URL {
        let hooks = base.appendingPathComponent("hooks.d")
        try FileManager.default.createDirectory(at: hooks, withIntermediateDirectories: false)
        chmod(hooks.path, 0o755)
        let file = base.appendingPathComponent("netpath.toml")
        try "[agent]\nhooks_dir = \"\(hooks.path)\"\nstartup_events = false\n".write(
            to: file,
            atomically: false,
            encoding: .utf8
        )
        chmod(file.path, 0o644)
        return file
    }

    private static func directory(_ path: URL, mode: mode_t, owner: uid_t) throws {
        try FileManager.default.createDirectory(at: path, withIntermediateDirectories: false)
        guard chmod(path.path, mode) == 0, chown(path.path, owner, owner) == 0 else {
            throw TestFailure("chmod/chown \(path.path)")
        }
    }

    enum UnsafeDirectory: String, CaseIterable, CustomTestStringConvertible {
        case stickyWorldWritable, groupWritable, ownedByAnotherUser
        var testDescription: String { rawValue }
        var mode: mode_t {
            switch self {
            case .stickyWorldWritable: return 0o1777
            case .groupWritable: return 0o775
            case .ownedByAnotherUser: return 0o755
            }
        }
        var owner: uid_t { self == .ownedByAnotherUser ? 65534 : 0 }
        var complaint: String {
            self == .ownedByAnotherUser ? "is owned by uid 65534, not by root" : "is writable by group or others"
        }
    }

    @Test("netpathd refuses a control socket in a directory others could write", arguments: UnsafeDirectory.allCases)
    func agentRefusesAnOpenDirectory(_ unsafe: UnsafeDirectory) async throws {
        let base = try ScratchDirectory.make("np-squat")
        defer { try? FileManager.default.removeItem(at: base) }
        let run = base.appendingPathComponent("run")
        try Self.directory(run, mode: unsafe.mode, owner: unsafe.owner)
        try await NetworkNamespace.with("squat") { namespace in
            let result = try Command.run([
                "timeout", "30", "ip", "netns", "exec", namespace.name, BuiltProducts.path("netpathd"),
                "--config", try Self.config(in: base).path, "--control-socket", run.appendingPathComponent("sock").path,
            ])
            #expect(result.status != 0 && result.status != 124, "netpathd must exit at once: \(result.stderr)")
            #expect(result.stderr.contains("\(run.path) \(unsafe.complaint)"), "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: run.appendingPathComponent("sock").path))
        }
    }

    @Test("netpathctl and the library refuse a socket served by another user")
    func clientRefusesAnImpostor() async throws {
        let base = try ScratchDirectory.make("np-impostor")
        defer { try? FileManager.default.removeItem(at: base) }
        // The impostor: another user's process listening where root expects netpathd. Here it is
        // netpathd itself, run as nobody in a directory nobody owns: a real server that answers.
        let run = base.appendingPathComponent("run")
        try Self.directory(run, mode: 0o755, owner: 65534)
        let socket = run.appendingPathComponent("netpathd.sock").path
        let notify = try await NotifySocket()
        defer { notify.close() }
        chmod(notify.path, 0o666)
        try await NetworkNamespace.with("impostor") { namespace in
            let impostor = try RunningProcess(
                [
                    "ip", "netns", "exec", namespace.name, "setpriv", "--reuid=65534", "--regid=65534",
                    "--clear-groups", BuiltProducts.path("netpathd"), "--config", try Self.config(in: base).path,
                    "--control-socket", socket,
                ],
                environment: ["NOTIFY_SOCKET": notify.path]
            )
            defer { impostor.terminate() }
            _ = try await notify.messages.next("READY=1 from the impostor") { $0 == "READY=1" }

            let result = try Command.run([BuiltProducts.path("netpathctl"), "status", "--socket", socket])
            #expect(result.status != 0)
            #expect(result.stdout.isEmpty, "nothing the impostor says is printed: \(result.stdout)")
            #expect(result.stderr.contains("served by uid 65534, not by root"), "\(result.stderr)")
            #expect {
                try ControlClient(path: socket)
            } throws: { error in
                guard case ControlClient.Failure.untrustedAgent(_, let uid) = error else { return false }
                return uid == 65534
            }
            // The impostor's own user may talk to it: it trusts itself.
            let own = try Command.run([
                "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", BuiltProducts.path("netpathctl"),
                "status", "--socket", socket,
            ])
            #expect(own.status == 0, "\(own.stderr)")
        }
    }
}
