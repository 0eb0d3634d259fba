// SPDX-License-Identifier: Apache-2.0

import FoundationEssentials
import Glibc
import NetPathCore
import SystemPackage

/// A connection to netpathd's control socket.
///
/// Every ``request(_:interface:timeout:)`` waits a bounded time for its reply (``replyTimeout(for:)``), so
/// an agent that accepts connections but is stuck never hangs its caller; the `monitor` stream
/// that follows a `monitor` request (``readLine()``) has no such bound, since events may be rare.
///
/// The agent closes a connection that has nothing under way for ``ControlProtocol/idleTimeout``:
/// for requests seconds apart, connect for each one.
///
/// ```swift
/// let client = try ControlClient(path: "/run/netpath/netpathd.sock")
/// let reply = try client.request(.status)
/// ```
package final class ControlClient {
    /// Why talking to the agent failed.
    package enum Failure: Error, Equatable, CustomStringConvertible {
        /// Nothing listens on the socket: no agent runs (or it runs with another socket).
        case noAgent(path: String, reason: String)
        /// This user may not connect: the socket (or its directory) is root's and the agent's
        /// `control_group`'s, and this process is in neither.
        case permissionDenied(path: String)
        /// The connection broke or the agent sent something unreadable.
        case protocolError(String)
        /// The agent did not take the connection, or sent no reply, within `timeout`: it is
        /// running but stuck (or something else listens on the socket).
        case noReply(path: String, timeout: Duration)
        /// The socket is served by a process of user `uid`, neither root nor this process's own
        /// user: not netpathd, but whoever bound the path first. Nothing is sent to it.
        case untrustedAgent(path: String, uid: UInt32)

        package var description: String {
            switch self {
            case .noAgent(let path, let reason):
                return
                    "no netpathd is answering on \(path) (\(reason)); start it, or use --local to compute from the kernel directly"
            case .permissionDenied(let path):
                return
                    "permission denied on \(path): only root and the members of netpathd's control_group may use it; join that group (control_group in [agent] of netpathd's configuration), use sudo, or use --local to compute from the kernel directly"
            case .protocolError(let message):
                return "talking to netpathd failed: \(message)"
            case .noReply(let path, let timeout):
                return
                    "netpathd on \(path) did not answer within \(timeout); it may be stuck (see its log, e.g. journalctl -u netpathd)"
            case .untrustedAgent(let path, let uid):
                return
                    "refusing to talk to \(path): it is served by uid \(uid), not by root; another user may have taken the socket's place (check its directory, and restart netpathd)"
            }
        }
    }

    private let fd: Int32
    private let path: String
    private var buffer: [UInt8] = []

    /// How long ``request(_:interface:timeout:)`` waits for the reply to `command` unless told otherwise.
    ///
    /// Queries are answered from the agent's published state at once: 10 s means it is stuck. A
    /// `reload` is carried out by the agent's main loop, which may still be waiting (at most 45 s
    /// by default) for its startup hooks: 60 s.
    ///
    /// ```swift
    /// let reply = try client.request(.reload, timeout: ControlClient.replyTimeout(for: .reload))
    /// ```
    package static func replyTimeout(for command: ControlCommand) -> Duration {
        switch command {
        case .reload: return .seconds(60)
        // A probe takes up to [connectivity]'s timeout (at most a minute), after one in flight.
        case .probe: return .seconds(150)
        default: return .seconds(10)
        }
    }

    /// How long connecting (and each send) may block: an agent that stopped accepting lets its
    /// listen queue fill, and `connect` then waits for room.
    package static let connectTimeout: Duration = .seconds(10)

    /// Connects to the agent's socket.
    ///
    /// The listening process must be root's or this process's own user's (its `SO_PEERCRED`):
    /// a socket another user bound in the agent's place is refused before anything is sent or
    /// believed.
    ///
    /// - Throws: ``Failure/noAgent(path:reason:)`` when nothing listens there,
    ///   ``Failure/permissionDenied(path:)`` when this user may not connect,
    ///   ``Failure/noReply(path:timeout:)`` when the agent's queue stays full for
    ///   ``connectTimeout``, ``Failure/untrustedAgent(path:uid:)`` when someone else listens.
    package init(path: String) throws(Failure) {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .noAgent(path: path, reason: Errno(rawValue: errno).description) }
        // On Unix sockets SO_SNDTIMEO bounds a blocking connect (EAGAIN) as well as send.
        let (seconds, attoseconds) = Self.connectTimeout.components
        var limit = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(fd)
            throw .noAgent(path: path, reason: "socket path too long")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            if code == EAGAIN || code == EWOULDBLOCK { throw .noReply(path: path, timeout: Self.connectTimeout) }
            // EACCES: no write permission on the socket, or no search permission on a directory
            // above it. Either way an agent may well be running: "no netpathd" would mislead.
            if code == EACCES || code == EPERM { throw .permissionDenied(path: path) }
            throw .noAgent(path: path, reason: Errno(rawValue: code).description)
        }
        guard let peer = PeerCredentials(socket: fd) else {
            let code = errno
            close(fd)
            throw .protocolError(
                "cannot read the credentials of \(path)'s listener: \(Errno(rawValue: code).description)"
            )
        }
        guard peer.uid == 0 || peer.uid == getuid() else {
            close(fd)
            throw .untrustedAgent(path: path, uid: peer.uid)
        }
        self.fd = fd
        self.path = path
    }

    deinit { close(fd) }

    /// Sends one request and reads its reply.
    ///
    /// - Parameters:
    ///   - all: for `status`, also list the ignored links (``ControlRequest/all``).
    ///   - timeout: how long to wait for the reply; ``replyTimeout(for:)`` by default.
    /// - Throws: ``Failure/noReply(path:timeout:)`` when none came in time.
    package func request(
        _ command: ControlCommand,
        interface: String? = nil,
        all: Bool? = nil,
        timeout: Duration? = nil
    ) throws(Failure) -> ControlReply {
        let timeout = timeout ?? Self.replyTimeout(for: command)
        do {
            try send(ControlRequest(command, interface: interface, all: all))
        } catch .protocolError(let reason) {
            // An agent that refuses the connection (too many clients) writes why and closes
            // without reading the request: that reply, already here, says more than the broken pipe.
            guard let line = try? readLine(within: .zero), let reply = try? decode(line) else {
                throw .protocolError(reason)
            }
            return reply
        }
        guard let line = try readLine(within: timeout) else {
            throw .protocolError("the agent closed the connection without replying")
        }
        return try decode(line)
    }

    private func decode(_ line: String) throws(Failure) -> ControlReply {
        do {
            return try ControlReply(line: line.utf8)
        } catch {
            throw .protocolError("unreadable reply: \(error)")
        }
    }

    /// Ends the connection in both directions without closing the descriptor: a ``readLine()``
    /// blocked on another thread returns `nil`. Safe to call from any thread while the client is
    /// alive (the descriptor stays valid until `deinit`, so it cannot be reused meanwhile).
    ///
    /// ```swift
    /// client.shutdown()   // the reader thread's readLine() returns nil
    /// ```
    package func shutdown() {
        _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }

    /// The next line the agent sends (for `monitor`); `nil` when the agent closed the connection.
    /// Waits as long as it takes.
    package func readLine() throws(Failure) -> String? {
        try readLine(within: nil)
    }

    /// The next line, waiting `timeout` at most (forever when `nil`); `nil` when the agent closed
    /// the connection.
    ///
    /// - Throws: ``Failure/noReply(path:timeout:)`` when no whole line came in time; the
    ///   connection is then shut down.
    package func readLine(within timeout: Duration?) throws(Failure) -> String? {
        let deadline = timeout.map { ContinuousClock.now + $0 }
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            if let deadline, let timeout { try waitReadable(until: deadline, timeout: timeout) }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .protocolError(Errno(rawValue: errno).description)
            }
            if n == 0 { return nil }
            buffer += chunk[..<n]
        }
    }

    /// Returns once the socket has something to read (or its end), throwing at `deadline`.
    /// At the deadline the connection is shut down: a late reply must not be taken as the next
    /// request's (sending on it fails from then on).
    private func waitReadable(until deadline: ContinuousClock.Instant, timeout: Duration) throws(Failure) {
        while true {
            // At or past the deadline, one look (0 ms) still takes a reply that is already there.
            let milliseconds = deadline.pollTimeout()
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let result = poll(&ready, 1, milliseconds)
            if result > 0 { return }
            if result < 0 && errno != EINTR { throw .protocolError(Errno(rawValue: errno).description) }
            if result == 0 && milliseconds == 0 {
                shutdown()
                throw .noReply(path: path, timeout: timeout)
            }
        }
    }

    // send(2) with MSG_NOSIGNAL rather than FileDescriptor.writeAll: a library must not let an agent
    // that went away raise SIGPIPE in its user's process.
    private func send(_ request: ControlRequest) throws(Failure) {
        let line: [UInt8]
        do {
            line = Array(try JSONCoding.line(request).utf8) + [UInt8(ascii: "\n")]
        } catch {
            throw .protocolError("\(error)")
        }
        var offset = 0
        while offset < line.count {
            let n = line.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            if n < 0 {
                if errno == EINTR { continue }
                // SO_SNDTIMEO passed: the agent is not reading.
                if errno == EAGAIN || errno == EWOULDBLOCK { throw .noReply(path: path, timeout: Self.connectTimeout) }
                throw .protocolError(Errno(rawValue: errno).description)
            }
            offset += n
        }
    }
}
