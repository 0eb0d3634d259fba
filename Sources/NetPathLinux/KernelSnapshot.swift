// SPDX-License-Identifier: Apache-2.0

import FoundationEssentials
import NetPathCore

/// What the engine publishes after each batch of kernel messages: links, their addresses and
/// default routes, and the kernel's own routes to the internet. Small on purpose: the engine
/// keeps no route but the default routes, and lookups of other addresses are asked of the kernel
/// (``NetlinkEngine/targetRoutes(to:)``).
package struct KernelSnapshot: Sendable, Equatable {
    /// Why this snapshot was published.
    package enum Cause: String, Sendable, Equatable {
        /// The first full dump at start.
        case initialDump = "initial-dump"
        /// Live notifications.
        case update
        /// A re-dump after a receive-buffer overrun.
        case resync
        /// No kernel change: a file the engine was asked to watch changed (`resolv.conf`).
        case watchedFile = "watched-file"
    }

    package var links: [LinkRecord]
    package var addresses: [Int32: [InterfaceAddress]]
    package var defaultRoutes: [Int32: [DefaultRoute]]
    /// The kernel's routes to the internet (`ip route get`, rules applied), per family.
    package var kernelRoutes: [KernelRoute]
    /// The routes the engine holds: the default routes of every table (no other route is kept).
    package var routeCount: Int
    /// Moves on whenever routing can have changed (a route, rule or address, a link's arrival,
    /// departure or admin state, a resync); unchanged by carrier flips.
    package var routingGeneration: UInt64
    /// Increases by one per published snapshot.
    package var generation: UInt64
    /// Wall-clock time at which the batch was read from the socket.
    package var receivedAt: Date
    #if NETPATH_BENCH
        /// Wall-clock time at which the engine handed the snapshot out: when the change left the
        /// engine. Only in `make bench`'s build (`-DNETPATH_BENCH`), which times the engine's part
        /// of a change from inside (netpathctl's `--bench-snapshots`); nothing else reads it.
        package var publishedAt = Date()
    #endif
    package var cause: Cause
    package var statistics: EngineStatistics

    package init(
        links: [LinkRecord] = [],
        addresses: [Int32: [InterfaceAddress]] = [:],
        defaultRoutes: [Int32: [DefaultRoute]] = [:],
        kernelRoutes: [KernelRoute] = [],
        routeCount: Int = 0,
        routingGeneration: UInt64 = 0,
        generation: UInt64 = 0,
        receivedAt: Date = Date(),
        cause: Cause = .update,
        statistics: EngineStatistics = EngineStatistics()
    ) {
        self.links = links
        self.addresses = addresses
        self.defaultRoutes = defaultRoutes
        self.kernelRoutes = kernelRoutes
        self.routeCount = routeCount
        self.routingGeneration = routingGeneration
        self.generation = generation
        self.receivedAt = receivedAt
        self.cause = cause
        self.statistics = statistics
    }
}

/// Counters the engine keeps for metrics and tests.
package struct EngineStatistics: Sendable, Equatable {
    /// rtnetlink messages received on the notification socket: not the route notifications its
    /// filter (``RouteFilter``) had the kernel drop.
    package var messages: UInt64 = 0
    /// Receive-buffer overruns (`ENOBUFS`) detected.
    package var overruns: UInt64 = 0
    /// Full re-dumps: to recover from overruns, and those asked for (a resume from suspend, a
    /// new ignore list).
    package var resyncs: UInt64 = 0
    /// Route messages (notifications and dump entries) dropped unparsed: every route but the
    /// default routes, which are all the path model reads. Routes the kernel dropped for the
    /// notification socket's filter are not counted: they never reached the engine.
    package var skippedRoutes: UInt64 = 0

    package init() {}
}
