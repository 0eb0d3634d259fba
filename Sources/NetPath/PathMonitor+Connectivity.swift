// SPDX-License-Identifier: Apache-2.0

import NetPathCore
import Synchronization

extension PathMonitor {
    /// Why ``waitForConnectivity(_:timeout:)`` returned without a path.
    public struct ConnectivityWaitError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The connectivity waited for.
        public var required: Connectivity
        /// How long it waited.
        public var timeout: Duration?
        /// The last path seen, if any.
        public var lastPath: NetworkPath?

        /// "no path with full connectivity within 30 seconds: the path is satisfied via eth0 with connectivity portal".
        public var description: String {
            let seen =
                lastPath.map { path in
                    "the path is \(path.status.rawValue)\(path.primary.map { " via \($0.name)" } ?? "") with connectivity \(path.connectivity)"
                } ?? "no path was delivered"
            let waited = timeout.map { "within \($0)" } ?? "before the paths ended"
            return "no path with \(required) connectivity \(waited): \(seen)"
        }
    }

    /// Waits until this monitor's path is satisfied with at least `required` connectivity
    /// (`.full`, or `.portal` to accept a captive portal), and returns that path: what
    /// `NWPathMonitor` users build by hand around a connectivity check.
    ///
    /// `unknown` never counts: the wait is for a probe's verdict. It is what `netpathctl
    /// wait-online --connectivity` waits for (docs/wait-online.md), one definition for both.
    /// Only a source that probes
    /// reports connectivity: ``AgentPathSource`` with a netpathd whose configuration has
    /// `[connectivity]` (docs/connectivity.md). The paths of a ``KernelPathSource`` stay
    /// `unknown`, so a wait on one ends only by its timeout.
    ///
    /// ```swift
    /// let monitor = PathMonitor(source: AgentPathSource())
    /// let path = try await monitor.waitForConnectivity(.full, timeout: .seconds(30))
    /// print("online via \(path.primary?.name ?? "?")")
    /// ```
    ///
    /// - Parameters:
    ///   - required: the least connectivity that ends the wait.
    ///   - timeout: how long to wait at most; `nil` waits until the task is cancelled.
    /// - Throws: ``ConnectivityWaitError`` when the time runs out (or the task is cancelled)
    ///   first.
    public func waitForConnectivity(_ required: Connectivity = .full, timeout: Duration? = nil) async throws
        -> NetworkPath
    {
        let paths = self.paths
        let last = LastPath()
        let found: NetworkPath? = await withTaskGroup(of: NetworkPath?.self) { group in
            group.addTask {
                for await path in paths {
                    last.set(path)
                    if Self.meets(path, required) { return path }
                }
                return nil
            }
            if let timeout {
                group.addTask {
                    try? await Task.sleep(for: timeout)
                    return nil
                }
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let found else {
            throw ConnectivityWaitError(required: required, timeout: timeout, lastPath: last.get())
        }
        return found
    }

    /// Whether `path` is satisfied with a verdict of at least `required`: what
    /// `netpathctl wait-online --connectivity` waits for too.
    static func meets(_ path: NetworkPath, _ required: Connectivity) -> Bool {
        path.isOnline(requiring: required)
    }
}

/// The last path the wait saw, for its error.
private final class LastPath: Sendable {
    private let value = Mutex<NetworkPath?>(nil)
    func set(_ path: NetworkPath) { value.withLock { $0 = path } }
    func get() -> NetworkPath? { value.withLock { $0 } }
}
