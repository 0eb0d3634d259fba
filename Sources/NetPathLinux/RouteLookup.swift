// SPDX-License-Identifier: Apache-2.0

import CNetlink
import Glibc
import NetPathCore

/// Asks the kernel which route it would use (`ip route get ADDRESS [oif DEV] fibmatch`): for the
/// internet probe per family (``kernelRoutes(explainedBy:)``) and for a policy's target or a
/// library host (``route(to:through:)``).
///
/// Why ask rather than compute from the mirrored table: the kernel applies `ip rule` (marks,
/// sources, `suppress_prefixlength`, gotos), specific routes that cover the address (a VPN's
/// `0.0.0.0/1`), and route types the mirror does not model, all exactly — and the mirror keeps
/// default routes only (`np_walk`: `np_route_is_default`, `np_route_covers`). A request/reply round trip costs a few
/// microseconds. The reply is the FIB entry the lookup matched (`RTM_F_FIB_MATCH`), so its table
/// and metric are the route's own.
///
/// It asks over the engine's dump socket; ``KernelQueries`` serialises the dumps, the engine
/// thread's questions and the target questions of other threads.
///
/// Not Sendable: it lives on one thread at a time, like its socket.
final class RouteLookup {
    let socket: NetlinkSocket
    let collector: MessageCollector
    let buffer: ReceiveBuffer

    /// Asks over `socket`, reading replies into `buffer` and parsing them with `collector`.
    init(socket: NetlinkSocket, collector: MessageCollector, buffer: ReceiveBuffer) {
        self.socket = socket
        self.collector = collector
        self.buffer = buffer
    }

    /// The route the kernel matched for `address`, through `interface` when it is not 0 (the
    /// best route through that interface: `np_route_get_request` says what the kernel answers);
    /// `nil` when there is none.
    func route(to address: IPAddress, through interface: Int32 = 0) -> RouteRecord? {
        collector.messages.removeAll(keepingCapacity: true)
        defer { collector.messages.removeAll(keepingCapacity: true) }
        guard socket.routeGet(address, through: interface, buffer: buffer, delivering: collector) else { return nil }
        for case .newRoute(let route, _) in collector.messages where route.family == address.family {
            return route
        }
        return nil
    }

    /// The kernel's route to ``KernelRoute/probe(_:)`` for each family that has one, each with
    /// the rule that led to its table as far as the mirrored `rules` tell.
    func kernelRoutes(explainedBy rules: Set<RuleRecord>) -> [KernelRoute] {
        [IPAddress.Family.ipv4, .ipv6].compactMap { family in
            guard let route = route(to: KernelRoute.probe(family)), let hop = route.nexthops.first else { return nil }
            var kernelRoute = KernelRoute(
                family: family,
                interfaceIndex: hop.interfaceIndex,
                gateway: hop.gateway,
                metric: route.metric,
                table: route.table,
                prefixLength: route.destinationLength
            )
            kernelRoute.rule = KernelTable.rule(choosing: kernelRoute, among: rules).map {
                RoutingRule(priority: $0.priority, selector: $0.selector)
            }
            return kernelRoute
        }
    }
}
