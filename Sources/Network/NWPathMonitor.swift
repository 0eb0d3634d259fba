// SPDX-License-Identifier: Apache-2.0

#if os(Linux)
    @_exported public import Dispatch
    import Foundation
    package import NetPath

    /// Apple's `NWPathMonitor`, for Linux: code written for Apple's Network framework compiles and
    /// runs unchanged with `import Network`.
    ///
    /// ```swift
    /// import Network
    ///
    /// let monitor = NWPathMonitor()
    /// monitor.pathUpdateHandler = { path in
    ///     print(path.status == .satisfied ? "online" : "offline")
    /// }
    /// monitor.start(queue: DispatchQueue(label: "NetworkMonitor"))
    ///
    /// // Or, as on iOS 17 and macOS 14:
    /// for await path in NWPathMonitor() { print(path) }
    /// ```
    ///
    /// Paths come from the kernel of the process's network namespace (netpath's
    /// `KernelPathSource.shared`): one netlink subscription shared by every monitor in the process.
    /// What differs from Apple's, because Linux differs:
    /// - ``currentPath`` is the real path as soon as ``start(queue:)`` returns, not after the first
    ///   callback; before the first start it is unsatisfied with no interfaces, as Apple's.
    /// - A cancelled monitor can be started again (Apple's cannot; code written for Apple never does).
    /// - Interface types come from netpath's classification (see ``NWInterface/InterfaceType``); the
    ///   administrator's netpathd configuration (interface overrides) does not apply here. NetPath's
    ///   `PathMonitor.shared` follows netpathd when it runs.
    ///
    /// The richer API (policies with preferences and metered rules, targets, the agent's view, a
    /// mock source for tests) is NetPath's `PathMonitor`, which this class wraps.
    public final class NWPathMonitor: @unchecked Sendable, CustomDebugStringConvertible {
        // @unchecked: the handler is not Sendable (Apple's signature: a handler may capture and
        // mutate the caller's state); it is stored behind `lock` and only called on the start
        // queue, which is what Apple promises the caller.
        package let monitor: PathMonitor
        private let lock = NSLock()
        private var handler: ((_ newPath: NWPath) -> Void)?

        /// A monitor of every interface type.
        ///
        /// ```swift
        /// let monitor = NWPathMonitor()
        /// ```
        public convenience init() {
            self.init(monitor: PathMonitor())
        }

        /// A monitor whose path uses only interfaces of `requiredInterfaceType`.
        ///
        /// ```swift
        /// let wifi = NWPathMonitor(requiredInterfaceType: .wifi)
        /// ```
        public convenience init(requiredInterfaceType: NWInterface.InterfaceType) {
            self.init(monitor: PathMonitor(requiredInterfaceType: requiredInterfaceType.netPathType))
        }

        /// A monitor whose path never uses interfaces of `prohibitedInterfaceTypes`.
        ///
        /// ```swift
        /// let noCellular = NWPathMonitor(prohibitedInterfaceTypes: [.cellular])
        /// ```
        public convenience init(prohibitedInterfaceTypes: [NWInterface.InterfaceType]) {
            self.init(monitor: PathMonitor(prohibitedInterfaceTypes: prohibitedInterfaceTypes.map(\.netPathType)))
        }

        /// A monitor of `policy` on `source`: for tests (a `MockPathSource`) and other namespaces.
        package convenience init(policy: PathPolicy, source: any PathSource) {
            self.init(monitor: PathMonitor(policy: policy, source: source))
        }

        private init(monitor: PathMonitor) {
            self.monitor = monitor
            // Weak: the wrapped monitor keeps its handler, and this object owns the monitor.
            monitor.pathUpdateHandler = { [weak self] path in self?.deliver(path) }
        }

        /// Called on the start queue with each new path, the current one first.
        ///
        /// ```swift
        /// var updates = 0
        /// monitor.pathUpdateHandler = { path in
        ///     updates += 1
        ///     print("update \(updates): \(path.status)")
        /// }
        /// ```
        public var pathUpdateHandler: ((_ newPath: NWPath) -> Void)? {
            get { lock.withLock { handler } }
            set { lock.withLock { handler = newValue } }
        }

        /// The newest path: set when ``start(queue:)`` returns and as paths are delivered; before the
        /// first start, an unsatisfied path with no interfaces (as Apple's).
        ///
        /// ```swift
        /// monitor.start(queue: queue)
        /// print(monitor.currentPath.status)
        /// ```
        public var currentPath: NWPath { monitor.currentPath.map(NWPath.init) ?? .notStarted }

        /// The queue given to ``start(queue:)``; `nil` before it and after ``cancel()``.
        ///
        /// ```swift
        /// dispatchPrecondition(condition: .onQueue(monitor.queue!))
        /// ```
        public var queue: DispatchQueue? { monitor.queue }

        /// Starts monitoring: ``pathUpdateHandler`` is called on `queue` with the current path, then
        /// with each change. Further calls while started are ignored, as Apple's.
        ///
        /// If netlink cannot be used (a seccomp filter, a namespace that went away), the monitor
        /// stays stopped and ``currentPath`` stays unsatisfied; the error is logged.
        ///
        /// ```swift
        /// monitor.start(queue: DispatchQueue(label: "NetworkMonitor"))
        /// ```
        public func start(queue: DispatchQueue) { monitor.start(queue: queue) }

        /// Stops monitoring: no handler call begins after this returns.
        ///
        /// ```swift
        /// monitor.cancel()
        /// ```
        public func cancel() { monitor.cancel() }

        /// The monitor's state and path, for debugging.
        ///
        /// ```swift
        /// debugPrint(monitor)
        /// ```
        public var debugDescription: String {
            "NWPathMonitor(\(monitor.policy.name), \(monitor.isStarted ? "started" : "stopped")): \(currentPath)"
        }

        private func deliver(_ path: NetworkPath) {
            let handler = pathUpdateHandler
            handler?(NWPath(path))
        }
    }
#endif
