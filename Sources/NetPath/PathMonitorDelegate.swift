// SPDX-License-Identifier: Apache-2.0

/// Receives a ``PathMonitor``'s paths: the delegate style of delivery, beside
/// ``PathMonitor/pathUpdateHandler`` and ``PathMonitor/pathDidChangeNotification``.
///
/// Set ``PathMonitor/delegate``, then ``PathMonitor/start(queue:)``: the delegate is called on
/// that queue with each new path, starting with the current one, after the handler and before
/// the notification. The monitor holds its delegate weakly.
///
/// ## Implementing a delegate
///
/// Conform a class (it must be `Sendable`: the monitor calls it from its queue) and keep it alive
/// as long as it should hear from the monitor.
///
/// ```swift
/// final class Uploader: PathMonitorDelegate {
///     let monitor = PathMonitor()
///
///     func begin() {
///         monitor.delegate = self
///         monitor.start(queue: DispatchQueue(label: "uploader"))
///     }
///
///     func pathMonitor(_ monitor: PathMonitor, didUpdate path: NetworkPath) {
///         print(path.isExpensive ? "pausing on a metered link" : "uploading")
///     }
/// }
/// ```
public protocol PathMonitorDelegate: AnyObject, Sendable {
    /// A new path, on the queue given to ``PathMonitor/start(queue:)``.
    ///
    /// - Parameters:
    ///   - monitor: the monitor that delivered it.
    ///   - path: the path, different from the one delivered before.
    func pathMonitor(_ monitor: PathMonitor, didUpdate path: NetworkPath)
}

extension PathMonitor {
    /// Told of each path ``start(queue:)`` delivers, on its queue, after ``pathUpdateHandler``;
    /// held weakly. Set it before or after starting: a change applies from the next delivery.
    ///
    /// ```swift
    /// monitor.delegate = uploader
    /// ```
    public var delegate: (any PathMonitorDelegate)? {
        get { delegateReference.withLock { $0.delegate } }
        set { delegateReference.withLock { $0.delegate = newValue } }
    }
}
