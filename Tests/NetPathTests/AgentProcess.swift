import Foundation
import TestSupport

/// A real `netpathd` in a namespace, with its own configuration and control socket, and a fake
/// systemd to say when it is ready: the minimal part of NetPathAgentTests' `AgentHarness` that
/// the library's tests need (copied, since test targets do not depend on each other).
final class AgentProcess: @unchecked Sendable {
    // @unchecked: set up once, then only read; the process handle is thread-safe for signals.
    let directory: URL
    let socketPath: String
    let process: RunningProcess
    private let notify: NotifyListener
    /// The agent's log, for failure messages.
    let log = Recorder<String>()

    /// Starts `netpathd --config FILE --control-socket PATH` in `namespace` with `config` (an
    /// empty hooks directory is added to its `[agent]` table).
    init(namespace: NetworkNamespace, config: String) async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "np-follow-\(UUID().uuidString.prefix(8))"
        )
        let hooks = directory.appendingPathComponent("hooks.d")
        try FileManager.default.createDirectory(at: hooks, withIntermediateDirectories: true)
        chmod(directory.path, 0o755)
        chmod(hooks.path, 0o755)
        socketPath = directory.appendingPathComponent("run/netpathd.sock").path
        let configFile = directory.appendingPathComponent("netpath.toml")
        let body = config.replacingOccurrences(of: "[agent]", with: "[agent]\nhooks_dir = \"\(hooks.path)\"")
        try body.write(to: configFile, atomically: true, encoding: .utf8)
        notify = try await NotifyListener()
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

    /// Stops the agent (SIGTERM, then SIGKILL) if it still runs, and removes its files. Idempotent.
    func stop() {
        process.terminate(grace: 10)
        notify.close()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// A fake systemd: a Unix datagram socket whose messages (`READY=1`, …) a test awaits.
final class NotifyListener: @unchecked Sendable {
    // @unchecked: `fd` is written once in init; the reader thread only reads it, and `close`
    // shuts it down before closing it.
    let path: String
    private let fd: Int32
    let messages = Recorder<String>()

    init() async throws {
        path =
            FileManager.default.temporaryDirectory.appendingPathComponent(
                "np-notify-\(UUID().uuidString.prefix(8)).sock"
            ).path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: errno \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else {
            Glibc.close(fd)
            throw TestFailure("bind \(path): errno \(errno)")
        }
        let reader = fd
        let stream = AsyncStream<String> { continuation in
            // A plain thread doing blocking reads: the cooperative pool must not block on a socket.
            let thread = Thread {
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    let n = recv(reader, &buffer, buffer.count, 0)
                    if n <= 0 { break }
                    // One datagram may carry several KEY=VALUE lines; each is one message.
                    for line in String(decoding: buffer[..<n], as: UTF8.self).split(separator: "\n") {
                        continuation.yield(String(line))
                    }
                }
                continuation.finish()
            }
            thread.start()
        }
        await messages.record(stream)
    }

    private let closed = NSLock()
    private var isClosed = false

    func close() {
        let first = closed.withLock {
            defer { isClosed = true }
            return !isClosed
        }
        guard first else { return }
        shutdown(fd, Int32(SHUT_RDWR))
        Glibc.close(fd)
        unlink(path)
    }
}
