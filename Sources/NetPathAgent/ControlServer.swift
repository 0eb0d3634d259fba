import FoundationEssentials
import Glibc
import Logging
import NetPathConfig
import NetPathControl
import NetPathCore
import Synchronization

/// Serves the control socket: JSON-line requests from `netpathctl` and `PathMonitor`.
///
/// One thread polls the listening socket and every client, so a slow or malicious client can
/// neither block the agent nor other clients:
/// - a request line is at most ``ControlProtocol/maximumRequestBytes``; a longer one gets an
///   error reply and the connection is closed, without buffering the rest;
/// - malformed JSON or an unknown command gets an error reply;
/// - a `monitor` client whose unread output passes ``monitorBacklogLimit`` is dropped rather
///   than slowing the agent or the other monitors;
/// - `reload` is answered only for peers whose `SO_PEERCRED` uid is 0.
///
/// The socket is created root-owned with mode 0660 in a directory that only root (or the agent's
/// user) may write: see ``prepareDirectory()``.
final class ControlServer: @unchecked Sendable {
    // @unchecked: `clients` and the socket fds are touched only by the server thread; everything
    // shared with other threads is inside `shared` (a Mutex) or is immutable.

    /// Answers a request synchronously from the agent's published state.
    typealias Answer = @Sendable (ControlCommand) -> ControlReply
    /// Starts a reload; the completion is called with the reply, on any thread.
    typealias Reload = @Sendable (@escaping @Sendable (ControlReply) -> Void) -> Void

    static let monitorBacklogLimit = 1 << 20
    static let maximumClients = 64

    let path: String
    private let logger: Logger
    private let answer: Answer
    private let reload: Reload
    private var listener: Int32 = -1
    private let waker = WakePipe()
    private var started = false
    private let finished = Mutex(false)

    private struct Outbox {
        var pending: [Int32: [UInt8]] = [:]
        var monitors: Set<Int32> = []
        var stopping = false
        var dropped: Set<Int32> = []
    }
    private let shared = Mutex(Outbox())

    private final class Client {
        let fd: Int32
        let uid: UInt32
        var input: [UInt8] = []
        var output: [UInt8] = []
        var closeAfterWrite = false
        init(fd: Int32, uid: UInt32) {
            self.fd = fd
            self.uid = uid
        }
    }
    private var clients: [Int32: Client] = [:]

    init(path: String, logger: Logger, answer: @escaping Answer, reload: @escaping Reload) {
        self.path = path
        self.logger = logger
        self.answer = answer
        self.reload = reload
    }

    deinit {
        if listener >= 0 { close(listener) }
    }

    /// Why the socket could not be opened.
    struct StartError: Error, CustomStringConvertible {
        var description: String
    }

    /// Creates the socket and starts serving.
    func start() throws(StartError) {
        try prepareDirectory()
        if access(path, F_OK) == 0 {
            // A live agent answers on it; a stale file from a crash does not and is replaced. One
            // whose listen queue stays full is alive but stuck: its socket is not taken over.
            switch Result(catching: { () throws(ControlClient.Failure) in try ControlClient(path: path) }) {
            case .success:
                throw StartError(description: "another netpathd is already listening on \(path)")
            case .failure(.noReply(_, let timeout)):
                throw StartError(
                    description: "another netpathd is listening on \(path) but took no connection within \(timeout)"
                )
            case .failure:
                break
            }
            unlink(path)
        }
        let fd = socket(
            AF_UNIX,
            Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue),
            0
        )
        guard fd >= 0 else { throw StartError(description: "socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(fd)
            throw StartError(description: "control socket path too long: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        // Created 0600 (umask) and then opened up to 0660: never briefly world-accessible.
        let oldMask = umask(0o177)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        umask(oldMask)
        guard bound == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw StartError(description: "bind \(path): \(reason)")
        }
        chmod(path, 0o660)
        if geteuid() == 0 { chown(path, 0, 0) }
        guard listen(fd, 16) == 0 else {
            close(fd)
            throw StartError(description: "listen \(path): \(String(cString: strerror(errno)))")
        }
        listener = fd
        guard OSThread.detach({ [self] in serve() }) else {
            close(fd)
            listener = -1
            throw StartError(description: "cannot start the control socket thread")
        }
        started = true
    }

    /// Stops serving, closes every client and removes the socket file.
    func stop() {
        let alreadyStopping = shared.withLock { outbox in
            defer { outbox.stopping = true }
            return outbox.stopping
        }
        guard !alreadyStopping, started else { return }
        wake()
        while !finished.withLock({ $0 }) { usleep(1000) }
        unlink(path)
    }

    /// Sends one event line to every `monitor` client.
    func broadcast(_ line: String) {
        let bytes = Array(line.utf8) + [UInt8(ascii: "\n")]
        let anyone = shared.withLock { outbox in
            for fd in outbox.monitors { outbox.pending[fd, default: []] += bytes }
            return !outbox.monitors.isEmpty
        }
        if anyone { wake() }
    }

    /// The number of clients currently monitoring.
    var monitorCount: Int { shared.withLock { $0.monitors.count } }

    private func enqueue(_ reply: ControlReply, to fd: Int32) {
        let line = ((try? JSONCoding.line(reply)) ?? #"{"ok":false,"error":"internal error"}"#) + "\n"
        shared.withLock { $0.pending[fd, default: []] += Array(line.utf8) }
        wake()
    }

    private func wake() { waker.wake() }

    /// Makes sure nobody but root (or the agent's own user) can put anything at ``path``.
    ///
    /// Another user who may create files in the socket's directory can bind the path first
    /// (or between a stale socket's unlink and our bind), and root's `netpathctl` would then talk
    /// to an impostor. So the directory must be owned by root or the agent's user and closed to
    /// group and others; a sticky world-writable one (`/tmp`) is refused too, since the race for
    /// a free name there is anybody's. A missing directory is created, mode 0755.
    private func prepareDirectory() throws(StartError) {
        let directory = path.lastIndex(of: "/").map { path[..<$0].isEmpty ? "/" : String(path[..<$0]) } ?? "."
        var info = stat()
        if stat(directory, &info) != 0 {
            guard mkdir(directory, 0o755) == 0 || errno == EEXIST else {
                throw StartError(description: "cannot create \(directory): \(String(cString: strerror(errno)))")
            }
            guard stat(directory, &info) == 0 else {
                throw StartError(description: "cannot inspect \(directory): \(String(cString: strerror(errno)))")
            }
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw StartError(description: "\(directory) is not a directory; cannot put the control socket there")
        }
        let owner = UInt32(info.st_uid)
        guard owner == 0 || owner == UInt32(geteuid()) else {
            throw StartError(
                description:
                    "\(directory) is owned by uid \(owner), not by root: that user could take the control socket's place; use a root-owned directory such as /run/netpath"
            )
        }
        if info.st_mode & 0o022 != 0 {
            throw StartError(
                description:
                    "\(directory) is writable by group or others (mode \(String(info.st_mode & 0o7777, radix: 8))): anyone who can write there could take the control socket's place; use a root-owned directory such as /run/netpath"
            )
        }
    }

    // MARK: - The server thread

    private func serve() {
        defer {
            for client in clients.values { close(client.fd) }
            clients = [:]
            finished.withLock { $0 = true }
        }
        while true {
            var fds = [
                pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
                pollfd(fd: waker.readEnd, events: Int16(POLLIN), revents: 0),
            ]
            for client in clients.values {
                var events = Int16(POLLIN)
                if !client.output.isEmpty { events |= Int16(POLLOUT) }
                fds.append(pollfd(fd: client.fd, events: events, revents: 0))
            }
            if poll(&fds, nfds_t(fds.count), -1) < 0 {
                if errno == EINTR { continue }
                logger.error("control socket poll failed: \(String(cString: strerror(errno)))")
                return
            }
            if fds[1].revents != 0 { waker.drain() }
            if shared.withLock({ $0.stopping }) { return }
            collectOutbox()
            if fds[0].revents != 0 { acceptClients() }
            for entry in fds.dropFirst(2) where entry.revents != 0 {
                guard let client = clients[entry.fd] else { continue }
                if entry.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 { readFrom(client) }
                if clients[entry.fd] != nil, !client.output.isEmpty { writeTo(client) }
            }
            for client in Array(clients.values) where !client.output.isEmpty { writeTo(client) }
        }
    }

    private func collectOutbox() {
        let (pending, dropped) = shared.withLock { outbox -> ([Int32: [UInt8]], Set<Int32>) in
            defer {
                outbox.pending = [:]
                outbox.dropped = []
            }
            return (outbox.pending, outbox.dropped)
        }
        for fd in dropped { disconnect(fd) }
        for (fd, bytes) in pending {
            guard let client = clients[fd] else { continue }
            client.output += bytes
            if client.output.count > Self.monitorBacklogLimit {
                logger.warning("dropping a monitor client that does not read (\(client.output.count) bytes unread)")
                disconnect(fd)
            }
        }
    }

    private func acceptClients() {
        while true {
            let fd = acceptClient(listener, nonBlocking: true)
            if fd < 0 { return }
            // struct ucred { pid_t pid; uid_t uid; gid_t gid; }: read as three 32-bit words.
            var credentials: (Int32, UInt32, UInt32) = (0, UInt32.max, UInt32.max)
            var length = socklen_t(MemoryLayout.size(ofValue: credentials))
            if getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0 {
                close(fd)
                continue
            }
            if clients.count >= Self.maximumClients {
                let line = Array(((try? JSONCoding.line(ControlReply.failure("too many clients"))) ?? "").utf8) + [10]
                _ = line.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                close(fd)
                continue
            }
            clients[fd] = Client(fd: fd, uid: credentials.1)
        }
    }

    private func readFrom(_ client: Client) {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(client.fd, $0.baseAddress, $0.count, 0) }
            if n == 0 {
                disconnect(client.fd)
                return
            }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { break }
                disconnect(client.fd)
                return
            }
            if shared.withLock({ $0.monitors.contains(client.fd) }) { continue }  // monitors only read
            client.input += chunk[..<n]
            while let newline = client.input.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(client.input[..<newline])
                client.input.removeSubrange(...newline)
                handle(line, from: client)
            }
            if client.input.count > ControlProtocol.maximumRequestBytes {
                client.input = []
                respond(.failure("request longer than \(ControlProtocol.maximumRequestBytes) bytes"), to: client)
                client.closeAfterWrite = true
                return
            }
        }
    }

    private func handle(_ line: [UInt8], from client: Client) {
        guard line.count <= ControlProtocol.maximumRequestBytes else {
            respond(.failure("request longer than \(ControlProtocol.maximumRequestBytes) bytes"), to: client)
            client.closeAfterWrite = true
            return
        }
        let request: ControlRequest
        do {
            request = try JSONDecoder().decode(ControlRequest.self, from: Data(line))
        } catch {
            let commands = ControlCommand.allCases.map(\.rawValue).joined(separator: ", ")
            respond(.failure("malformed request: expected {\"command\": …} with one of \(commands)"), to: client)
            return
        }
        switch request.command {
        case .reload:
            guard client.uid == 0 else {
                respond(.failure("only root may reload netpathd (your uid is \(client.uid))"), to: client)
                return
            }
            let fd = client.fd
            reload { [weak self] reply in self?.enqueue(reply, to: fd) }
        case .monitor:
            respond(ControlReply(ok: true, monitoring: true), to: client)
            shared.withLock { _ = $0.monitors.insert(client.fd) }
        case .status, .explain, .hooks:
            respond(answer(request.command), to: client)
        }
    }

    private func respond(_ reply: ControlReply, to client: Client) {
        let line = ((try? JSONCoding.line(reply)) ?? #"{"ok":false,"error":"internal error"}"#) + "\n"
        client.output += Array(line.utf8)
    }

    private func writeTo(_ client: Client) {
        while !client.output.isEmpty {
            let n = client.output.withUnsafeBytes { send(client.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { return }
                disconnect(client.fd)
                return
            }
            client.output.removeFirst(n)
        }
        if client.closeAfterWrite { disconnect(client.fd) }
    }

    private func disconnect(_ fd: Int32) {
        guard clients.removeValue(forKey: fd) != nil else { return }
        shared.withLock { outbox in
            outbox.monitors.remove(fd)
            outbox.pending[fd] = nil
        }
        close(fd)
    }
}
