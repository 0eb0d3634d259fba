// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathCore
import TestSupport
import Testing

/// A real `netpathd` process in a namespace with its own config, hooks directory and control
/// socket, and a fake systemd listening: what the agent tests drive.
final class AgentHarness: @unchecked Sendable {
    // @unchecked: set up once, then only read; the process handle is thread-safe for signals.
    let directory: URL
    let hooks: URL
    let configFile: URL
    let socketPath: String
    let hookLog: URL
    let notify: NotifySocket
    let process: RunningProcess
    let stderr = Recorder<String>()

    /// A hook that appends "RULE EVENT INTERFACE STARTUP" per run to `log`.
    static func recordingHook(log: String) -> String {
        """
        #!/bin/sh
        echo "${NETPATH_RULE:--} $2 ${1:--} ${NETPATH_STARTUP:-0}" >> \(log)
        """
    }

    /// Starts the agent in `namespace` with `config` (a `hooks_dir` line is added), and with
    /// `extraHooks` (name: script) in its hooks directory beside `10-record`. `launcher` runs
    /// inside the namespace and must exec its arguments (netpathd's command line) in the end.
    init(
        namespace: NetworkNamespace,
        config: String,
        environment: [String: String] = [:],
        arguments: [String] = [],
        extraHooks: [String: String] = [:],
        launcher: [String] = [],
        socketPath: String? = nil
    ) async throws {
        directory = try ScratchDirectory.make("np-agent")
        hooks = directory.appendingPathComponent("hooks.d")
        try FileManager.default.createDirectory(at: hooks, withIntermediateDirectories: true)
        chmod(directory.path, 0o755)
        chmod(hooks.path, 0o755)
        hookLog = directory.appendingPathComponent("hook.log")
        let hook = hooks.appendingPathComponent("10-record")
        try Self.recordingHook(log: hookLog.path).write(to: hook, atomically: true, encoding: .utf8)
        chmod(hook.path, 0o755)
        for (name, script) in extraHooks {
            let extra = hooks.appendingPathComponent(name)
            try script.write(to: extra, atomically: true, encoding: .utf8)
            chmod(extra.path, 0o755)
        }
        self.socketPath = socketPath ?? directory.appendingPathComponent("run/netpathd.sock").path
        configFile = directory.appendingPathComponent("netpath.toml")
        try Self.config(config, hooks: hooks.path).write(to: configFile, atomically: true, encoding: .utf8)
        notify = try await NotifySocket()
        process = try RunningProcess(
            [
                "ip", "netns", "exec", namespace.name,
            ] + launcher + [
                BuiltProducts.path("netpathd"), "--config", configFile.path, "--control-socket", self.socketPath,
            ]
                + arguments,
            // A crash leaves the Swift runtime's backtrace in the directory, for stop() to report.
            environment: [
                "NOTIFY_SOCKET": notify.path,
                "SWIFT_BACKTRACE": "enable=yes,interactive=no,output-to=\(directory.path)",
            ].merging(environment) { $1 }
        )
        await stderr.record(process.stderrLines)
    }

    static func config(_ body: String, hooks: String) -> String {
        body.contains("[agent]")
            ? body.replacingOccurrences(of: "[agent]", with: "[agent]\nhooks_dir = \"\(hooks)\"")
            : "[agent]\nhooks_dir = \"\(hooks)\"\n" + body
    }

    /// Rewrites the configuration file (for reload tests).
    func rewriteConfig(_ body: String) throws {
        try Self.config(body, hooks: hooks.path).write(to: configFile, atomically: true, encoding: .utf8)
    }

    /// The backtrace the Swift runtime wrote if netpathd crashed (see the environment above).
    private var crashReport: String {
        let logs = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        guard let log = logs.first(where: { $0.hasPrefix("netpathd-") && $0.hasSuffix(".log") }),
            let text = try? String(contentsOfFile: directory.appendingPathComponent(log).path, encoding: .utf8)
        else { return "" }
        return "; its backtrace:\n" + text.prefix(20_000)
    }

    /// Waits for `READY=1`.
    func awaitReady() async throws {
        _ = try await notify.messages.next("READY=1 from netpathd") { $0 == "READY=1" }
    }

    /// The hook log's lines so far.
    func hookRuns() -> [String] {
        ((try? String(contentsOf: hookLog, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// Waits until the hook log has a line satisfying `predicate`; bounded by a deadline, checked
    /// whenever the agent logs (each dispatch and each hook run logs a line).
    func awaitHookRun(
        _ what: String,
        count: Int = 1,
        timeout: Duration = .seconds(10),
        where predicate: @escaping @Sendable (String) -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        while hookRuns().filter(predicate).count < count {
            guard ContinuousClock.now < deadline else {
                throw TestFailure("timed out waiting for a hook run: \(what); runs so far: \(hookRuns())")
            }
            _ = try? await stderr.next("agent log activity", timeout: .milliseconds(200))
        }
    }

    /// Waits until `file` has `count` lines satisfying `predicate` (same wake-ups as above).
    func awaitLines(
        in file: URL,
        _ what: String,
        count: Int,
        timeout: Duration = .seconds(10),
        where predicate: @escaping @Sendable (String) -> Bool
    ) async throws -> [String] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let lines = ((try? String(contentsOf: file, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
                .filter(predicate)
            if lines.count >= count { return lines }
            guard ContinuousClock.now < deadline else {
                throw TestFailure("timed out waiting for \(what); have \(lines.count) of \(count)")
            }
            _ = try? await stderr.next("agent log activity", timeout: .milliseconds(200))
        }
    }

    /// Stops the agent (SIGTERM, then SIGKILL after 10 s) and checks how it ended: a clean stop
    /// is exit status 0, so a crash, a hang past the grace or an error exit fails the test.
    func stop(expecting expected: RunningProcess.Termination = .exited(0)) {
        let ending = process.terminate(grace: 10)
        #expect(ending == expected, "netpathd ended with \(ending), expected \(expected)\(crashReport)")
        notify.close()
        try? FileManager.default.removeItem(at: directory)
    }
}
