// SPDX-License-Identifier: Apache-2.0

import Dispatch
import Foundation
import Logging
import NetPathCore
import Synchronization

/// `NWPathMonitor` for Swift on Linux: the network path one policy sees, now and as it changes.
///
/// Four ways to receive paths, usable together:
///
/// ```swift
/// // 1. An async sequence: starts when iterated, stops when the loop ends or its task is cancelled.
/// for await path in PathMonitor(requiredInterfaceType: .wired).paths {
///     print(path.status == .satisfied ? "wired via \(path.primary!.name)" : "no wired network")
/// }
///
/// // 2. A handler on a queue, as on Apple platforms.
/// let monitor = PathMonitor()
/// monitor.pathUpdateHandler = { path in print(path.status) }
/// monitor.start(queue: .main)
/// print(monitor.currentPath!.status)      // known as soon as start returns
/// monitor.cancel()
///
/// // 3. A delegate (``PathMonitorDelegate``), called on the same queue after the handler.
/// monitor.delegate = connectionManager
///
/// // 4. A notification, for code that prefers NotificationCenter.
/// NotificationCenter.default.addObserver(forName: PathMonitor.pathDidChangeNotification, object: nil, queue: nil) {
///     print($0.networkPath?.status as Any)
/// }
/// _ = PathMonitor.shared                   // the shared monitor starts on first use and posts
/// ```
///
/// What differs from `NWPathMonitor`, on purpose:
/// - ``currentPath`` is known synchronously once ``start(queue:)`` returns: there is no "unknown
///   until the first callback" gap.
/// - ``cancel()`` is idempotent and a cancelled monitor can be started again.
/// - The source is a parameter: ``KernelPathSource`` by default, ``AgentPathSource`` to follow
///   a running `netpathd`, `MockPathSource` (from `NetPathTesting`) in tests. Paths are plain
///   values you can construct.
/// - ``shared`` is one process-wide monitor that is never cancelled.
///
/// Keep a reference to a started monitor: releasing it cancels it.
public final class PathMonitor: Sendable {
    /// The policy this monitor evaluates.
    ///
    /// ```swift
    /// print(PathMonitor(requiredInterfaceType: .wifi).policy.require)  // [wifi]
    /// ```
    public let policy: PathPolicy
    /// Where the paths come from.
    ///
    /// ```swift
    /// let isKernel = monitor.source is KernelPathSource
    /// ```
    public let source: any PathSource
    /// Where ``pathDidChangeNotification`` is posted.
    ///
    /// ```swift
    /// monitor.notificationCenter.addObserver(forName: PathMonitor.pathDidChangeNotification, object: monitor, queue: nil) { _ in }
    /// ```
    public let notificationCenter: NotificationCenter
    let driver: MonitorDriver<NetworkPath>
    /// The shared monitor ignores ``cancel()``.
    let isShared: Bool
    let logger: Logger
    let delegateReference = Mutex(DelegateReference())

    struct DelegateReference {
        weak var delegate: (any PathMonitorDelegate)?
    }

    /// A monitor for `policy`, fed by `source`.
    ///
    /// ```swift
    /// let monitor = PathMonitor(policy: PathPolicy(name: "uplink", metered: .avoid, prefer: [.wired, .wifi], target: "192.0.2.1"))
    /// ```
    ///
    /// - Parameters:
    ///   - policy: which interfaces may carry the path (require, prohibit, metered, prefer, target).
    ///   - source: the paths' origin; the kernel of this process's network namespace by default.
    ///   - notificationCenter: where ``pathDidChangeNotification`` is posted once started.
    ///   - logger: where a source that fails to start is reported.
    public convenience init(
        policy: PathPolicy,
        source: any PathSource = KernelPathSource.shared,
        notificationCenter: NotificationCenter = .default,
        logger: Logger = Logger(label: "netpath.monitor")
    ) {
        self.init(
            policy: policy,
            source: source,
            notificationCenter: notificationCenter,
            logger: logger,
            isShared: false
        )
    }

    /// A monitor of the default policy: any interface type, metered allowed, the kernel's choice
    /// of primary.
    ///
    /// ```swift
    /// let monitor = PathMonitor()
    /// ```
    public convenience init() {
        self.init(policy: .default)
    }

    /// A monitor whose path is satisfied only by interfaces of `requiredInterfaceType`, like
    /// `NWPathMonitor(requiredInterfaceType:)`. The policy is named after the type (`"wired"`).
    /// `source` is the kernel of this process's namespace unless given.
    ///
    /// ```swift
    /// let wifi = PathMonitor(requiredInterfaceType: .wifi)
    /// ```
    public convenience init(requiredInterfaceType: InterfaceType, source: any PathSource = KernelPathSource.shared) {
        self.init(
            policy: PathPolicy(name: requiredInterfaceType.rawValue, require: [requiredInterfaceType]),
            source: source
        )
    }

    /// A monitor whose path never uses interfaces of the `prohibitedInterfaceTypes`, like
    /// `NWPathMonitor(prohibitedInterfaceTypes:)`. The policy is named `"not-cellular"` and so on.
    /// `source` is the kernel of this process's namespace unless given.
    ///
    /// ```swift
    /// let noModem = PathMonitor(prohibitedInterfaceTypes: [.cellular])
    /// ```
    public convenience init(prohibitedInterfaceTypes: [InterfaceType], source: any PathSource = KernelPathSource.shared)
    {
        let name = "not-" + prohibitedInterfaceTypes.map(\.rawValue).joined(separator: "-")
        self.init(policy: PathPolicy(name: name, prohibit: prohibitedInterfaceTypes), source: source)
    }

    private init(
        policy: PathPolicy,
        source: any PathSource,
        notificationCenter: NotificationCenter,
        logger: Logger,
        isShared: Bool
    ) {
        self.policy = policy
        self.source = source
        self.notificationCenter = notificationCenter
        self.isShared = isShared
        self.logger = logger
        let box = WeakMonitor<PathMonitor>()
        driver = MonitorDriver(
            subscribe: { sink in try source.subscribe(to: policy, sink: sink) },
            announce: { path in
                let monitor = box.monitor
                if let monitor, let delegate = monitor.delegate { delegate.pathMonitor(monitor, didUpdate: path) }
                notificationCenter.post(
                    name: Self.pathDidChangeNotification,
                    object: monitor,
                    userInfo: [Self.pathUserInfoKey: path]
                )
            }
        )
        box.monitor = self
    }

    /// One process-wide monitor of the `default` policy, started on first use with its own serial
    /// queue. Its ``cancel()`` does nothing: code that shares it cannot stop it for the others. It
    /// posts ``pathDidChangeNotification`` on `NotificationCenter.default`.
    ///
    /// It follows the running netpathd when this process can use its control socket
    /// (``AgentPathSource/configuredSocketPath()``): the agent's `default` policy with the
    /// administrator's interface overrides (types, metered, constrained), the same path for every
    /// program on the box. Otherwise — no agent, a socket this process may not use, no `default`
    /// policy — it evaluates the kernel's state itself (``KernelPathSource/shared``). Each path's
    /// ``NetworkPath/origin`` says which; if the agent stops, the monitor carries on from the
    /// kernel, and says so in the next path's origin.
    ///
    /// ```swift
    /// if PathMonitor.shared.currentPath?.isExpensive == true { deferBackups() }
    /// print(PathMonitor.shared.currentPath?.origin == .agent ? "netpathd decides" : "evaluated here")
    /// ```
    public static let shared: PathMonitor = {
        let monitor = PathMonitor(
            policy: .default,
            // A short reply deadline: a stuck agent delays the first use by this, then the kernel answers.
            source: AgentOrKernelPathSource(agent: AgentPathSource(replyTimeout: .seconds(2)), kernel: .shared),
            notificationCenter: .default,
            logger: Logger(label: "netpath.monitor"),
            isShared: true
        )
        monitor.start(queue: DispatchQueue(label: "netpath.shared-path-monitor"))
        return monitor
    }()

    /// The paths, as an async sequence that starts monitoring when iterated.
    ///
    /// The first element is the path at the moment the iteration starts, without waiting for a
    /// change; each later element differs from the one before. Iterations are independent of
    /// ``start(queue:)`` and of each other; see ``MonitorUpdates``.
    ///
    /// ```swift
    /// let task = Task {
    ///     for await path in monitor.paths where path.status == .satisfied { await reconnect(via: path.primary) }
    /// }
    /// task.cancel()   // stops monitoring; the netlink subscription closes with the last user
    /// ```
    public var paths: MonitorUpdates<NetworkPath> {
        let driver = driver
        let source = source
        let policy = policy
        let logger = logger
        return MonitorUpdates(
            subscribe: { sink in try source.subscribe(to: policy, sink: sink) },
            observe: { driver.observe($0) },
            failed: { error in
                logger.error("path source failed", metadata: ["policy": "\(policy.name)", "error": "\(error)"])
                driver.record(error)
            }
        )
    }

    /// The newest path this monitor has seen: set by the time ``start(queue:)`` returns, updated
    /// as paths are delivered (by the handler delivery or any iteration of ``paths``).
    ///
    /// `nil` only before the monitor has ever been started or iterated, or when its source
    /// failed to start (see ``failure``). After ``cancel()`` it keeps the last path seen.
    ///
    /// ```swift
    /// monitor.start(queue: .main)
    /// if monitor.currentPath?.status == .satisfied { connect() }
    /// ```
    public var currentPath: NetworkPath? { driver.current }

    /// Why the source last failed to start or ended, if it did; cleared by the next start.
    ///
    /// ```swift
    /// if let error = monitor.failure { print("not monitoring:", error) }
    /// ```
    public var failure: (any Error)? { driver.failure }

    /// Whether ``start(queue:)`` is in effect (not cancelled, and the source has not ended).
    ///
    /// ```swift
    /// if !monitor.isStarted { monitor.start(queue: .main) }
    /// ```
    public var isStarted: Bool { driver.isRunning }
}

/// A weak reference to a monitor, set once its init has finished: the notification's `object`,
/// held weakly so the driver never keeps the monitor alive (releasing a monitor cancels it).
final class WeakMonitor<Monitor: AnyObject & Sendable>: Sendable {
    private struct Reference {
        weak var value: Monitor?
    }

    private let reference = Mutex(Reference())

    var monitor: Monitor? {
        get { reference.withLock { $0.value } }
        set { reference.withLock { $0.value = newValue } }
    }
}
