// SPDX-License-Identifier: Apache-2.0

import Dispatch
import NetPathCore
import NetPathLinux
import Synchronization

extension KernelPathSource: ReachabilitySource {
    /// Follows whether the kernel has a route to `host`, through which interface, and whether
    /// it is metered — by asking the kernel (`ip route get`, `ip rule` applied), again only when
    /// routing changed: no packet is sent.
    ///
    /// Returns at once: a host name is resolved by the source's resolver (with the source's
    /// `resolve`, `getaddrinfo` by default), on a thread of its own. Until its first answer the
    /// reachability is ``HostReachability/Status/unresolved`` with
    /// ``HostReachability/UnresolvedReason/lookingUp`` (unless another subscription already
    /// follows the name: its answer is shared); the answer then arrives as a change. The answer is
    /// kept for its lifetime and looked up again when the path to the name servers changes. An
    /// address literal is never resolved. Route changes are re-evaluated against the addresses
    /// already resolved.
    ///
    /// ```swift
    /// let subscription = try KernelPathSource.shared.subscribe(toHost: "192.0.2.80", sink: SourceSink { print($0.status) })
    /// print(subscription.initialValue.interface?.name ?? "no route")
    /// ```
    public func subscribe(
        toHost host: String,
        sink: SourceSink<HostReachability>
    ) throws -> SourceSubscription<HostReachability> {
        let tracker = HostTracker(host: host, sink: sink)
        let (id, run) = try register { state in
            let id = state.makeID()
            state.hosts[id] = tracker
            return id
        }
        // On the run's queue, before any later delivery to the tracker: it sees readings in
        // kernel order. Only the resolver's current answer is read, so this never waits for DNS.
        let initial = run.onQueue { tracker.start(run.read()) }
        return SourceSubscription(initialValue: initial) { [self] in unregister(id) }
    }
}

/// Follows one host for a ``KernelPathSource``: asks the engine for its routes in each reading,
/// with the addresses the run's resolver has for it, on its own serial queue.
final class HostTracker: Sendable {
    let host: String
    private let sink: SourceSink<HostReachability>
    private let queue: DispatchQueue
    private let literal: IPAddress?
    private let state = Mutex<State>(State())

    private struct State {
        /// The newest reading not yet evaluated; newer readings replace older ones.
        var pending: KernelPathSource.Run.Reading?
        var scheduled = false
        /// Set by ``start(_:)``: readings distributed before it are older than the first one.
        var started = false
        var last: HostReachability?
        var cancelled = false
    }

    init(host: String, sink: SourceSink<HostReachability>) {
        self.host = host
        self.sink = sink
        self.literal = IPAddress(host)
        self.queue = DispatchQueue(label: "netpath.host-tracker")
    }

    /// Evaluates the first reading and returns it. Called on the run's queue; never blocks.
    func start(_ reading: KernelPathSource.Run.Reading) -> HostReachability {
        let value = evaluate(reading)
        state.withLock {
            $0.started = true
            $0.last = value
        }
        return value
    }

    /// Queues a reading; called on the run's queue for every change.
    func update(_ reading: KernelPathSource.Run.Reading) {
        let schedule = state.withLock { state in
            guard state.started, !state.cancelled else { return false }
            state.pending = reading
            defer { state.scheduled = true }
            return !state.scheduled
        }
        guard schedule else { return }
        queue.async { [self] in
            let reading = state.withLock { state in
                defer {
                    state.pending = nil
                    state.scheduled = false
                }
                return state.pending
            }
            guard let reading else { return }
            let value = evaluate(reading)
            let deliver = state.withLock { state in
                guard !state.cancelled, value != state.last else { return false }
                state.last = value
                return true
            }
            if deliver { sink.yield(value) }
        }
    }

    func cancel() { state.withLock { $0.cancelled = true } }

    func finish(throwing error: any Error) {
        cancel()
        sink.finish(throwing: error)
    }

    /// The host's addresses from the resolver's answer, then the kernel's routes to them.
    private func evaluate(_ reading: KernelPathSource.Run.Reading) -> HostReachability {
        let addresses: [IPAddress]
        if let literal {
            addresses = [literal]
        } else {
            switch reading.hosts?.answer(for: host) ?? .pending {
            case .resolved(let resolved):
                addresses = resolved
            case .pending:
                return HostReachability(host: host, status: .unresolved, unresolvedReason: .lookingUp)
            case .failed(let error):
                return HostReachability(
                    host: host,
                    status: .unresolved,
                    unresolvedReason: .failed(reason: error.reason)
                )
            }
        }
        return HostReachability.evaluate(host: host, addresses: addresses, state: reading.state) { address in
            reading.engine?.targetRoutes(to: address) ?? []
        }
    }
}
