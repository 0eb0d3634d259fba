import FoundationEssentials
import NetPathCore

/// What the engine publishes after each batch of kernel messages: links, their addresses and
/// default routes, and the kernel's own routes to the internet. Small on purpose: the full route table stays inside the engine (a 100,000-route
/// table copied per change would dominate CPU during a storm).
package struct KernelSnapshot: Sendable, Equatable {
    /// Why this snapshot was published.
    package enum Cause: String, Sendable, Equatable {
        /// The first full dump at start.
        case initialDump = "initial-dump"
        /// Live notifications.
        case update
        /// A re-dump after a receive-buffer overrun.
        case resync
    }

    package var links: [LinkRecord]
    package var addresses: [Int32: [InterfaceAddress]]
    package var defaultRoutes: [Int32: [DefaultRoute]]
    /// The kernel's routes to the internet (`ip route get`, rules applied), per family.
    package var kernelRoutes: [KernelRoute]
    package var routeCount: Int
    /// Increases by one per published snapshot.
    package var generation: UInt64
    /// Wall-clock time at which the batch was read from the socket.
    package var receivedAt: Date
    /// Wall-clock time at which the engine handed the snapshot out: when the change left the engine.
    package var publishedAt: Date
    package var cause: Cause
    package var statistics: EngineStatistics

    package init(
        links: [LinkRecord] = [],
        addresses: [Int32: [InterfaceAddress]] = [:],
        defaultRoutes: [Int32: [DefaultRoute]] = [:],
        kernelRoutes: [KernelRoute] = [],
        routeCount: Int = 0,
        generation: UInt64 = 0,
        receivedAt: Date = Date(),
        publishedAt: Date = Date(),
        cause: Cause = .update,
        statistics: EngineStatistics = EngineStatistics()
    ) {
        self.links = links
        self.addresses = addresses
        self.defaultRoutes = defaultRoutes
        self.kernelRoutes = kernelRoutes
        self.routeCount = routeCount
        self.generation = generation
        self.receivedAt = receivedAt
        self.publishedAt = publishedAt
        self.cause = cause
        self.statistics = statistics
    }
}

/// Counters the engine keeps for metrics and tests.
package struct EngineStatistics: Sendable, Equatable {
    /// rtnetlink messages received on the notification socket.
    package var messages: UInt64 = 0
    /// Receive-buffer overruns (`ENOBUFS`) detected.
    package var overruns: UInt64 = 0
    /// Full re-dumps done to recover from overruns.
    package var resyncs: UInt64 = 0

    package init() {}
}
