// SPDX-License-Identifier: Apache-2.0

import Dispatch
import Foundation
import NetPathCore

extension PathMonitor {
    /// Called on the start queue with each new path, starting with the current one.
    ///
    /// Set it before or after ``start(queue:)``; a change applies from the next delivery. Consecutive
    /// equal paths are not repeated.
    ///
    /// ```swift
    /// monitor.pathUpdateHandler = { path in
    ///     if path.usesInterfaceType(.cellular) { pauseSync() }
    /// }
    /// ```
    public var pathUpdateHandler: (@Sendable (NetworkPath) -> Void)? {
        get { driver.handler }
        set { driver.handler = newValue }
    }

    /// The queue given to ``start(queue:)``, while the monitor is started.
    ///
    /// ```swift
    /// dispatchPrecondition(condition: .onQueue(monitor.queue!))
    /// ```
    public var queue: DispatchQueue? { driver.queue }

    /// Starts monitoring: ``currentPath`` is set when this returns, and ``pathUpdateHandler`` is
    /// called on `queue` with that path, then with each change. Each delivery also posts
    /// ``pathDidChangeNotification`` on ``notificationCenter``, on `queue`, after the handler.
    ///
    /// Starting a started monitor does nothing. A cancelled monitor can be started again; it
    /// begins with the path at that moment. If the source cannot start, the error is logged,
    /// kept in ``failure``, and the monitor stays stopped.
    ///
    /// ```swift
    /// let monitor = PathMonitor(prohibitedInterfaceTypes: [.cellular])
    /// monitor.pathUpdateHandler = { print($0.status) }
    /// monitor.start(queue: DispatchQueue(label: "network"))
    /// precondition(monitor.currentPath != nil)
    /// ```
    public func start(queue: DispatchQueue) {
        if let error = driver.start(queue: queue) {
            logger.error("path source failed to start", metadata: ["policy": "\(policy.name)", "error": "\(error)"])
        }
    }

    /// Stops monitoring: no handler call or notification begins after this returns, and the
    /// monitor's subscription is released (with the last one, the netlink subscription closes).
    ///
    /// Idempotent; start again with ``start(queue:)``. On ``shared`` this does nothing: the shared
    /// monitor runs for the life of the process.
    ///
    /// ```swift
    /// monitor.cancel()
    /// monitor.cancel()          // fine: idempotent
    /// monitor.start(queue: .main)
    /// ```
    public func cancel() {
        guard !isShared else { return }
        driver.cancel()
    }

    /// Posted on a monitor's ``notificationCenter`` with each path ``start(queue:)`` delivers.
    /// The `object` is the monitor; `userInfo[PathMonitor.pathUserInfoKey]` is the ``NetworkPath``
    /// (also available as `notification.networkPath`).
    ///
    /// ```swift
    /// let token = NotificationCenter.default.addObserver(
    ///     forName: PathMonitor.pathDidChangeNotification, object: PathMonitor.shared, queue: nil
    /// ) { notification in
    ///     print(notification.networkPath?.status as Any)
    /// }
    /// ```
    public static let pathDidChangeNotification = Notification.Name("NetPathPathMonitorPathDidChange")

    /// The `userInfo` key of the ``NetworkPath`` in ``pathDidChangeNotification``.
    ///
    /// ```swift
    /// let path = notification.userInfo?[PathMonitor.pathUserInfoKey] as? NetworkPath
    /// ```
    public static let pathUserInfoKey = "path"
}

extension Notification {
    /// The path carried by a ``PathMonitor/pathDidChangeNotification``; `nil` for other notifications.
    ///
    /// ```swift
    /// let path = notification.networkPath
    /// ```
    public var networkPath: NetworkPath? {
        userInfo?[PathMonitor.pathUserInfoKey] as? NetworkPath
    }
}
