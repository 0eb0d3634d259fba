// SPDX-License-Identifier: Apache-2.0

import Foundation

/// A child process whose stdout lines (and stderr lines) arrive as async sequences, and which is
/// always terminated: call ``terminate()`` in a `defer`.
public final class RunningProcess: @unchecked Sendable {
    // @unchecked: `process` is only started and stopped; Foundation's Process is thread-safe for that.
    private let process = Process()
    /// Lines written to stdout, without the newline.
    public let stdoutLines: AsyncStream<String>
    /// Lines written to stderr, without the newline.
    public let stderrLines: AsyncStream<String>

    /// Starts `arguments` (looked up in PATH unless absolute), with extra environment variables.
    public init(_ arguments: [String], environment: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        stdoutLines = Self.lines(of: out.fileHandleForReading)
        stderrLines = Self.lines(of: err.fileHandleForReading)
        try process.run()
    }

    public var processIdentifier: Int32 { process.processIdentifier }
    public var isRunning: Bool { process.isRunning }

    /// Sends `signal` to the process.
    public func send(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// How a process ended.
    public enum Termination: Equatable, Sendable, CustomStringConvertible {
        case exited(Int32)
        case signaled(Int32)

        public var description: String {
            switch self {
            case .exited(let status): return "exit status \(status)"
            case .signaled(let signal): return "signal \(signal)"
            }
        }
    }

    /// SIGTERM, then SIGKILL if it has not exited within `grace`; waits for it and says how it
    /// ended (also when it had ended before: a crash shows here).
    @discardableResult
    public func terminate(grace: TimeInterval = 3) -> Termination {
        if process.isRunning {
            process.terminate()
            let deadline = Date().addingTimeInterval(grace)
            while process.isRunning && Date() < deadline { usleep(10_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        process.waitUntilExit()
        return process.terminationReason == .uncaughtSignal
            ? .signaled(process.terminationStatus) : .exited(process.terminationStatus)
    }

    /// Waits for exit; returns the status.
    public func wait() -> Int32 {
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Waits for exit at most `timeout`: the status, or `nil` when the process is still running
    /// then (it is left running; ``terminate(grace:)`` ends it).
    public func exitStatus(within timeout: Duration) async -> Int32? {
        let once = OnceBox<Int32?>()
        return await withCheckedContinuation { continuation in
            once.set(continuation)
            // A plain thread blocks in waitUntilExit, off the cooperative pool.
            Thread { [process] in
                process.waitUntilExit()
                once.resume(process.terminationStatus)
            }.start()
            Task {
                try? await Task.sleep(for: timeout)
                once.resume(nil)
            }
        }
    }

    private static func lines(of handle: FileHandle) -> AsyncStream<String> {
        AsyncStream { continuation in
            // A plain thread doing blocking reads: the cooperative pool must not block on a pipe.
            let thread = Thread {
                var buffer = Data()
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty { break }
                    buffer.append(chunk)
                    while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                        continuation.yield(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
                        buffer.removeSubrange(buffer.startIndex...newline)
                    }
                }
                if !buffer.isEmpty { continuation.yield(String(decoding: buffer, as: UTF8.self)) }
                continuation.finish()
            }
            thread.start()
        }
    }
}

/// Where the package's built executables are: next to the test bundle.
public enum BuiltProducts {
    public static var directory: URL {
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        // .build/<triple>/debug/netpathPackageTests.xctest → .build/<triple>/debug
        return exe.deletingLastPathComponent()
    }

    public static func path(_ name: String) -> String {
        directory.appendingPathComponent(name).path
    }
}
