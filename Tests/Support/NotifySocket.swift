// SPDX-License-Identifier: Apache-2.0

import Foundation

/// A fake systemd: a Unix datagram socket whose messages (`READY=1`, …) a test awaits.
public final class NotifySocket: @unchecked Sendable {
    // @unchecked: `fd` is written once in init; the reader thread only reads it.
    public let path: String
    private let fd: Int32
    public let messages = Recorder<String>()
    /// The same messages with their arrival time, for timing (the watchdog interval).
    public let arrivals = Recorder<Arrival>()

    public struct Arrival: Sendable {
        public var text: String
        public var time: ContinuousClock.Instant
    }

    public init() async throws {
        path =
            FileManager.default.temporaryDirectory.appendingPathComponent(
                "np-notify-\(UUID().uuidString.prefix(8)).sock"
            ).path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: \(errno)") }
        let bound = withUnixSocketAddress(path) { bind(fd, $0, $1) }
        guard bound == 0 else { throw TestFailure("bind \(path): \(errno)") }
        let reader = fd
        let (timed, timedContinuation) = AsyncStream.makeStream(of: Arrival.self)
        let stream = AsyncStream<String> { continuation in
            let thread = Thread {
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    let n = recv(reader, &buffer, buffer.count, 0)
                    if n <= 0 { break }
                    // One datagram may carry several KEY=VALUE lines; each is one message.
                    for line in String(decoding: buffer[..<n], as: UTF8.self).split(separator: "\n") {
                        continuation.yield(String(line))
                        timedContinuation.yield(Arrival(text: String(line), time: .now))
                    }
                }
                continuation.finish()
                timedContinuation.finish()
            }
            thread.start()
        }
        await messages.record(stream)
        await arrivals.record(timed)
    }

    private let closed = NSLock()
    private var isClosed = false

    /// Closes the socket and removes its file; safe to call more than once.
    public func close() {
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
