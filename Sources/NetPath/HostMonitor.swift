// SPDX-License-Identifier: Apache-2.0

import Dispatch
import Foundation
import Logging
import NetPathCore
import Synchronization

/// Per-host reachability: whether the kernel has a route to a host, through which interface and
/// type, and whether that interface is metered — what `SCNetworkReachability` answered.
///
/// The answer comes from the routing table (``KernelPathSource`` by default), so monitoring never
/// sends a packet to the host. A host name is resolved off the monitor's queue, asynchronously:
/// starting never waits for DNS, the answer is kept for its lifetime and looked up again when the
/// network path changes, not on every route change. A name without an address is reported as
/// ``HostReachability/Status/unresolved`` (distinct from ``HostReachability/Status/unreachable``),
/// and ``HostReachability/unresolvedReason`` says whether its lookup is still under way or failed.
///
/// ```swift
/// let api = HostMonitor(host: "api.example.com")
/// for await reachability in api.updates {
///     switch reachability.status {
///     case .reachable: print("via \(reachability.interface!.name), metered: \(reachability.isExpensive)")
///     case .unreachable: print("no route")
///     case .unresolved: print("no address:", reachability.unresolvedReason.map { "\($0)" } ?? "-")
///     }
/// }
///
/// // Or with a handler, as with PathMonitor:
/// let gateway = HostMonitor(host: "192.0.2.1")
/// gateway.updateHandler = { print($0.status) }
/// gateway.start(queue: .main)
/// print(gateway.currentReachability!.status)   // known when start returns (for a name: maybe still looking up)
/// ```
///
/// Keep a reference to a started monitor: releasing it cancels it.
public final class HostMonitor: Sendable {
    /// The host: a name or an address literal.
    ///
    /// ```swift
    /// print(monitor.host)  // "api.example.com"
    /// ```
    public let host: String
    /// Where the answers come from.
    ///
    /// ```swift
    /// let mock = monitor.source as? MockPathSource
    /// ```
    public let source: any ReachabilitySource
    /// Where ``reachabilityDidChangeNotification`` is posted.
    ///
    /// ```swift
    /// monitor.notificationCenter.addObserver(forName: HostMonitor.reachabilityDidChangeNotification, object: monitor, queue: nil) { _ in }
    /// ```
    public let notificationCenter: NotificationCenter
    let driver: MonitorDriver<HostReachability>
    let logger: Logger
    let delegateReference = Mutex(DelegateReference())

    struct DelegateReference {
        weak var delegate: (any HostMonitorDelegate)?
    }

    /// A monitor for `host`.
    ///
    /// - Parameters:
    ///   - host: a host name or an IPv4/IPv6 address literal (a literal is never resolved).
    ///   - source: the routing table of this process's network namespace by default.
    ///   - notificationCenter: where ``reachabilityDidChangeNotification`` is posted once started.
    ///   - logger: where a source that fails to start is reported.
    ///
    /// ```swift
    /// let gateway = HostMonitor(host: "192.0.2.1")
    /// let lab = HostMonitor(host: "198.51.100.7", source: KernelPathSource(options: .init(namespace: "lab")))
    /// ```
    public init(
        host: String,
        source: any ReachabilitySource = KernelPathSource.shared,
        notificationCenter: NotificationCenter = .default,
        logger: Logger = Logger(label: "netpath.host-monitor")
    ) {
        self.host = host
        self.source = source
        self.notificationCenter = notificationCenter
        self.logger = logger
        let box = WeakMonitor<HostMonitor>()
        driver = MonitorDriver(
            subscribe: { sink in try source.subscribe(toHost: host, sink: sink) },
            announce: { value in
                let monitor = box.monitor
                if let monitor, let delegate = monitor.delegate { delegate.hostMonitor(monitor, didUpdate: value) }
                notificationCenter.post(
                    name: Self.reachabilityDidChangeNotification,
                    object: monitor,
                    userInfo: [Self.reachabilityUserInfoKey: value]
                )
            }
        )
        box.monitor = self
    }

    /// The answers, as an async sequence that starts monitoring when iterated: first the answer
    /// at that moment, then each different one. See ``MonitorUpdates``.
    ///
    /// ```swift
    /// for await reachability in HostMonitor(host: "192.0.2.1").updates where reachability.isReachable { break }
    /// ```
    public var updates: MonitorUpdates<HostReachability> {
        let driver = driver
        let source = source
        let host = host
        let logger = logger
        return MonitorUpdates(
            subscribe: { sink in try source.subscribe(toHost: host, sink: sink) },
            observe: { driver.observe($0) },
            failed: { error in
                logger.error("reachability source failed", metadata: ["host": "\(host)", "error": "\(error)"])
                driver.record(error)
            }
        )
    }

    /// The newest answer this monitor has seen; set by the time ``start(queue:)`` returns. `nil`
    /// before the monitor has been started or iterated. For a host name whose first lookup has
    /// not answered yet it is ``HostReachability/Status/unresolved`` with
    /// ``HostReachability/UnresolvedReason/lookingUp``.
    ///
    /// - Important: after ``cancel()`` (or when the source ended, see ``failure``) it keeps the
    ///   last answer, which nothing updates any more: check ``isStarted`` before trusting it, or
    ///   ask afresh with ``reachability(of:source:timeout:)``.
    ///
    /// ```swift
    /// monitor.start(queue: .main)
    /// let viaCellular = monitor.currentReachability?.interfaceType == .cellular
    /// ```
    public var currentReachability: HostReachability? { driver.current }

    /// Called on the start queue with each new answer, starting with the current one.
    ///
    /// ```swift
    /// monitor.updateHandler = { if !$0.isReachable { showOfflineBanner() } }
    /// ```
    public var updateHandler: (@Sendable (HostReachability) -> Void)? {
        get { driver.handler }
        set { driver.handler = newValue }
    }

    /// The queue given to ``start(queue:)``, while the monitor is started.
    ///
    /// ```swift
    /// dispatchPrecondition(condition: .onQueue(monitor.queue!))
    /// ```
    public var queue: DispatchQueue? { driver.queue }

    /// Why the source last failed to start or ended, if it did; cleared by the next start.
    ///
    /// ```swift
    /// if let error = monitor.failure { print("not monitoring:", error) }
    /// ```
    public var failure: (any Error)? { driver.failure }

    /// Whether ``start(queue:)`` is in effect.
    ///
    /// ```swift
    /// if !monitor.isStarted { monitor.start(queue: .main) }
    /// ```
    public var isStarted: Bool { driver.isRunning }

    /// Starts monitoring: ``currentReachability`` is set when this returns, and ``updateHandler``
    /// is called on `queue` with it, then with each change. It returns at once, as Apple's does:
    /// a host name is looked up in the background (until it answers, the answer is
    /// ``HostReachability/Status/unresolved`` with ``HostReachability/UnresolvedReason/lookingUp``,
    /// and the name server's answer comes as a change). Starting a started monitor does nothing;
    /// a cancelled one can start again.
    ///
    /// ```swift
    /// monitor.start(queue: DispatchQueue(label: "reachability"))
    /// ```
    public func start(queue: DispatchQueue) {
        if let error = driver.start(queue: queue) {
            logger.error("reachability source failed to start", metadata: ["host": "\(host)", "error": "\(error)"])
        }
    }

    /// Stops monitoring; no handler call begins after this returns. Idempotent.
    ///
    /// ```swift
    /// monitor.cancel()
    /// ```
    public func cancel() { driver.cancel() }

    /// Posted on ``notificationCenter`` with each answer ``start(queue:)`` delivers; the `object`
    /// is the monitor and `userInfo[HostMonitor.reachabilityUserInfoKey]` the ``HostReachability``.
    ///
    /// ```swift
    /// NotificationCenter.default.addObserver(forName: HostMonitor.reachabilityDidChangeNotification, object: nil, queue: nil) { _ in }
    /// ```
    public static let reachabilityDidChangeNotification = Notification.Name("NetPathHostMonitorReachabilityDidChange")

    /// The `userInfo` key of the ``HostReachability`` in ``reachabilityDidChangeNotification``.
    ///
    /// ```swift
    /// let answer = notification.userInfo?[HostMonitor.reachabilityUserInfoKey] as? HostReachability
    /// ```
    public static let reachabilityUserInfoKey = "reachability"
}
