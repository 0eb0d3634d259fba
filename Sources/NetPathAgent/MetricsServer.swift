import Dispatch
import Glibc
import Logging
import NetPathLinux

/// Serves `GET /metrics` over HTTP/1.1 on a TCP address, one short connection at a time.
///
/// Deliberately minimal (no keep-alive, 8 KiB request limit, 2 s to send the request): it is
/// scraped every few seconds by Prometheus, and a full HTTP stack would double the agent's
/// dependencies. The text comes from the swift-prometheus registry.
final class MetricsServer: @unchecked Sendable {
    // @unchecked: `listener` is set in start() before the thread starts and only closed after
    // it ended; `stopping` is the only shared mutable state and is an atomic flag.

    let address: String
    private let text: @Sendable () -> String
    private let logger: Logger
    private var listener: Int32 = -1
    private var started = false
    private let waker = WakePipe()
    private let done = DispatchSemaphore(value: 0)

    struct StartError: Error, CustomStringConvertible {
        var description: String
    }

    /// - Parameter address: `HOST:PORT` (IPv6 as `[::1]:9479`).
    init(address: String, logger: Logger, text: @escaping @Sendable () -> String) {
        self.address = address
        self.logger = logger
        self.text = text
    }

    func start() throws(StartError) {
        guard let colon = address.lastIndex(of: ":"), let port = UInt16(address[address.index(after: colon)...]) else {
            throw StartError(description: "metrics address must be HOST:PORT, found \"\(address)\"")
        }
        var host = String(address[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE
        var info: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host.isEmpty ? nil : host, String(port), &hints, &info) == 0, let first = info else {
            throw StartError(description: "metrics address \"\(address)\" is not a numeric address")
        }
        defer { freeaddrinfo(info) }
        let fd = socket(first.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw StartError(description: "socket: \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        guard bind(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0, listen(fd, 16) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw StartError(description: "cannot listen on \(address): \(reason)")
        }
        listener = fd
        guard
            OSThread.detach({ [self] in
                serve()
                done.signal()
            })
        else {
            close(fd)
            throw StartError(description: "cannot start the metrics thread")
        }
        started = true
    }

    func stop() {
        guard started else { return }
        waker.wake()
        done.wait()
        close(listener)
        started = false
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
            let client = acceptClient(listener, nonBlocking: false)
            if client >= 0 { handle(client) }
        }
    }

    private func handle(_ fd: Int32) {
        defer { close(fd) }
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var request: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 2048)
        while request.count < 8192 {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            request += chunk[..<n]
            // The headers end at an empty line; the body of a GET is empty.
            if request.firstRange(of: [13, 10, 13, 10]) != nil || request.firstRange(of: [10, 10]) != nil { break }
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
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            offset += n
        }
    }
}
