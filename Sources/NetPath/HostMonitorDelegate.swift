// SPDX-License-Identifier: Apache-2.0

/// Receives a ``HostMonitor``'s answers: the delegate style of delivery, beside
/// ``HostMonitor/updateHandler`` and ``HostMonitor/reachabilityDidChangeNotification``.
///
/// Called on the queue given to ``HostMonitor/start(queue:)`` with each new answer, starting
/// with the current one, after the handler and before the notification. The monitor holds its
/// delegate weakly.
///
/// ## Implementing a delegate
///
/// ```swift
/// final class SyncService: HostMonitorDelegate {
///     let api = HostMonitor(host: "api.example.com")
///
///     func begin() {
///         api.delegate = self
///         api.start(queue: DispatchQueue(label: "sync"))
///     }
///
///     func hostMonitor(_ monitor: HostMonitor, didUpdate reachability: HostReachability) {
///         if reachability.isReachable { print("syncing via", reachability.interface!.name) }
///     }
/// }
/// ```
public protocol HostMonitorDelegate: AnyObject, Sendable {
    /// A new answer, on the queue given to ``HostMonitor/start(queue:)``.
    ///
    /// - Parameters:
    ///   - monitor: the monitor that delivered it.
    ///   - reachability: the answer, different from the one delivered before.
    func hostMonitor(_ monitor: HostMonitor, didUpdate reachability: HostReachability)
}

extension HostMonitor {
    /// Told of each answer ``start(queue:)`` delivers, on its queue, after ``updateHandler``;
    /// held weakly.
    ///
    /// ```swift
    /// api.delegate = syncService
    /// ```
    public var delegate: (any HostMonitorDelegate)? {
        get { delegateReference.withLock { $0.delegate } }
        set { delegateReference.withLock { $0.delegate = newValue } }
    }
}
