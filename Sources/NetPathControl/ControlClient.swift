import FoundationEssentials
import Glibc
import NetPathCore

/// A connection to netpathd's control socket.
///
/// ```swift
/// let client = try ControlClient(path: "/run/netpath/netpathd.sock")
/// let reply = try client.request(.status)
/// ```
public final class ControlClient {
    /// Why talking to the agent failed.
    public enum Failure: Error, CustomStringConvertible {
        /// Nothing listens on the socket: no agent runs (or it runs with another socket).
        case noAgent(path: String, reason: String)
        /// The connection broke or the agent sent something unreadable.
        case protocolError(String)

        public var description: String {
            switch self {
            case .noAgent(let path, let reason):
                return
                    "no netpathd is answering on \(path) (\(reason)); start it, or use --local to compute from the kernel directly"
            case .protocolError(let message):
                return "talking to netpathd failed: \(message)"
            }
        }
    }

    private let fd: Int32
    private var buffer: [UInt8] = []

    /// Connects to the agent's socket.
    public init(path: String) throws(Failure) {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .noAgent(path: path, reason: String(cString: strerror(errno))) }
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
            let reason = String(cString: strerror(errno))
            close(fd)
            throw .noAgent(path: path, reason: reason)
        }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Sends one request and reads its reply.
    public func request(_ command: ControlCommand) throws(Failure) -> ControlReply {
        try send(ControlRequest(command))
        guard let line = try readLine() else {
            throw .protocolError("the agent closed the connection without replying")
        }
        do {
            return try JSONDecoder().decode(ControlReply.self, from: Data(line.utf8))
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
    public func shutdown() {
        _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }

    /// The next line the agent sends (for `monitor`); `nil` when the agent closed the connection.
    public func readLine() throws(Failure) -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .protocolError(String(cString: strerror(errno)))
            }
            if n == 0 { return nil }
            buffer += chunk[..<n]
        }
    }

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
                throw .protocolError(String(cString: strerror(errno)))
            }
            offset += n
        }
    }
}
