import NetPathCore

extension HostMonitor {
    /// Whether `host` is reachable now, without starting a monitor: one subscription to
    /// `source`, its first answer, and the subscription cancelled — like `SCNetworkReachability`'s
    /// synchronous flags.
    ///
    /// The subscription is made on a Dispatch thread, never on Swift's cooperative pool: for the
    /// kernel source a first subscription waits for a netlink dump, and a host name is resolved.
    ///
    /// ```swift
    /// let answer = try await HostMonitor.reachability(of: "192.0.2.1")
    /// print(answer.status, answer.interface?.name ?? "-")
    /// ```
    ///
    /// - Parameters:
    ///   - host: a host name or an IPv4/IPv6 address literal.
    ///   - source: the routing table of this process's network namespace by default.
    /// - Throws: what the source throws when it cannot start.
    public static func reachability(
        of host: String,
        source: any ReachabilitySource = KernelPathSource.shared
    ) async throws -> HostReachability {
        try await withCheckedThrowingContinuation { done in
            subscribeQueue.async { done.resume(with: Result { try source.currentReachability(of: host) }) }
        }
    }
}

extension ReachabilitySource {
    /// The answer for `host` right now, without following it (blocks while the source starts).
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
