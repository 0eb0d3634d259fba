// SPDX-License-Identifier: Apache-2.0

import CNetlink
import Glibc
import NetPathCore
import Synchronization

/// Lists and re-metrics the kernel's default routes over rtnetlink: the agent's ``NetPathPlugin/RouteEditor``.
///
/// ## How a metric changes
///
/// The kernel has no "change metric" operation: the metric is part of a route's identity (its
/// slot). ``changeMetric(of:to:)`` therefore re-dumps the routes, takes the libnl object of the
/// route to move, clones it with the new priority and adds the clone with `NLM_F_EXCL`
/// (`rtnl_route_add`), and only then deletes the original (`rtnl_route_delete`). Between the
/// two calls both routes exist, so there is never a moment without the route. Cloning the
/// kernel's own object keeps everything else about the route: protocol, scope, preferred
/// source, table, route metrics such as MTU, the `onlink` flag. State flags the kernel sets and
/// refuses on input (`linkdown`, `dead`, `offload`, …) are cleared from the clone.
///
/// `NLM_F_EXCL` makes an add into a taken slot fail (``NetPathPlugin/RouteEditorError/Code/exists``)
/// instead of silently joining it (IPv4 would prepend, IPv6 would merge the two into a multipath
/// route): the caller picks another metric.
///
/// Routes are matched by family, table, metric, output interface and gateway, and read fresh
/// for every change rather than from libnl's route cache, which collapses same-metric default
/// routes of different links into one entry (libnl-facts.md). Only single-next-hop unicast
/// default routes are listed; a multipath default route cannot be re-metricked per link.
///
/// ## Namespaces and threads
///
/// A netlink socket belongs to the network namespace it was created in, for its whole life. For
/// a named namespace the socket is created on a short-lived thread that first enters the
/// namespace with `setns(2)` and then ends; the socket stays in that namespace, and no thread of
/// the caller's ever changes namespace. The operations themselves are short request/acknowledge
/// exchanges with the kernel (no waiting on the network) and run on the calling task's thread,
/// one at a time.
///
/// ```swift
/// let editor = try NetlinkRouteEditor()                      // or (namespace: "lab")
/// for route in try await editor.defaultRoutes() where route.route.metric == 600 {
///     try await editor.changeMetric(of: route, to: 100)
/// }
/// ```
package final class NetlinkRouteEditor: RouteEditor {
    private let socket: Mutex<RouteSocket>

    /// Opens a routing socket in the caller's network namespace, or in `namespace`
    /// (`/run/netns/NAME`, or an absolute path to a namespace file).
    ///
    /// - Throws: ``NetlinkError`` when the namespace or the socket cannot be opened.
    package init(namespace: String? = nil) throws(NetlinkError) {
        let opened: RouteSocket
        if let namespace {
            opened = try OSThread.run(in: namespace) { () throws(NetlinkError) in try RouteSocket() }
        } else {
            opened = try RouteSocket()
        }
        socket = Mutex(opened)
    }

    package func defaultRoutes() async throws -> [RouteEntry] {
        try socket.withLock { socket throws(NetlinkError) in
            let routes = try socket.dumpDefaultRoutes()
            return routes.compactMap(\.entry).sorted()
        }
    }

    package func changeMetric(of route: RouteEntry, to metric: UInt32) async throws {
        try move(route, to: metric, flags: NLM_F_EXCL)
    }

    /// `NLM_F_APPEND` puts the IPv4 route after those already at `metric`, as `ip route append` does.
    package func changeMetric(of route: RouteEntry, toSharedMetric metric: UInt32) async throws {
        guard route.route.family == .ipv4 else {
            throw RouteEditorError(.exists, context: "share metric \(metric) with \(route): IPv6 would merge them")
        }
        try move(route, to: metric, flags: NLM_F_APPEND)
    }

    private func move(_ route: RouteEntry, to metric: UInt32, flags: Int32) throws(RouteEditorError) {
        guard metric != route.route.metric else { return }
        try socket.withLock { socket throws(RouteEditorError) in
            let routes: [RouteObject]
            do throws(NetlinkError) {
                routes = try socket.dumpDefaultRoutes()
            } catch {
                throw RouteEditorError(.kernel, rawValue: error.rawValue, context: "dump routes")
            }
            guard let original = routes.first(where: { $0.entry == route }) else {
                throw RouteEditorError(.notFound, context: "change \(route)")
            }
            guard let clone = nl_object_clone(original.handle) else {
                throw RouteEditorError(.kernel, rawValue: ENOMEM, context: "clone \(route)")
            }
            defer { nl_object_put(clone) }
            rtnl_route_set_priority(clone, metric)
            // Keep only RTNH_F_ONLINK: the others are state the kernel reports and rejects on input.
            let keep: UInt32 = 0x4
            rtnl_route_unset_flags(clone, ~keep)
            if let hop = rtnl_route_nexthop_n(clone, 0) { rtnl_route_nh_unset_flags(hop, ~keep) }

            // Make before break: the new slot first, then the old one goes.
            let added = rtnl_route_add(socket.handle, clone, flags)
            if added < 0 {
                let code: RouteEditorError.Code = -added == NLE_EXIST ? .exists : .kernel
                throw RouteEditorError(code, rawValue: -added, context: "add \(route) at metric \(metric)")
            }
            let deleted = rtnl_route_delete(socket.handle, original.handle, 0)
            if deleted < 0 {
                let code: RouteEditorError.Code = -deleted == NLE_OBJ_NOTFOUND ? .notFound : .kernel
                throw RouteEditorError(
                    code,
                    rawValue: -deleted,
                    context: "delete \(route) after adding it at metric \(metric)"
                )
            }
        }
    }
}

/// The editor's `nl_sock`. Not Sendable by itself: it lives inside the editor's `Mutex`.
private final class RouteSocket {
    let handle: OpaquePointer

    init() throws(NetlinkError) {
        guard let sock = nl_socket_alloc() else {
            throw NetlinkError(.socket, rawValue: ENOMEM, context: "nl_socket_alloc")
        }
        let result = nl_connect(sock, NETLINK_ROUTE)
        if result < 0 {
            nl_socket_free(sock)
            throw .libnl(.connect, result, "nl_connect(NETLINK_ROUTE)")
        }
        handle = sock
    }

    deinit { nl_socket_free(handle) }

    /// Dumps every route and keeps the single-next-hop unicast default routes as libnl objects.
    func dumpDefaultRoutes() throws(NetlinkError) -> [RouteObject] {
        let collector = RouteObjectCollector()
        guard let callbacks = nl_cb_alloc(NL_CB_DEFAULT) else {
            throw NetlinkError(.socket, rawValue: ENOMEM, context: "nl_cb_alloc")
        }
        defer { nl_cb_put(callbacks) }
        nl_cb_set(
            callbacks,
            NL_CB_VALID,
            NL_CB_CUSTOM,
            RouteObjectCollector.validCallback,
            Unmanaged.passUnretained(collector).toOpaque()
        )
        // A dump interrupted by a concurrent change (NLE_DUMP_INTR) is asked again.
        for _ in 0..<5 {
            collector.routes.removeAll()
            var result = nl_rtgen_request(handle, Int32(RTM_GETROUTE), AF_UNSPEC, Int32(NLM_F_DUMP))
            if result < 0 { throw .libnl(.dump, result, "request routes") }
            result = withExtendedLifetime(collector) { nl_recvmsgs(handle, callbacks) }
            if result == -NLE_DUMP_INTR { continue }
            if result < 0 { throw .libnl(.dump, result, "receive routes") }
            return collector.routes
        }
        throw NetlinkError(.dump, rawValue: NLE_DUMP_INTR, context: "route dump kept being interrupted")
    }
}

/// One retained `struct rtnl_route` from a dump, with its identity in Swift terms.
private final class RouteObject {
    let handle: OpaquePointer
    let entry: RouteEntry?

    init(retaining handle: OpaquePointer) {
        nl_object_get(handle)
        self.handle = handle
        entry = Self.entry(of: handle)
    }

    deinit { nl_object_put(handle) }

    private static func entry(of route: OpaquePointer) -> RouteEntry? {
        guard let hop = rtnl_route_nexthop_n(route, 0) else { return nil }
        let family: IPAddress.Family = Int32(rtnl_route_get_family(route)) == AF_INET6 ? .ipv6 : .ipv4
        return RouteEntry(
            interfaceIndex: rtnl_route_nh_get_ifindex(hop),
            route: DefaultRoute(
                family: family,
                gateway: MessageCollector.ipAddress(rtnl_route_nh_get_gateway(hop)),
                metric: rtnl_route_get_priority(route),
                table: rtnl_route_get_table(route)
            )
        )
    }
}

/// Collects default routes from a dump through libnl's C callbacks (the owner travels in `arg`).
private final class RouteObjectCollector {
    var routes: [RouteObject] = []

    static let validCallback: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Int32 = { msg, arg in
        guard let msg, let arg, np_msg_type(msg) == MessageCollector.newRoute else { return Int32(NL_OK.rawValue) }
        nl_msg_parse(msg, objectCallback, arg)
        return Int32(NL_OK.rawValue)
    }

    private static let objectCallback: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = {
        object,
        arg in
        guard let object, let arg else { return }
        let family = Int32(rtnl_route_get_family(object))
        guard family == AF_INET || family == AF_INET6 else { return }
        guard rtnl_route_get_type(object) == UInt8(RTN_UNICAST), rtnl_route_get_nnexthops(object) == 1 else { return }
        guard let dst = rtnl_route_get_dst(object), nl_addr_get_prefixlen(dst) == 0 else { return }
        let collector = Unmanaged<RouteObjectCollector>.fromOpaque(arg).takeUnretainedValue()
        collector.routes.append(RouteObject(retaining: object))
    }
}
