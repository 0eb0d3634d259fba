// SPDX-License-Identifier: Apache-2.0

import Foundation
import TestSupport
import Testing

/// A real `netpathd` in a namespace, with its own configuration and control socket, and a fake
/// systemd (TestSupport's `NotifySocket`) to say when it is ready: the minimal part of
/// NetPathAgentTests' `AgentHarness` that the library's tests need.
final class AgentProcess: @unchecked Sendable {
    // @unchecked: set up once, then only read; the process handle is thread-safe for signals.
    let directory: URL
    let socketPath: String
    let process: RunningProcess
    private let notify: NotifySocket
    /// The agent's log, for failure messages.
    let log = Recorder<String>()

    /// Starts `netpathd --config FILE --control-socket PATH` in `namespace` with `config` (an
    /// empty hooks directory is added to its `[agent]` table).
    init(namespace: NetworkNamespace, config: String) async throws {
        directory = try ScratchDirectory.make("np-follow")
        let hooks = directory.appendingPathComponent("hooks.d")
        try FileManager.default.createDirectory(at: hooks, withIntermediateDirectories: true)
        chmod(directory.path, 0o755)
        chmod(hooks.path, 0o755)
        socketPath = directory.appendingPathComponent("run/netpathd.sock").path
        let configFile = directory.appendingPathComponent("netpath.toml")
        let body = config.replacingOccurrences(of: "[agent]", with: "[agent]\nhooks_dir = \"\(hooks.path)\"")
        try body.write(to: configFile, atomically: true, encoding: .utf8)
        notify = try await NotifySocket()
        do {
            process = try RunningProcess(
                [
                    "ip", "netns", "exec", namespace.name, BuiltProducts.path("netpathd"),
                    "--config", configFile.path, "--control-socket", socketPath,
                ],
                environment: ["NOTIFY_SOCKET": notify.path]
            )
        } catch {
            notify.close()
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        await log.record(process.stderrLines)
    }

    /// Waits for `READY=1`: the control socket is serving by then.
    func awaitReady() async throws {
        do {
            _ = try await notify.messages.next("READY=1 from netpathd") { $0 == "READY=1" }
        } catch {
            throw TestFailure("\(error); netpathd's log: \(await log.all.suffix(20).joined(separator: "\n"))")
        }
    }

    /// Stops the agent (SIGTERM, then SIGKILL after 10 s) if it still runs, checks how it ended (a
    /// clean stop is exit status 0: a crash, a hang past the grace or an error exit fails the
    /// test), and removes its files. Idempotent.
    func stop(expecting expected: RunningProcess.Termination = .exited(0)) {
        let ending = process.terminate(grace: 10)
        #expect(ending == expected, "netpathd ended with \(ending), expected \(expected)")
        notify.close()
        try? FileManager.default.removeItem(at: directory)
    }
}
