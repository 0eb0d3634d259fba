// SPDX-License-Identifier: Apache-2.0

import Foundation

/// Runs a program to completion and captures its output. Arguments are passed as an array:
/// no shell is involved.
public enum Command {
    public struct Result {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    /// Runs `arguments[0]` (looked up in PATH) with the rest as its arguments.
    @discardableResult
    public static func run(_ arguments: [String], input: Data? = nil) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let inPipe = Pipe()
        process.standardInput = inPipe
        try process.run()
        if let input { inPipe.fileHandleForWriting.write(input) }
        try? inPipe.fileHandleForWriting.close()
        // Read both pipes concurrently so a chatty stderr cannot block the child.
        let errData = LockedData()
        let errThread = Thread { errData.set(err.fileHandleForReading.readDataToEndOfFile()) }
        errThread.start()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while !errData.done { usleep(1000) }
        return Result(
            status: process.terminationStatus,
            stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData.value, as: UTF8.self)
        )
    }

    /// ``run(_:input:)`` on a thread of its own, for long commands (a package build, `make`,
    /// `apt-get download`) in async tests. Called directly, such a command holds one of the
    /// cooperative pool's threads — two on a 2-core machine — for its whole run, and every other
    /// test's bounded waits starve meanwhile.
    public static func runOffPool(_ arguments: [String], input: Data? = nil) async throws -> Result {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Result, any Error>) in
            Thread.detachNewThread {
                continuation.resume(with: Swift.Result { try run(arguments, input: input) })
            }
        }
    }

    /// ``check(_:input:)`` on a thread of its own (see ``runOffPool(_:input:)``).
    @discardableResult
    public static func checkOffPool(_ arguments: [String], input: Data? = nil) async throws -> String {
        let result = try await runOffPool(arguments, input: input)
        guard result.status == 0 else {
            throw TestFailure("`\(arguments.joined(separator: " "))` exited \(result.status): \(result.stderr)")
        }
        return result.stdout
    }

    /// Runs and throws unless the exit status is 0.
    @discardableResult
    public static func check(_ arguments: [String], input: Data? = nil) throws -> String {
        let result = try run(arguments, input: input)
        guard result.status == 0 else {
            throw TestFailure("`\(arguments.joined(separator: " "))` exited \(result.status): \(result.stderr)")
        }
        return result.stdout
    }
}

final class LockedData: @unchecked Sendable {
    // @unchecked: every access goes through the lock.
    private let lock = NSLock()
    private var data = Data()
    private var finished = false

    func set(_ value: Data) {
        lock.withLock {
            data = value
            finished = true
        }
    }

    var done: Bool { lock.withLock { finished } }
    var value: Data { lock.withLock { data } }
}
