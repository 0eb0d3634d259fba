// SPDX-License-Identifier: Apache-2.0

import Dispatch
import Glibc
import Logging
import NetPathCore
import NetPathLinux
import SystemPackage

/// Serves `GET /metrics` over HTTP/1.1 on a TCP address, one short connection at a time.
///
/// Deliberately minimal (no keep-alive, 8 KiB request limit): it is scraped every few seconds by
/// Prometheus, and a full HTTP stack would double the agent's dependencies. The text comes from
/// the swift-prometheus registry.
///
/// No scraper can hold it: the request must arrive within ``requestTimeout`` and the response be
/// taken within ``responseTimeout``, after which the connection is closed; every wait also ends
/// at once when ``stop()`` is called, so a scraper that stopped reading delays neither the next
/// scrape for long nor the agent's shutdown at all.
final class MetricsServer: @unchecked Sendable {
    // @unchecked: `listener` is set in start() before the thread starts and only closed after
    // it ended; the waker is the only way other threads reach the server thread.

    let address: String
    /// How long a scraper may take to send its request.
    let requestTimeout: Duration
    /// How long a scraper may take to read the whole response; Prometheus's default scrape
    /// timeout is 10 s, so a scraper still reading after that has given up anyway.
    let responseTimeout: Duration
    /// How long ``stop()`` waits for the server thread. Every wait of that thread ends when it is
    /// woken, so this bounds only the unforeseen (the metrics text taking that long to render).
    static let stopTimeout: Duration = .seconds(5)

    private let text: @Sendable () -> String
    private let logger: Logger
    private var listener: Int32 = -1
    private var started = false
    private let waker = WakePipe()
    private let done = DispatchSemaphore(value: 0)

    /// - Parameter address: `HOST:PORT` (IPv6 as `[::1]:9479`), the host an IP address; port 0
    ///   picks a free port (``port`` says which).
    init(
        address: String,
        requestTimeout: Duration = .seconds(2),
        responseTimeout: Duration = .seconds(10),
        logger: Logger,
        text: @escaping @Sendable () -> String
    ) {
        self.address = address
        self.requestTimeout = requestTimeout
        self.responseTimeout = responseTimeout
        self.logger = logger
        self.text = text
    }

    func start() throws(Agent.ListenerError) {
        guard let colon = address.lastIndex(of: ":"), let port = UInt16(address[address.index(after: colon)...]) else {
            throw .notHostAndPort(address: address)
        }
        var host = String(address[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        // Numeric only, as the configuration's validation requires (metricsHostProblem): a name
        // passed there would fail check-config rather than here.
        hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE
        var info: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host.isEmpty ? nil : host, String(port), &hints, &info) == 0, let first = info else {
            throw .notNumericAddress(address: address)
        }
        defer { freeaddrinfo(info) }
        let fd = socket(first.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .failed("socket") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        guard bind(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0, listen(fd, 16) == 0 else {
            let error = Agent.ListenerError.failed("cannot listen on \(address)")
            close(fd)
            throw error
        }
        // Non-blocking: a connection reset between poll and accept must not block the thread.
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        listener = fd
        guard
            OSThread.detach({ [self] in
                serve()
                done.signal()
            })
        else {
            close(fd)
            listener = -1
            throw .threadNotStarted(name: "metrics")
        }
        started = true
    }

    /// The port listened on, or 0 before ``start()``.
    var port: UInt16 {
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        guard listener >= 0, named == 0 else { return 0 }
        // sin_port and sin6_port sit at the same offset, in network byte order.
        return withUnsafeBytes(of: &address) { UInt16(bigEndian: $0.load(fromByteOffset: 2, as: UInt16.self)) }
    }

    /// Stops serving: the connection in progress, if any, is closed whatever its scraper does.
    /// Returns within ``stopTimeout``.
    func stop() {
        guard started else { return }
        started = false
        waker.wake()
        let (seconds, attoseconds) = Self.stopTimeout.components
        let limit = DispatchTime.now() + .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
        guard done.wait(timeout: limit) == .success else {
            // The thread still holds the listener: leave it open rather than close a descriptor
            // in use (whose number another open would reuse).
            logger.warning("the metrics thread did not stop within \(Self.stopTimeout); not waiting for it")
            return
        }
        close(listener)
    }

    private func serve() {
        while true {
            var fds = [
                pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
                pollfd(fd: waker.readEnd, events: Int16(POLLIN), revents: 0),
            ]
            if poll(&fds, 2, -1) < 0 {
                if errno == EINTR { continue }
                return
            }
            if fds[1].revents != 0 { return }
            let client = acceptClient(listener, nonBlocking: true)
            if client >= 0 { handle(client) }
        }
    }

    /// What ended a wait for a client.
    private enum Wait {
        case ready, timedOut, stopping
    }

    /// Waits until `fd` has `events`, `deadline` passes or ``stop()`` is called. The waker is
    /// not drained: `serve` sees it too, and returns.
    private func wait(_ fd: Int32, for events: Int32, until deadline: ContinuousClock.Instant) -> Wait {
        while true {
            let milliseconds = deadline.pollTimeout()
            guard milliseconds > 0 else { return .timedOut }
            var fds = [
                pollfd(fd: fd, events: Int16(events), revents: 0),
                pollfd(fd: waker.readEnd, events: Int16(POLLIN), revents: 0),
            ]
            let result = poll(&fds, 2, milliseconds)
            if result < 0 && errno != EINTR { return .timedOut }
            if fds[1].revents != 0 { return .stopping }
            // POLLHUP and POLLERR count as ready: the next recv or send says what happened.
            if fds[0].revents != 0 { return .ready }
        }
    }

    private func handle(_ fd: Int32) {
        defer { close(fd) }
        let requestDeadline = ContinuousClock.now + requestTimeout
        var request: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 2048)
        reading: while request.count < 8192 {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                request += chunk[..<n]
                // The headers end at an empty line; the body of a GET is empty.
                if request.firstRange(of: [13, 10, 13, 10]) != nil || request.firstRange(of: [10, 10]) != nil {
                    break
                }
                continue
            }
            if n == 0 { break }
            if errno == EINTR { continue }
            guard errno == EAGAIN || errno == EWOULDBLOCK else { return }
            switch wait(fd, for: Int32(POLLIN), until: requestDeadline) {
            case .ready: continue
            case .timedOut: break reading  // answered from what came: a partial request is a 400
            case .stopping: return
            }
        }
        let firstLine = String(decoding: request.prefix { $0 != 13 && $0 != 10 }, as: UTF8.self)
        let parts = firstLine.split(separator: " ")
        let response: String
        if parts.count >= 2, parts[0] == "GET", parts[1] == "/metrics" || parts[1].hasPrefix("/metrics?") {
            let body = text()
            response =
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n"
                + body
        } else if parts.count >= 2, parts[0] == "GET" {
            let body = "netpathd serves metrics at /metrics\n"
            response =
                "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n"
                + body
        } else {
            response = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        }
        let bytes = Array(response.utf8)
        let responseDeadline = ContinuousClock.now + responseTimeout
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n > 0 {
                offset += n
                continue
            }
            if n < 0 && errno == EINTR { continue }
            guard n < 0, errno == EAGAIN || errno == EWOULDBLOCK else { return }
            switch wait(fd, for: Int32(POLLOUT), until: responseDeadline) {
            case .ready: continue
            case .timedOut:
                logger.warning(
                    "metrics: closing a scrape whose response was not read within \(responseTimeout) (\(offset) of \(bytes.count) bytes taken)"
                )
                return
            case .stopping: return
            }
        }
    }
}
