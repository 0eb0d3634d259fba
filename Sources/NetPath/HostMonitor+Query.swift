// SPDX-License-Identifier: Apache-2.0

import Dispatch
import NetPathCore
import Synchronization

extension HostMonitor {
    /// Whether `host` is reachable now, without starting a monitor: one subscription to
    /// `source`, its first settled answer, and the subscription cancelled — like
    /// `SCNetworkReachability`'s synchronous flags.
    ///
    /// A host name may need a lookup first: the query then waits for the name server's answer,
    /// but for at most `timeout` (the lookup runs on the source's resolver thread, never on the
    /// caller's). If no answer came by then, it returns ``HostReachability/Status/unresolved``
    /// with ``HostReachability/UnresolvedReason/lookingUp``; ask again later, or follow the host
    /// with a ``HostMonitor``, which receives the answer when it comes. An address literal, or a
    /// name the source has already resolved, is answered at once.
    ///
    /// The subscription is made on a Dispatch thread, never on Swift's cooperative pool: for the
    /// kernel source a first subscription waits for a netlink dump.
    ///
    /// ```swift
    /// let answer = try await HostMonitor.reachability(of: "192.0.2.1")
    /// print(answer.status, answer.interface?.name ?? "-")
    /// ```
    ///
    /// - Parameters:
    ///   - host: a host name or an IPv4/IPv6 address literal.
    ///   - source: the routing table of this process's network namespace by default.
    ///   - timeout: how long to wait for a host name's lookup; 5 seconds by default, one
    ///     attempt's timeout in `resolv.conf`'s defaults.
    /// - Throws: what the source throws when it cannot start, or the error it ends with.
    public static func reachability(
        of host: String,
        source: any ReachabilitySource = KernelPathSource.shared,
        timeout: Duration = .seconds(5)
    ) async throws -> HostReachability {
        try await withCheckedThrowingContinuation { done in
            let query = SettledAnswer(done)
            subscribeQueue.async {
                let sink = SourceSink<HostReachability>(
                    onFinish: { error in query.end(error) },
                    onValue: { query.offer($0) }
                )
                do {
                    query.begin(try source.subscribe(toHost: host, sink: sink), timeout: timeout)
                } catch {
                    query.end(error)
                }
            }
        }
    }
}

extension HostReachability {
    /// Whether this is an answer rather than a lookup still under way.
    var isSettled: Bool { unresolvedReason != .lookingUp }
}

/// One query's subscription: resumes its caller once, with the first settled answer, the newest
/// answer when the time is up, or the source's error; then cancels the subscription.
private final class SettledAnswer: Sendable {
    private struct State {
        var continuation: CheckedContinuation<HostReachability, any Error>?
        var subscription: SourceSubscription<HostReachability>?
        /// The newest value the sink received (newer than the initial value).
        var latest: HostReachability?
    }

    private let state: Mutex<State>

    init(_ continuation: CheckedContinuation<HostReachability, any Error>) {
        state = Mutex(State(continuation: continuation))
    }

    /// The subscription is made: answer now if its value is settled, else wait at most `timeout`.
    func begin(_ subscription: SourceSubscription<HostReachability>, timeout: Duration) {
        let value = state.withLock { state -> HostReachability? in
            guard state.continuation != nil else { return nil }
            state.subscription = subscription
            let newest = state.latest ?? subscription.initialValue
            state.latest = newest
            return newest
        }
        guard let value else {
            // Ended (the source finished) while subscribing.
            subscription.cancel()
            return
        }
        if value.isSettled {
            resume(with: .success(value))
            return
        }
        let (seconds, attoseconds) = timeout.components
        let nanoseconds = max(0, seconds) * 1_000_000_000 + max(0, attoseconds / 1_000_000_000)
        subscribeQueue.asyncAfter(deadline: .now() + .nanoseconds(Int(clamping: nanoseconds))) { [self] in
            guard let newest = state.withLock({ $0.latest }) else { return }
            resume(with: .success(newest))
        }
    }

    /// A value followed the initial one.
    func offer(_ value: HostReachability) {
        let begun = state.withLock { state -> Bool in
            state.latest = value
            return state.subscription != nil
        }
        // Before `begin`, the value is kept and `begin` decides.
        if begun, value.isSettled { resume(with: .success(value)) }
    }

    /// The source ended (or could not start).
    func end(_ error: (any Error)?) {
        let newest = state.withLock { $0.latest }
        if let error {
            resume(with: .failure(error))
        } else if let newest {
            resume(with: .success(newest))
        } else {
            resume(with: .failure(SourceEnded()))
        }
    }

    private func resume(with result: Result<HostReachability, any Error>) {
        let (continuation, subscription) = state.withLock { state in
            defer {
                state.continuation = nil
                state.subscription = nil
            }
            return (state.continuation, state.subscription)
        }
        subscription?.cancel()
        continuation?.resume(with: result)
    }

    /// A source that ended without an error before giving any answer.
    struct SourceEnded: Error, CustomStringConvertible {
        var description: String { "the reachability source ended before answering" }
    }
}

extension ReachabilitySource {
    /// The answer for `host` right now, without following it (blocks while the source starts,
    /// never for DNS). For a host name that the source has not resolved yet this is
    /// ``HostReachability/Status/unresolved`` with ``HostReachability/UnresolvedReason/lookingUp``:
    /// to wait for the name server's answer, with a bound, use
    /// ``HostMonitor/reachability(of:source:timeout:)``.
    ///
    /// ```swift
    /// let now = try KernelPathSource.shared.currentReachability(of: "192.0.2.1")
    /// ```
    public func currentReachability(of host: String) throws -> HostReachability {
        let subscription = try subscribe(toHost: host, sink: .discarding)
        defer { subscription.cancel() }
        return subscription.initialValue
    }
}
