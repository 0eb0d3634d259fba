// SPDX-License-Identifier: Apache-2.0

import NetPath
import Synchronization

/// A scriptable ``PathSource`` and ``ReachabilitySource`` for tests: code that uses
/// ``PathMonitor`` or ``HostMonitor`` runs against it without any network access.
///
/// Give it the path to start with, hand it to the monitor, wait until the code under test has
/// subscribed, then send what the "network" does. Everything it was asked is recorded.
///
/// ```swift
/// @Test func uploadsPauseOnCellular() async throws {
///     let network = MockPathSource(.satisfied(via: .wired("eth0")))
///     let uploader = Uploader(monitor: PathMonitor(policy: .default, source: network))
///     uploader.start()
///     try await network.waitForSubscribers(1)
///     try await network.deliver(.satisfied(via: .cellular("wwan0")))   // returns once it was handled
///     #expect(uploader.isPaused)
///     try await network.play([.wait(.milliseconds(50)), .path(.unsatisfied(.noInterface))])
/// }
/// ```
///
/// ``deliver(_:timeout:)-(NetworkPath,_)`` and ``waitForDelivery(timeout:)`` await the code under
/// test: they return once every monitor subscribed has handled what was sent (its handler
/// returned, or its iteration came back for the next value), so a test asserts right after,
/// without polling.
///
/// Two ways to script paths:
/// - ``send(_:)-(NetworkPath)`` gives every subscriber exactly that path, whatever its policy;
/// - ``send(_:)-(SystemState)`` gives each subscriber the path its own policy sees in that state,
///   evaluated by ``PathEvaluator`` as the kernel source would — so `PathMonitor(requiredInterfaceType:)`
///   and friends behave as they do for real.
///
/// Like a real source, it never gives a subscriber a value older than its initial one. Send from
/// one task at a time.
public final class MockPathSource: PathSource, ReachabilitySource, Sendable {
    /// One step of a script for ``play(_:)``.
    ///
    /// ```swift
    /// let script: [MockPathSource.Step] = [.path(.unsatisfied()), .wait(.milliseconds(100)), .finish(nil)]
    /// ```
    ///
    /// A test builds steps and does not switch over them: a new kind of step in a later version
    /// breaks no test.
    public enum Step: Sendable {
        /// Send this path to every path subscriber.
        case path(NetworkPath)
        /// Send each path subscriber the path its policy sees in this state.
        case state(SystemState)
        /// Send this answer to the subscribers of its host.
        case reachability(HostReachability)
        /// Wait this long.
        case wait(Duration)
        /// End every subscription, as a source that went away does.
        case finish((any Error)?)
    }

    /// A test's error for ``failNextSubscriptions(with:)`` and ``finish(throwing:)``.
    ///
    /// ```swift
    /// network.finish(throwing: MockPathSource.Failure("agent went away"))
    /// ```
    public struct Failure: Error, Hashable, Sendable, CustomStringConvertible {
        /// What went wrong.
        ///
        /// ```swift
        /// #expect((monitor.failure as? MockPathSource.Failure)?.description == "agent went away")
        /// ```
        public var description: String

        /// A failure with a description.
        ///
        /// ```swift
        /// let failure = MockPathSource.Failure("no agent")
        /// ```
        public init(_ description: String) { self.description = description }
    }

    private enum Content {
        case path(NetworkPath)
        case state(SystemState)

        func path(for policy: PathPolicy) -> NetworkPath {
            switch self {
            case .path(let path): return path
            case .state(let state): return PathEvaluator(policy: policy).path(for: state)
            }
        }
    }

    private struct State {
        var content: Content
        var reachability: [String: HostReachability] = [:]
        var nextID: UInt64 = 0
        var paths: [UInt64: (policy: PathPolicy, sink: SourceSink<NetworkPath>)] = [:]
        var hosts: [UInt64: (host: String, sink: SourceSink<HostReachability>)] = [:]
        var policies: [PathPolicy] = []
        var hostsAsked: [String] = []
        var startError: (any Error)?
        var waiters: [UInt64: (count: Int, continuation: CheckedContinuation<Void, any Error>)] = [:]

        var subscriberCount: Int { paths.count + hosts.count }

        /// Resumes the waiters whose count is reached; the caller resumes them outside the lock.
        mutating func satisfiedWaiters() -> [CheckedContinuation<Void, any Error>] {
            let ready = waiters.filter { subscriberCount >= $0.value.count }
            for id in ready.keys { waiters[id] = nil }
            return ready.values.map(\.continuation)
        }
    }

    private let state: Mutex<State>

    /// A source whose subscribers all start with `initial`.
    ///
    /// ```swift
    /// let network = MockPathSource(.unsatisfied(.noInterface))
    /// ```
    public init(_ initial: NetworkPath = .satisfied(via: .wired())) {
        state = Mutex(State(content: .path(initial)))
    }

    /// A source that evaluates `state` for each subscriber's policy.
    ///
    /// ```swift
    /// let network = MockPathSource(state: SystemState(interfaces: [
    ///     Interface(index: 2, name: "eth0", type: .wired, addresses: ["192.0.2.10/24"], defaultRoutes: [.init(via: "192.0.2.1")]),
    /// ]))
    /// ```
    public init(state systemState: SystemState) {
        state = Mutex(State(content: .state(systemState)))
    }

    // MARK: - PathSource, ReachabilitySource

    /// Records the policy and starts the subscription with the scripted path (or the state's
    /// path for `policy`). Throws what ``failNextSubscriptions(with:)`` set.
    ///
    /// ```swift
    /// let path = try network.currentPath(for: .default)
    /// ```
    public func subscribe(
        to policy: PathPolicy,
        sink: SourceSink<NetworkPath>
    ) throws -> SourceSubscription<NetworkPath> {
        let (id, initial, ready) = try state.withLock {
            state throws -> (UInt64, NetworkPath, [CheckedContinuation<Void, any Error>]) in
            if let error = state.startError { throw error }
            state.nextID += 1
            state.paths[state.nextID] = (policy, sink)
            state.policies.append(policy)
            return (state.nextID, state.content.path(for: policy), state.satisfiedWaiters())
        }
        for waiter in ready { waiter.resume() }
        return SourceSubscription(initialValue: initial) { [self] in
            _ = state.withLock { $0.paths.removeValue(forKey: id) }
        }
    }

    /// Records the host and starts the subscription with its scripted answer (unresolved if none).
    ///
    /// ```swift
    /// let answer = try network.subscribe(toHost: "api.example.com", sink: .discarding).initialValue
    /// ```
    public func subscribe(
        toHost host: String,
        sink: SourceSink<HostReachability>
    ) throws -> SourceSubscription<HostReachability> {
        let (id, initial, ready) = try state.withLock {
            state throws -> (UInt64, HostReachability, [CheckedContinuation<Void, any Error>]) in
            if let error = state.startError { throw error }
            state.nextID += 1
            state.hosts[state.nextID] = (host, sink)
            state.hostsAsked.append(host)
            let answer = state.reachability[host] ?? HostReachability(host: host, status: .unresolved)
            return (state.nextID, answer, state.satisfiedWaiters())
        }
        for waiter in ready { waiter.resume() }
        return SourceSubscription(initialValue: initial) { [self] in
            _ = state.withLock { $0.hosts.removeValue(forKey: id) }
        }
    }

    // MARK: - Scripting

    /// Sends `path` to every path subscriber; later subscribers start with it.
    ///
    /// ```swift
    /// network.send(.satisfied(via: .wifi("wlan0")))
    /// ```
    public func send(_ path: NetworkPath) {
        let deliveries = state.withLock { state in
            state.content = .path(path)
            return state.paths.sorted { $0.key < $1.key }.map { ($0.value.sink, path) }
        }
        for (sink, path) in deliveries { sink.yield(path) }
    }

    /// Sends each path subscriber the path its policy sees in `systemState`; later subscribers
    /// start with their policy's path in it.
    ///
    /// ```swift
    /// network.send(SystemState(interfaces: [Interface(index: 2, name: "eth0", type: .wired, carrier: false)]))
    /// ```
    public func send(_ systemState: SystemState) {
        let deliveries = state.withLock { state in
            state.content = .state(systemState)
            return state.paths.sorted { $0.key < $1.key }.map {
                ($0.value.sink, state.content.path(for: $0.value.policy))
            }
        }
        for (sink, path) in deliveries { sink.yield(path) }
    }

    /// Sends `reachability` to the subscribers of its host; later subscribers start with it.
    /// A host never given an answer starts as ``HostReachability/Status/unresolved``.
    ///
    /// ```swift
    /// network.send(HostReachability(host: "api.example.com", status: .unreachable, address: "203.0.113.7"))
    /// ```
    public func send(_ reachability: HostReachability) {
        let sinks = state.withLock { state in
            state.reachability[reachability.host] = reachability
            return state.hosts.sorted { $0.key < $1.key }.filter { $0.value.host == reachability.host }.map(
                \.value.sink
            )
        }
        for sink in sinks { sink.yield(reachability) }
    }

    /// Sends `path` to every path subscriber, then waits until each monitor has handled it: its
    /// `pathUpdateHandler` (and delegate and notification) returned, or its iteration came back
    /// for the next path. Assert on what the code under test did right after, without polling.
    ///
    /// - Throws: ``Failure`` when `timeout` passes first.
    ///
    /// ```swift
    /// try await network.deliver(.satisfied(via: .cellular("wwan0")))
    /// #expect(uploader.isPaused)
    /// ```
    public func deliver(_ path: NetworkPath, timeout: Duration = .seconds(10)) async throws {
        send(path)
        try await waitForDelivery(timeout: timeout)
    }

    /// Sends each path subscriber the path its policy sees in `systemState`, then waits until
    /// each monitor has handled it, as ``deliver(_:timeout:)-(NetworkPath,_)`` does.
    ///
    /// ```swift
    /// try await network.deliver(SystemState(interfaces: []))
    /// ```
    public func deliver(_ systemState: SystemState, timeout: Duration = .seconds(10)) async throws {
        send(systemState)
        try await waitForDelivery(timeout: timeout)
    }

    /// Sends `reachability` to the subscribers of its host, then waits until each monitor has
    /// handled it.
    ///
    /// ```swift
    /// try await network.deliver(HostReachability(host: "api.example.com", status: .unreachable))
    /// ```
    public func deliver(_ reachability: HostReachability, timeout: Duration = .seconds(10)) async throws {
        send(reachability)
        try await waitForDelivery(timeout: timeout)
    }

    /// Waits until every value sent so far has been handled by every subscriber that is a
    /// ``PathMonitor`` or ``HostMonitor`` (started with a queue, or iterated): a handler
    /// returned, or the iteration asked for the next value. A repeated value a monitor drops
    /// counts as handled. Subscribers with sinks of their own are not waited for.
    ///
    /// - Throws: ``Failure`` when `timeout` passes first, saying how many values are unhandled.
    ///
    /// ```swift
    /// network.send(.unsatisfied(.noRoute))
    /// try await network.waitForDelivery()
    /// ```
    public func waitForDelivery(timeout: Duration = .seconds(10)) async throws {
        let counts = state.withLock { state in
            state.paths.values.compactMap(\.sink.deliveries) + state.hosts.values.compactMap(\.sink.deliveries)
        }
        let deadline = ContinuousClock.now + timeout
        for count in counts {
            let left = max(deadline - ContinuousClock.now, .zero)
            guard await count.waitUntilHandled(timeout: left) else {
                let pending = counts.map(\.pending).reduce(0, +)
                throw Failure("timed out after \(timeout) waiting for \(pending) value(s) to be handled")
            }
        }
    }

    /// Ends every subscription, as a source that went away does: iterations end, started
    /// monitors stop, and `failure` says `error`. New subscriptions still work.
    ///
    /// ```swift
    /// network.finish(throwing: MockPathSource.Failure("agent went away"))
    /// ```
    public func finish(throwing error: (any Error)? = nil) {
        let (paths, hosts) = state.withLock { state in
            defer {
                state.paths = [:]
                state.hosts = [:]
            }
            return (state.paths.values.map(\.sink), state.hosts.values.map(\.sink))
        }
        for sink in paths { sink.finish(throwing: error) }
        for sink in hosts { sink.finish(throwing: error) }
    }

    /// Makes subscriptions throw `error` (a source that cannot start) until called with `nil`.
    ///
    /// ```swift
    /// network.failNextSubscriptions(with: MockPathSource.Failure("no agent"))
    /// ```
    public func failNextSubscriptions(with error: (any Error)?) {
        state.withLock { $0.startError = error }
    }

    /// Runs `steps` in order, sleeping at each ``Step/wait(_:)``.
    ///
    /// ```swift
    /// try await network.play([.path(.unsatisfied()), .wait(.seconds(1)), .path(.satisfied(via: .wifi()))])
    /// ```
    public func play(_ steps: [Step]) async throws {
        for step in steps {
            switch step {
            case .path(let path): send(path)
            case .state(let systemState): send(systemState)
            case .reachability(let reachability): send(reachability)
            case .wait(let duration): try await Task.sleep(for: duration)
            case .finish(let error): finish(throwing: error)
            }
        }
    }

    // MARK: - What happened

    /// The number of active subscriptions (paths and hosts).
    ///
    /// ```swift
    /// #expect(network.subscriberCount == 0, "the consumer stopped monitoring")
    /// ```
    public var subscriberCount: Int { state.withLock { $0.subscriberCount } }

    /// Every policy subscribed to so far, in order (cancelled ones included).
    ///
    /// ```swift
    /// #expect(network.subscribedPolicies.map(\.name) == ["default"])
    /// ```
    public var subscribedPolicies: [PathPolicy] { state.withLock { $0.policies } }

    /// Every host subscribed to so far, in order.
    ///
    /// ```swift
    /// #expect(network.subscribedHosts == ["api.example.com"])
    /// ```
    public var subscribedHosts: [String] { state.withLock { $0.hostsAsked } }

    /// Waits until at least `count` subscriptions are active: the code under test has started
    /// monitoring, so what is sent next reaches it.
    ///
    /// - Throws: ``Failure`` when `timeout` passes first.
    ///
    /// ```swift
    /// try await network.waitForSubscribers(1)
    /// ```
    public func waitForSubscribers(_ count: Int = 1, timeout: Duration = .seconds(10)) async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await withCheckedThrowingContinuation { continuation in
                    let ready = self.state.withLock { state -> Bool in
                        if state.subscriberCount >= count { return true }
                        state.waiters[id] = (count, continuation)
                        return false
                    }
                    if ready { continuation.resume() }
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                // Still waiting (not resumed by a subscription, not cancelled by success): fail.
                guard let waiter = self.state.withLock({ $0.waiters.removeValue(forKey: id) }) else { return }
                let failure = Failure("timed out after \(timeout) waiting for \(count) subscriber(s)")
                waiter.continuation.resume(throwing: failure)
                throw failure
            }
            try await group.next()
            group.cancelAll()
        }
    }
}
