// SPDX-License-Identifier: Apache-2.0

import Foundation
import Logging
import NetPathConfig
import NetPathControl
import NetPathCore
import NetPathLinux
import Synchronization

/// A running `netpathd`, as a ``PathSource``: the paths its configured policies chose, followed
/// over its control socket, so an app sees exactly the path the administrator's policy chose.
///
/// ```swift
/// // The agent's "default" policy, with its interface overrides and preferences:
/// for await path in PathMonitor(policy: .init(name: "default"), source: AgentPathSource()).paths {
///     print(path.status, path.primary?.name ?? "-")
/// }
///
/// // Evaluate locally when no agent runs (or it has no such policy), instead of failing:
/// let source = AgentPathSource(fallback: .local(.shared))
/// let monitor = PathMonitor(policy: PathPolicy(name: "uplink", prefer: [.wired, .wifi]), source: source)
/// monitor.start(queue: .main)
/// ```
///
/// Paths that come from the agent have ``NetworkPath/origin`` ``NetworkPath/Origin/agent``; a
/// ``Fallback/local(_:)`` subscription's paths say ``NetworkPath/Origin/kernel``.
///
/// A subscription selects the agent's policy **by name**: only the ``PathPolicy/name`` of the
/// policy given to `subscribe` (or to ``PathMonitor``) is used, and its other fields are ignored
/// while the agent answers. The initial value comes from a `status` request; later paths are the
/// path events of that policy on a `monitor` connection. Every subscription to one source shares
/// that one connection and one thread doing blocking reads (never a thread of Swift's cooperative
/// pool); the first subscription opens it and the last cancellation shuts it down.
///
/// When the agent cannot be followed at subscription time — nothing answers on the socket, or
/// the agent has no policy of that name — ``fallback`` decides: ``Fallback/fail`` throws an
/// ``AgentPathSourceError`` saying how to fix it; ``Fallback/local(_:)`` subscribes to the given
/// ``KernelPathSource`` instead, which evaluates the given policy's **own** requirements (require,
/// prohibit, metered, prefer, target) with that source's classification — not the agent's
/// configuration, its `[[interface]]` overrides or its policy of the same name.
///
/// When the agent goes away while subscribed (it stopped, or dropped this client), every
/// subscription ends with ``AgentPathSourceError/Code/agentStopped``: monitors end their
/// iterations and report it in `failure`. The source does not switch to local evaluation then,
/// on purpose: the paths would silently start following other rules (the app's policy instead
/// of the administrator's), and an app could not tell a path change from a change of judge.
/// Start the monitor again to follow a restarted agent (or fall back, as ``fallback`` says).
///
/// - Important: paths come from the agent's events, which its `settle` hold-down may delay; the
///   initial value is the agent's view when the connection opened, or the newest event since.
public final class AgentPathSource: PathSource, Sendable {
    /// What `subscribe` does when the agent cannot be followed: none answers on the socket, this
    /// process may not use the socket, or the agent has no policy of the requested name.
    ///
    /// ```swift
    /// let strict = AgentPathSource(fallback: .fail)
    /// let lenient = AgentPathSource(fallback: .local(.shared))
    /// ```
    ///
    /// Complete: without an agent a source either fails or evaluates locally, so this enum will
    /// not grow.
    public enum Fallback: Sendable {
        /// Throw an ``AgentPathSourceError`` (``AgentPathSourceError/Code/noAgent``,
        /// ``AgentPathSourceError/Code/permissionDenied`` or
        /// ``AgentPathSourceError/Code/unknownPolicy``) whose message says what to do.
        case fail
        /// Subscribe to this kernel source instead: the policy's own requirements, evaluated in
        /// this process. The subscription stays local until it is cancelled.
        case local(KernelPathSource)
    }

    /// The agent's control socket.
    ///
    /// ```swift
    /// print(AgentPathSource().socketPath)   // "/run/netpath/netpathd.sock" unless configured
    /// ```
    public let socketPath: String
    /// What happens when no agent answers or it has no such policy.
    ///
    /// ```swift
    /// if case .local = source.fallback { print("falls back to local evaluation") }
    /// ```
    public let fallback: Fallback
    /// How long subscribing waits for each answer of the agent.
    ///
    /// ```swift
    /// print(AgentPathSource().replyTimeout)   // 10.0 seconds
    /// ```
    public let replyTimeout: Duration
    let logger: Logger

    // `lifecycle` serialises opening the connection (blocking socket I/O) so that concurrent
    // first subscribers share one connection; it is never held while a sink runs. `state` is the
    // short-lived lock for everything the reader thread shares with subscribers.
    private let lifecycle = Mutex<Void>(())
    private let state = Mutex(State())

    private struct State {
        var connection: Connection?
        /// The newest path of each agent policy: the `status` answer, updated by each path event.
        var latest: [String: NetworkPath] = [:]
        var subscribers: [UInt64: Subscriber] = [:]
        var nextID: UInt64 = 0

        /// Adds a subscriber for the agent's policy `name` on the open connection; returns its
        /// id and current path, or `nil` when no connection is open or the policy is unknown.
        mutating func register(_ name: String, _ sink: SourceSink<NetworkPath>) -> (UInt64, NetworkPath)? {
            guard connection != nil, let path = latest[name] else { return nil }
            nextID += 1
            subscribers[nextID] = Subscriber(policy: name, sink: sink, last: path)
            return (nextID, path)
        }

        /// Detaches the connection once nobody uses it; the caller stops it.
        mutating func detachIfIdle() -> Connection? {
            guard subscribers.isEmpty, let idle = connection else { return nil }
            connection = nil
            latest = [:]
            return idle
        }
    }

    private struct Subscriber {
        var policy: String
        var sink: SourceSink<NetworkPath>
        var last: NetworkPath
    }

    /// A source that follows the agent listening on `socketPath`.
    ///
    /// - Parameters:
    ///   - socketPath: the control socket; by default the `control_socket` of
    ///     `/etc/netpath/netpath.toml`, else `/run/netpath/netpathd.sock` (see ``configuredSocketPath()``).
    ///   - fallback: what `subscribe` does when the agent cannot be followed; ``Fallback/fail``
    ///     by default.
    ///   - replyTimeout: how long subscribing waits for each of the agent's answers (the
    ///     `monitor` acknowledgement, the `status` report) before it fails with
    ///     ``AgentPathSourceError/Code/notResponding``.
    ///   - logger: where falling back and the agent going away are reported.
    ///
    /// ```swift
    /// let source = AgentPathSource(socketPath: "/run/netpath/netpathd.sock", fallback: .local(.shared))
    /// ```
    public init(
        socketPath: String? = nil,
        fallback: Fallback = .fail,
        // ControlClient.replyTimeout(for: .status); the client is not public API, so spelled out.
        replyTimeout: Duration = .seconds(10),
        logger: Logger = Logger(label: "netpath.agent-source")
    ) {
        self.socketPath = socketPath ?? Self.configuredSocketPath()
        self.fallback = fallback
        self.replyTimeout = replyTimeout
        self.logger = logger
    }

    /// The socket `netpathd` listens on here: the `control_socket` of the configuration file
    /// (`/etc/netpath/netpath.toml`) when it exists and is valid, else the built-in default.
    ///
    /// ```swift
    /// let path = AgentPathSource.configuredSocketPath()   // "/run/netpath/netpathd.sock"
    /// ```
    public static func configuredSocketPath() -> String {
        if case .success(let loaded) = ConfigurationFile.load(path: nil) {
            return loaded.configuration.agent.controlSocket
        }
        return Configuration.Agent().controlSocket
    }

    /// Whether the `monitor` connection to the agent is open (some subscription follows it).
    ///
    /// ```swift
    /// monitor.cancel()
    /// print(source.isConnected)   // false once the last subscriber is gone
    /// ```
    public var isConnected: Bool { state.withLock { $0.connection != nil } }

    /// The number of subscriptions following the agent (local fallbacks are not counted).
    ///
    /// ```swift
    /// print(source.subscriberCount)
    /// ```
    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// Follows the agent's policy named `policy.name`: the initial value is the agent's current
    /// path for it, and each path event of that policy follows. The first subscription connects
    /// (a `monitor` connection, then a `status` request); later ones share the connection.
    ///
    /// - Throws: ``AgentPathSourceError``: ``AgentPathSourceError/Code/noAgent``,
    ///   ``AgentPathSourceError/Code/permissionDenied`` or
    ///   ``AgentPathSourceError/Code/unknownPolicy`` with ``Fallback/fail``;
    ///   ``AgentPathSourceError/Code/protocolError`` when the agent answers something unreadable,
    ///   ``AgentPathSourceError/Code/notResponding`` when it does not answer in time (whatever
    ///   the fallback: that agent is broken, not absent). With ``Fallback/local(_:)``,
    ///   whatever the kernel source throws.
    ///
    /// ```swift
    /// let subscription = try AgentPathSource().subscribe(to: .init(name: "default"), sink: SourceSink { print($0.status) })
    /// print(subscription.initialValue.primary?.name ?? "-")
    /// ```
    public func subscribe(
        to policy: PathPolicy,
        sink: SourceSink<NetworkPath>
    ) throws -> SourceSubscription<NetworkPath> {
        let failure: AgentPathSourceError
        do {
            return try follow(policy.name, sink: sink)
        } catch {
            failure = error
        }
        // Not allowed to use the socket is, for this process, the same as no agent to follow.
        guard [.noAgent, .permissionDenied, .unknownPolicy].contains(failure.code), case .local(let kernel) = fallback
        else {
            throw failure
        }
        logger.notice(
            "not following netpathd; evaluating the policy locally",
            metadata: ["policy": "\(policy.name)", "reason": "\(failure)"]
        )
        return try kernel.subscribe(to: policy, sink: sink)
    }

    // MARK: - Following

    private func follow(
        _ name: String,
        sink: SourceSink<NetworkPath>
    ) throws(AgentPathSourceError) -> SourceSubscription<NetworkPath> {
        let (id, initial) = try lifecycle.withLock { _ throws(AgentPathSourceError) -> (UInt64, NetworkPath) in
            if state.withLock({ $0.connection == nil }) { try connect(requiring: name) }
            if let registered = state.withLock({ $0.register(name, sink) }) { return registered }
            // Not among the agent's policies when the connection opened: it may have been added
            // by a reload since, so ask again before calling it unknown.
            let report = try status()
            guard report.paths.contains(where: { $0.policy == name }) else {
                throw AgentPathSourceError(
                    .unknownPolicy,
                    socketPath: socketPath,
                    policy: name,
                    known: report.paths.map(\.policy)
                )
            }
            let registered = state.withLock { state -> (UInt64, NetworkPath)? in
                for path in report.paths where state.latest[path.policy] == nil {
                    state.latest[path.policy] = path.fromAgent
                }
                return state.register(name, sink)
            }
            // Nothing registered: the connection closed while this subscription was being made.
            guard let registered else {
                throw AgentPathSourceError(
                    .noAgent,
                    socketPath: socketPath,
                    policy: name,
                    reason: "netpathd stopped while subscribing"
                )
            }
            return registered
        }
        return SourceSubscription(initialValue: initial) { [self] in unregister(id) }
    }

    /// Opens the `monitor` connection, then asks for the status (in that order, so no event falls
    /// between the two), records every policy's path and starts the reader thread. Opens nothing
    /// when the agent has no policy `name`.
    private func connect(requiring name: String) throws(AgentPathSourceError) {
        let client: ControlClient
        do {
            client = try ControlClient(path: socketPath)
            let reply = try client.request(.monitor, timeout: replyTimeout)
            guard reply.ok, reply.monitoring == true else {
                throw AgentPathSourceError(
                    .protocolError,
                    socketPath: socketPath,
                    reason: reply.error ?? "monitor was not acknowledged"
                )
            }
        } catch {
            throw AgentPathSourceError(error, socketPath: socketPath)
        }
        let report = try status()
        guard report.paths.contains(where: { $0.policy == name }) else {
            throw AgentPathSourceError(
                .unknownPolicy,
                socketPath: socketPath,
                policy: name,
                known: report.paths.map(\.policy)
            )
        }
        let connection = Connection(client: client)
        state.withLock { state in
            state.connection = connection
            state.latest = Dictionary(
                report.paths.map { ($0.policy, $0.fromAgent) },
                uniquingKeysWith: { first, _ in first }
            )
        }
        // The reader blocks in recv(2): a thread of its own, off the cooperative pool.
        guard OSThread.detach({ [self] in read(connection) }) else {
            throw AgentPathSourceError(.protocolError, socketPath: socketPath, reason: "cannot start a reader thread")
        }
        logger.debug("following netpathd", metadata: ["socket": "\(socketPath)"])
    }

    /// One `status` request on a connection of its own.
    private func status() throws(AgentPathSourceError) -> StatusReport {
        do {
            let reply = try ControlClient(path: socketPath).request(.status, timeout: replyTimeout)
            guard reply.ok, let report = reply.status else {
                throw AgentPathSourceError(
                    .protocolError,
                    socketPath: socketPath,
                    reason: reply.error ?? "status without a report"
                )
            }
            return report
        } catch {
            throw AgentPathSourceError(error, socketPath: socketPath)
        }
    }

    private func unregister(_ id: UInt64) {
        let idle = state.withLock { state -> Connection? in
            state.subscribers[id] = nil
            return state.detachIfIdle()
        }
        idle?.stop()
    }

    // MARK: - The reader thread

    /// Reads events until the connection ends; runs on the connection's own thread.
    private func read(_ connection: Connection) {
        var failure = AgentPathSourceError(.agentStopped, socketPath: socketPath, reason: "connection closed")
        do {
            while let line = try connection.client.readLine() {
                if let error = receive(line, on: connection) {
                    failure = error
                    break
                }
            }
        } catch {
            failure = AgentPathSourceError(.agentStopped, socketPath: socketPath, reason: "connection lost: \(error)")
        }
        guard !connection.isStopping else { return }
        let sinks = state.withLock { state -> [SourceSink<NetworkPath>] in
            guard state.connection === connection else { return [] }
            defer {
                state.connection = nil
                state.latest = [:]
                state.subscribers = [:]
            }
            return state.subscribers.keys.sorted().compactMap { state.subscribers[$0]?.sink }
        }
        logger.warning(
            "stopped following netpathd",
            metadata: ["reason": "\(failure)", "subscriptions": "\(sinks.count)"]
        )
        for sink in sinks { sink.finish(throwing: failure) }
    }

    /// Delivers a path event to the subscribers of its policy; other events are ignored.
    /// Returns an error when the line cannot be understood.
    private func receive(_ line: String, on connection: Connection) -> AgentPathSourceError? {
        // Interface events are not needed: look at the scope first, so that an interface event
        // this version cannot decode (a newer agent) does not end the subscriptions.
        let decoder = JSONDecoder()
        guard let probe = try? decoder.decode(EventScope.self, from: Data(line.utf8)) else {
            return AgentPathSourceError(
                .protocolError,
                socketPath: socketPath,
                reason: "unreadable event line: \(line.prefix(200))"
            )
        }
        guard probe.scope == Event.Scope.path.rawValue else { return nil }
        let event: Event
        do {
            event = try decoder.decode(Event.self, from: Data(line.utf8))
        } catch {
            return AgentPathSourceError(
                .protocolError,
                socketPath: socketPath,
                reason: "unreadable path event: \(error)"
            )
        }
        guard let path = event.path?.fromAgent else { return nil }
        let name = event.policy ?? path.policy
        let deliveries = state.withLock { state -> [SourceSink<NetworkPath>] in
            guard state.connection === connection else { return [] }
            state.latest[name] = path
            var sinks: [SourceSink<NetworkPath>] = []
            for id in state.subscribers.keys.sorted() {
                guard var subscriber = state.subscribers[id], subscriber.policy == name, subscriber.last != path else {
                    continue
                }
                subscriber.last = path
                state.subscribers[id] = subscriber
                sinks.append(subscriber.sink)
            }
            return sinks
        }
        for sink in deliveries { sink.yield(path) }
        return nil
    }

    /// The one field read before deciding whether an event line matters.
    private struct EventScope: Decodable {
        var scope: String
    }
}

extension AgentPathSource {
    /// The `monitor` connection and whether it is being stopped.
    final class Connection: @unchecked Sendable {
        // @unchecked: `client` is used by the reader thread only (`readLine`), except for
        // `shutdown()`, which only touches the descriptor and is safe from any thread; the
        // client stays alive (and its descriptor open) as long as the reader holds this object.
        let client: ControlClient
        private let stopping = Mutex(false)

        init(client: ControlClient) {
            self.client = client
        }

        var isStopping: Bool { stopping.withLock { $0 } }

        /// Makes the reader's blocked `readLine()` return; the thread then exits and the
        /// descriptor is closed when it lets go of the connection. Does not wait for that, so it
        /// is safe from a sink (on the reader thread itself) and never blocks the caller.
        func stop() {
            stopping.withLock { $0 = true }
            client.shutdown()
        }
    }
}

/// Why an ``AgentPathSource`` could not follow the agent, or stopped following it.
///
/// ```swift
/// if let error = monitor.failure as? AgentPathSourceError, error.code == .agentStopped {
///     print(error)   // "netpathd stopped (connection closed) …"
/// }
/// ```
public struct AgentPathSourceError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure.
    ///
    /// ```swift
    /// switch error.code { case .noAgent: startAgent(); default: break }
    /// ```
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case noAgent = "no agent"
            case unknownPolicy = "unknown policy"
            case agentStopped = "agent stopped"
            case protocolError = "protocol error"
            case notResponding = "not responding"
            case untrustedAgent = "untrusted agent"
            case permissionDenied = "permission denied"
        }

        private let base: Base

        private init(_ base: Base) {
            self.base = base
        }

        /// Nothing answers on the socket: netpathd is not running (or uses another socket).
        ///
        /// ```swift
        /// let code = AgentPathSourceError.Code.noAgent
        /// ```
        public static let noAgent = Code(.noAgent)
        /// The agent runs but has no policy of the requested name.
        ///
        /// ```swift
        /// let code = AgentPathSourceError.Code.unknownPolicy
        /// ```
        public static let unknownPolicy = Code(.unknownPolicy)
        /// The agent went away while it was followed (its connection closed).
        ///
        /// ```swift
        /// let code = AgentPathSourceError.Code.agentStopped
        /// ```
        public static let agentStopped = Code(.agentStopped)
        /// The agent answered something this library cannot read.
        ///
        /// ```swift
        /// let code = AgentPathSourceError.Code.protocolError
        /// ```
        public static let protocolError = Code(.protocolError)
        /// The agent accepted a request but did not answer in time: it runs but is stuck.
        ///
        /// ```swift
        /// let code = AgentPathSourceError.Code.notResponding
        /// ```
        public static let notResponding = Code(.notResponding)
        /// Another user's process listens on the socket, not netpathd: nothing it says is believed.
        ///
        /// ```swift
        /// let code = AgentPathSourceError.Code.untrustedAgent
        /// ```
        public static let untrustedAgent = Code(.untrustedAgent)
        /// This process may not connect to the socket: it is root's and the agent's
        /// `control_group`'s, and this process is in neither.
        ///
        /// ```swift
        /// let code = AgentPathSourceError.Code.permissionDenied
        /// ```
        public static let permissionDenied = Code(.permissionDenied)

        /// The code's name.
        ///
        /// ```swift
        /// print(AgentPathSourceError.Code.noAgent)   // "no agent"
        /// ```
        public var description: String { base.rawValue }
    }

    /// The kind of failure.
    ///
    /// ```swift
    /// if error.code == .unknownPolicy { print(error.knownPolicies) }
    /// ```
    public let code: Code
    /// The control socket the source talked to.
    ///
    /// ```swift
    /// print(error.socketPath)
    /// ```
    public let socketPath: String
    /// The policy name that was requested, when the failure concerns one.
    ///
    /// ```swift
    /// print(error.policy ?? "-")
    /// ```
    public let policy: String?
    /// For ``Code/unknownPolicy``: the policies the agent has.
    ///
    /// ```swift
    /// print(error.knownPolicies.joined(separator: ", "))
    /// ```
    public let knownPolicies: [String]
    /// The underlying reason: the system's error, what the agent said, what was unreadable.
    ///
    /// ```swift
    /// print(error.reason)   // "No such file or directory"
    /// ```
    public let reason: String

    init(_ code: Code, socketPath: String, policy: String? = nil, known: [String] = [], reason: String = "") {
        self.code = code
        self.socketPath = socketPath
        self.policy = policy
        self.knownPolicies = known
        self.reason = reason
    }

    /// Wraps a failure of the control client (or passes an ``AgentPathSourceError`` through).
    init(_ error: any Error, socketPath: String) {
        switch error {
        case let error as AgentPathSourceError:
            self = error
        case ControlClient.Failure.noAgent(_, let reason):
            self.init(.noAgent, socketPath: socketPath, reason: reason)
        case ControlClient.Failure.protocolError(let message):
            self.init(.protocolError, socketPath: socketPath, reason: message)
        case ControlClient.Failure.noReply(_, let timeout):
            self.init(.notResponding, socketPath: socketPath, reason: "no reply within \(timeout)")
        case ControlClient.Failure.untrustedAgent(_, let uid):
            self.init(.untrustedAgent, socketPath: socketPath, reason: "served by uid \(uid), not by root")
        case ControlClient.Failure.permissionDenied:
            self.init(.permissionDenied, socketPath: socketPath, reason: "permission denied")
        default:
            self.init(.protocolError, socketPath: socketPath, reason: "\(error)")
        }
    }

    /// What happened and what to do, for people.
    ///
    /// ```swift
    /// print(error.description)
    /// ```
    public var description: String {
        switch code {
        case .noAgent:
            return "no netpathd is answering on \(socketPath) (\(reason)); start netpathd (systemctl start netpathd), "
                + "or use AgentPathSource(fallback: .local(.shared)) to evaluate the policy locally"
        case .unknownPolicy:
            let known = knownPolicies.isEmpty ? "none" : knownPolicies.map { "\"\($0)\"" }.joined(separator: ", ")
            return "netpathd on \(socketPath) has no policy named \"\(policy ?? "")\" (its policies: \(known)); "
                + "add a [[policy]] with that name to its configuration, or follow one of those"
        case .notResponding:
            return "netpathd on \(socketPath) accepted the connection but did not answer (\(reason)); it may be stuck: "
                + "see its log (journalctl -u netpathd)"
        case .permissionDenied:
            return "permission denied on \(socketPath): only root and the members of netpathd's control_group may "
                + "follow the agent; join that group, or use AgentPathSource(fallback: .local(.shared)) to evaluate "
                + "the policy locally"
        case .untrustedAgent:
            return "refusing to follow \(socketPath): it is \(reason); another user may have taken the agent's "
                + "socket (check its directory, and restart netpathd)"
        case .agentStopped:
            let detail = reason.isEmpty ? "connection closed" : reason
            return "netpathd stopped (\(detail)) on \(socketPath); its paths are no longer followed: "
                + "start the monitor again once netpathd runs"
        default:
            return "talking to netpathd on \(socketPath) failed: \(reason)"
        }
    }
}

extension NetworkPath {
    /// The path as the agent reported it, marked as the agent's.
    fileprivate var fromAgent: NetworkPath {
        var path = self
        path.origin = .agent
        return path
    }
}
