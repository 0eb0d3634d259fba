import CNetlink
import Glibc
import NetPathCore

/// Asks the kernel where it would send traffic to the internet, per family (`ip route get`).
///
/// Why ask rather than compute from the mirrored table: the kernel applies `ip rule` (marks,
/// sources, `suppress_prefixlength`, gotos), specific routes that cover the probe (a VPN's
/// `0.0.0.0/1`), and route types the mirror does not model, all exactly; two request/reply
/// round trips per published batch cost a few tens of microseconds. The reply is the FIB entry
/// the lookup matched (`RTM_F_FIB_MATCH`), so its table and metric are the route's own.
///
/// It shares the engine's dump socket (a question is asked only between dumps, on the engine
/// thread), so following the kernel costs two netlink sockets, not three.
///
/// Not Sendable: it lives and dies on the engine thread, like its socket.
final class RouteLookup {
    private let socket: NetlinkSocket
    private let collector: MessageCollector

    /// Asks over `socket`, whose replies reach `collector`. Acknowledgements are turned off on
    /// it: dumps end with their own `NLMSG_DONE` and need none.
    init(socket: NetlinkSocket, collector: MessageCollector) {
        self.socket = socket
        self.collector = collector
        socket.disableAcknowledgements()
    }

    /// The kernel's route to ``KernelRoute/probe(_:)`` for each family that has one, each with
    /// the rule that led to its table as far as the mirrored `rules` tell.
    func kernelRoutes(explainedBy rules: Set<RuleRecord>) -> [KernelRoute] {
        [IPAddress.Family.ipv4, .ipv6].compactMap { family in
            collector.messages.removeAll(keepingCapacity: true)
            guard socket.routeGet(KernelRoute.probe(family)) else { return nil }
            for case .newRoute(let route, _) in collector.messages {
                guard route.family == family, let hop = route.nexthops.first else { continue }
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
                collector.messages.removeAll(keepingCapacity: true)
                return kernelRoute
            }
            collector.messages.removeAll(keepingCapacity: true)
            return nil
        }
    }
}
