// SPDX-License-Identifier: Apache-2.0

import FoundationEssentials
import Glibc
import Logging
import NetPathConfig
import NetPathControl
import NetPathCore
import NetPathLinux
import Synchronization
import SystemPackage

/// Serves the control socket: JSON-line requests from `netpathctl` and `PathMonitor`.
///
/// One thread polls the listening socket and every client, so a slow or malicious client can
/// neither block the agent nor other clients (``ControlLimits`` has the figures):
/// - a request line is at most ``ControlProtocol/maximumRequestBytes``; a longer one gets an
///   error reply and the connection is closed, without buffering the rest;
/// - malformed JSON or an unknown command gets an error reply;
/// - each connection carries one request at a time (``ControlConnection``): nothing more is read
///   from a client until its reply is handed over, so one that pipelines requests without
///   reading the replies holds one reply, not all of them, and cannot delay the others;
/// - a connection with nothing under way is closed after the idle deadline, one whose request
///   or reply stalls after the request deadline;
/// - a `monitor` client whose unread output passes the backlog limit is dropped rather than
///   slowing the agent or the other monitors;
/// - other users share a fixed number of connections, and a few more are kept for root (and the
///   agent's own user), so `status` and `reload` get through whatever other clients do;
/// - `reload` is answered only for peers whose `SO_PEERCRED` uid is 0.
///
/// The socket is created root-owned with mode 0660 in a directory that only root (or the agent's
/// user) may write: see ``prepareDirectory()``. Its group is root's, or the configuration's
/// `control_group`, whose members may then connect and ask everything but `reload`.
///
/// Who may read is decided by the socket's permissions alone, when connecting; the agent does not
/// check a peer's groups again. What it answers (interfaces, routes, paths, the hooks directory's
/// listing, the policy's reasoning) is what any local user can read from netlink and
/// /etc/netpath already; the group keeps other users' clients off the agent's connections, not a
/// secret. A second check in the agent would have to read the peer's supplementary groups from
/// /proc/PID/status (`SO_PEERCRED` gives only the primary gid), by a pid the peer may have left
/// and another process taken by then; and it would overrule an administrator who opened the
/// socket wider on purpose. `reload` changes what the agent does, so the agent checks that one
/// itself, with the uid the kernel recorded (``ControlPeer/mayReload``).
final class ControlServer: @unchecked Sendable {
    // @unchecked: `connections` and the socket fds are touched only by the server thread;
    // everything shared with other threads is inside `shared` (a Mutex) or is immutable.

    /// Answers a request synchronously from the agent's published state.
    typealias Answer = @Sendable (ControlRequest) -> ControlReply
    /// Starts a reload; the completion is called with the reply, on any thread.
    typealias Reload = @Sendable (@escaping @Sendable (ControlReply) -> Void) -> Void
    /// Starts a connectivity probe of an interface (`nil`: every probed one); the completion is
    /// called with the reply, on any thread, when the probes end.
    typealias Probe = @Sendable (String?, @escaping @Sendable (ControlReply) -> Void) -> Void

    let path: String
    /// The socket's group (`control_group`); `nil` for root's (or, not running as root, ours).
    let group: UInt32?
    let limits: ControlLimits
    private let logger: Logger
    private let answer: Answer
    private let reload: Reload
    private let probe: Probe?
    private var listener: Int32 = -1
    private let waker = WakePipe()
    private var started = false
    private let finished = Mutex(false)

    /// What other threads hand the server thread, by connection id: reload replies, and events for
    /// monitors.
    private struct Outbox {
        var pending: [UInt64: [UInt8]] = [:]
        var monitors: Set<UInt64> = []
        var stopping = false
    }
    private let shared = Mutex(Outbox())

    private var connections: [UInt64: ControlConnection] = [:]
    private var lastConnection: UInt64 = 0
    /// Set while the shared connections are all taken, so the refusals are logged once per episode.
    private var full = false

    init(
        path: String,
        group: UInt32? = nil,
        limits: ControlLimits = ControlLimits(),
        logger: Logger,
        answer: @escaping Answer,
        reload: @escaping Reload,
        probe: Probe? = nil
    ) {
        self.path = path
        self.group = group
        self.limits = limits
        self.logger = logger
        self.answer = answer
        self.reload = reload
        self.probe = probe
    }

    deinit {
        if listener >= 0 { close(listener) }
    }

    /// Creates the socket and starts serving.
    func start() throws(Agent.ListenerError) {
        try prepareDirectory()
        if access(path, F_OK) == 0 {
            // A live agent answers on it; a stale file from a crash does not and is replaced. One
            // whose listen queue stays full is alive but stuck: its socket is not taken over.
            switch Result(catching: { () throws(ControlClient.Failure) in try ControlClient(path: path) }) {
            case .success:
                throw .alreadyServed(path: path)
            case .failure(.noReply(_, let timeout)):
                throw .notAccepting(path: path, timeout: timeout)
            case .failure:
                break
            }
            unlink(path)
        }
        // Bound under a name of its own and renamed into place once it listens: the socket
        // appears at `path` only when it takes connections, so a client that waits for it
        // (`netpathctl wait-online`, through inotify) is never refused by a socket not yet
        // listening.
        let bindPath = path + ".\(getpid()).new"
        unlink(bindPath)
        let fd = socket(
            AF_UNIX,
            Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue),
            0
        )
        guard fd >= 0 else { throw .failed("socket") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(bindPath.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(fd)
            throw .pathTooLong(path: path)
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
            let error = Agent.ListenerError.failed("bind \(path)")
            close(fd)
            throw error
        }
        // Owner and group first, then the mode: the socket is never 0660 for a group it is not meant for.
        let owner = geteuid() == 0 ? uid_t(0) : uid_t.max  // uid_t.max (-1): leave as it is
        let socketGroup = group.map { gid_t($0) } ?? (geteuid() == 0 ? gid_t(0) : gid_t.max)
        if chown(bindPath, owner, socketGroup) != 0, let group {
            let error = Agent.ListenerError.failed("cannot give \(path) to control_group (gid \(group))")
            close(fd)
            unlink(bindPath)
            throw error
        }
        chmod(bindPath, 0o660)
        guard listen(fd, 16) == 0 else {
            let error = Agent.ListenerError.failed("listen \(path)")
            close(fd)
            unlink(bindPath)
            throw error
        }
        guard rename(bindPath, path) == 0 else {
            let error = Agent.ListenerError.failed("cannot move the control socket to \(path)")
            close(fd)
            unlink(bindPath)
            throw error
        }
        listener = fd
        guard OSThread.detach({ [self] in serve() }) else {
            close(fd)
            listener = -1
            throw .threadNotStarted(name: "control socket")
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
            for id in outbox.monitors { outbox.pending[id, default: []] += bytes }
            return !outbox.monitors.isEmpty
        }
        if anyone { wake() }
    }

    /// The number of clients currently monitoring.
    var monitorCount: Int { shared.withLock { $0.monitors.count } }

    private func enqueue(_ reply: ControlReply, to id: UInt64) {
        shared.withLock { $0.pending[id, default: []] += Self.line(reply) }
        wake()
    }

    private static func line(_ reply: ControlReply) -> [UInt8] {
        Array(((try? JSONCoding.line(reply)) ?? #"{"ok":false,"error":"internal error"}"#).utf8) + [UInt8(ascii: "\n")]
    }

    private func wake() { waker.wake() }

    /// Makes sure nobody but root (or the agent's own user) can put anything at ``path``.
    ///
    /// Another user who may create files in the socket's directory can bind the path first
    /// (or between a stale socket's unlink and our bind), and root's `netpathctl` would then talk
    /// to an impostor. So the directory must be owned by root or the agent's user and closed to
    /// group and others; a sticky world-writable one (`/tmp`) is refused too, since the race for
    /// a free name there is anybody's. A missing directory is created, mode 0755.
    private func prepareDirectory() throws(Agent.ListenerError) {
        let directory = path.lastIndex(of: "/").map { path[..<$0].isEmpty ? "/" : String(path[..<$0]) } ?? "."
        var info = stat()
        if stat(directory, &info) != 0 {
            guard mkdir(directory, 0o755) == 0 || errno == EEXIST else {
                throw .failed("cannot create \(directory)")
            }
            guard stat(directory, &info) == 0 else {
                throw .failed("cannot inspect \(directory)")
            }
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw .notADirectory(path: directory)
        }
        let owner = UInt32(info.st_uid)
        guard owner == 0 || owner == UInt32(geteuid()) else {
            throw .directoryOwnedByAnotherUser(path: directory, uid: owner)
        }
        if info.st_mode & 0o022 != 0 {
            throw .directoryWritableByGroupOrOthers(path: directory, mode: UInt32(info.st_mode))
        }
    }

    // MARK: - The server thread

    private func serve() {
        defer {
            for connection in connections.values { close(connection.fd) }
            connections = [:]
            finished.withLock { $0 = true }
        }
        while true {
            let polled = Array(connections.values)
            var fds = [
                pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
                pollfd(fd: waker.readEnd, events: Int16(POLLIN), revents: 0),
            ]
            for connection in polled {
                var events: Int16 = 0
                if connection.wantsInput { events |= Int16(POLLIN) }
                if !connection.output.isEmpty { events |= Int16(POLLOUT) }
                // With no events asked, poll still reports POLLHUP and POLLERR: the peer left.
                fds.append(pollfd(fd: connection.fd, events: events, revents: 0))
            }
            if poll(&fds, nfds_t(fds.count), pollTimeout(at: .now)) < 0 {
                if errno == EINTR { continue }
                logger.error("control socket poll failed: \(Errno(rawValue: errno).description)")
                return
            }
            if fds[1].revents != 0 { waker.drain() }
            if shared.withLock({ $0.stopping }) { return }
            collectOutbox()
            if fds[0].revents != 0 { acceptClients() }
            for (connection, entry) in zip(polled, fds.dropFirst(2)) where entry.revents != 0 {
                guard connections[connection.id] != nil else { continue }
                // POLLHUP: the peer closed both ways (a half-close shows as POLLIN and a read of
                // 0). It will read no reply, so there is nothing left to do for it.
                if entry.revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 {
                    disconnect(connection)
                    continue
                }
                if entry.revents & Int16(POLLIN) != 0 { read(connection) }
            }
            for connection in Array(connections.values) { serveRequests(connection) }
            expire(at: .now)
        }
    }

    /// Zero when a client has a request ready (it was cut short by the per-pass limit), else
    /// until the nearest deadline.
    private func pollTimeout(at now: ContinuousClock.Instant) -> Int32 {
        var nearest: ContinuousClock.Instant?
        for connection in connections.values {
            if connection.hasRequest { return 0 }
            if let deadline = connection.deadline(limits) { nearest = min(nearest ?? deadline, deadline) }
        }
        return nearest?.pollTimeout(from: now) ?? -1
    }

    private func collectOutbox() {
        let pending = shared.withLock { outbox in
            defer { outbox.pending = [:] }
            return outbox.pending
        }
        let now = ContinuousClock.now
        for (id, bytes) in pending {
            guard let connection = connections[id] else { continue }
            connection.queue(bytes, at: now)
            if connection.monitoring, connection.output.count > limits.monitorBacklog {
                logger.warning(
                    "dropping a monitor client that does not read (\(connection.output.count) bytes unread; \(connection.peer))"
                )
                disconnect(connection)
                continue
            }
            write(connection)
        }
    }

    private func acceptClients() {
        while true {
            let fd = acceptClient(listener, nonBlocking: true)
            if fd < 0 { return }
            guard let peer = ControlPeer(socket: fd) else {
                close(fd)
                continue
            }
            guard limits.admits(peer, open: connections.count) else {
                refuse(fd, peer)
                continue
            }
            if connections.count < limits.sharedConnections { full = false }
            lastConnection += 1
            connections[lastConnection] = ControlConnection(id: lastConnection, fd: fd, peer: peer, at: .now)
        }
    }

    /// Tells a client over the limit why, and closes its connection.
    private func refuse(_ fd: Int32, _ peer: ControlPeer) {
        if !full {
            full = true
            logger.warning(
                "control socket full (\(connections.count) connections open): refusing new ones until some close, first \(peer)"
            )
        }
        let reply = Self.line(.failure("too many clients: \(connections.count) connections are open; try again later"))
        // A new socket's buffer always has room for one line.
        _ = reply.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        close(fd)
    }

    /// Reads what the connection wants: a chunk at a time, and no more once a request is complete.
    private func read(_ connection: ControlConnection) {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while connection.wantsInput {
            let n = chunk.withUnsafeMutableBytes { recv(connection.fd, $0.baseAddress, $0.count, 0) }
            if n == 0 {
                connection.receiveEnd(at: .now)
                return
            }
            if n < 0 {
                if errno == EINTR { continue }
                if errno != EAGAIN && errno != EWOULDBLOCK { disconnect(connection) }
                return
            }
            connection.receive(chunk[..<n], at: .now)
        }
    }

    /// Answers the connection's buffered requests, at most ``ControlLimits/requestsPerPass``, each
    /// handed to the kernel before the next is taken; closes the connection when it is done.
    private func serveRequests(_ connection: ControlConnection) {
        var taken = 0
        while taken < limits.requestsPerPass, let request = connection.nextRequest(at: .now) {
            taken += 1
            switch request {
            case .line(let line):
                handle(line, from: connection)
            case .tooLong:
                respond(.failure("request longer than \(ControlProtocol.maximumRequestBytes) bytes"), to: connection)
            }
            write(connection)
            guard connections[connection.id] != nil else { return }
        }
        write(connection)
    }

    private func handle(_ line: [UInt8], from connection: ControlConnection) {
        let request: ControlRequest
        do {
            request = try ControlRequest(line: line)
        } catch {
            let commands = ControlCommand.allCases.map(\.rawValue).joined(separator: ", ")
            respond(.failure("malformed request: expected {\"command\": …} with one of \(commands)"), to: connection)
            return
        }
        switch request.command {
        case .reload:
            guard connection.peer.mayReload else {
                respond(
                    .failure("only root may reload netpathd (your uid is \(connection.peer.uid)); use sudo"),
                    to: connection
                )
                return
            }
            // The connection owes this reply until the main loop sends it back (`collectOutbox`).
            let id = connection.id
            reload { [weak self] reply in self?.enqueue(reply, to: id) }
        case .monitor:
            respond(ControlReply(ok: true, monitoring: true), to: connection)
            connection.startMonitoring(at: .now)
            shared.withLock { _ = $0.monitors.insert(connection.id) }
        case .probe:
            guard let probe else {
                respond(.failure("this agent does not probe connectivity"), to: connection)
                return
            }
            // Like reload: the connection owes this reply until the probes end (at most
            // [connectivity]'s timeout after the one in flight).
            let id = connection.id
            probe(request.interface) { [weak self] reply in self?.enqueue(reply, to: id) }
        case .status, .explain, .hooks:
            respond(answer(request), to: connection)
        }
    }

    private func respond(_ reply: ControlReply, to connection: ControlConnection) {
        connection.queue(Self.line(reply), at: .now)
    }

    /// Hands as much output to the kernel as it takes; closes the connection once it is done.
    private func write(_ connection: ControlConnection) {
        guard connections[connection.id] != nil else { return }
        while !connection.output.isEmpty {
            let n = connection.output.withUnsafeBytes {
                send(connection.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { return }
                disconnect(connection)
                return
            }
            connection.sent(n, at: .now)
        }
        if connection.isFinished { disconnect(connection) }
    }

    /// Closes the connections whose deadline has passed.
    private func expire(at now: ContinuousClock.Instant) {
        for connection in Array(connections.values) {
            guard let deadline = connection.deadline(limits), deadline <= now else { continue }
            let reason: String
            switch connection.phase {
            case .idle: reason = "no request within \(limits.idleTimeout)"
            case .receiving: reason = "request not complete within \(limits.requestTimeout)"
            default: reason = "reply not read within \(limits.requestTimeout)"
            }
            logger.info("closing a control connection (\(connection.peer)): \(reason)")
            disconnect(connection)
        }
    }

    private func disconnect(_ connection: ControlConnection) {
        guard connections.removeValue(forKey: connection.id) != nil else { return }
        shared.withLock { outbox in
            outbox.monitors.remove(connection.id)
            outbox.pending[connection.id] = nil
        }
        close(connection.fd)
    }
}
