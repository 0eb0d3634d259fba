// SPDX-License-Identifier: Apache-2.0

/// One default route in the kernel as a ``RouteEditor`` sees it: the route and the link it leaves by.
public struct RouteEntry: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The interface index of the route's next hop.
    public var interfaceIndex: Int32
    /// Family, gateway, metric and table.
    public var route: DefaultRoute

    /// The route `route`, leaving through the interface with index `interfaceIndex`.
    public init(interfaceIndex: Int32, route: DefaultRoute) {
        self.interfaceIndex = interfaceIndex
        self.route = route
    }

    /// The route's identity without its metric: what stays the same when the metric changes.
    public var slotless: RouteEntry {
        var copy = self
        copy.route.metric = 0
        return copy
    }

    /// `default via 192.0.2.1 dev #3 metric 600`.
    public var description: String {
        "default" + (route.gateway.map { " via \($0)" } ?? "") + " dev #\(interfaceIndex) metric \(route.metric)"
            + (route.table == DefaultRoute.mainTable ? "" : " table \(route.table)")
            + (route.family == .ipv6 ? " (IPv6)" : "")
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.route, lhs.interfaceIndex) < (rhs.route, rhs.interfaceIndex)
    }
}

/// Reads and rewrites the kernel's default routes: what a plugin with the `route-editing` capability
/// is given (NetPathPlugin's `PluginCapability.routeEditing`).
///
/// ## Implementing a route editor
///
/// ``changeMetric(of:to:)`` is the main requirement. It must never leave a moment without the
/// route: add the route at the new metric first (a different metric is a different kernel slot,
/// so both exist for an instant), then delete the old one. It must fail, changing nothing, when
/// the new metric's slot is taken (``RouteEditorError/Code/exists``), rather than merge into it.
/// The shipped conformer is `NetlinkRouteEditor` in `NetPathLinux`; ``ClosureRouteEditor``
/// suits tests:
///
/// ```swift
/// let routes = Mutex<[RouteEntry]>([...])
/// let editor = ClosureRouteEditor(list: { routes.withLock { $0 } }) { entry, metric in
///     routes.withLock { table in
///         if let i = table.firstIndex(of: entry) { table[i].route.metric = metric }
///     }
/// }
/// ```
public protocol RouteEditor: Sendable {
    /// Every single-next-hop unicast default route, IPv4 and IPv6, in every table.
    func defaultRoutes() async throws -> [RouteEntry]

    /// Moves `route` (as listed by ``defaultRoutes()``) to `metric`, without a moment when it is absent.
    ///
    /// - Throws: ``RouteEditorError`` with ``RouteEditorError/Code/exists`` when another route
    ///   already holds that metric's slot, ``RouteEditorError/Code/notFound`` when `route` is gone.
    func changeMetric(of route: RouteEntry, to metric: UInt32) async throws

    /// Moves an IPv4 `route` to `metric` beside the routes already there, as the kernel allows
    /// for IPv4 (DHCP clients and network managers leave several default routes at one metric);
    /// it puts such a state back. IPv6 would merge such routes into one multipath route, so an
    /// editor refuses IPv6 with ``RouteEditorError/Code/exists``.
    ///
    /// The default implementation refuses every shared move with ``RouteEditorError/Code/exists``.
    func changeMetric(of route: RouteEntry, toSharedMetric metric: UInt32) async throws
}

extension RouteEditor {
    public func changeMetric(of route: RouteEntry, toSharedMetric metric: UInt32) async throws {
        throw RouteEditorError(.exists, context: "share metric \(metric) with \(route)")
    }
}

/// A failure editing routes, keeping the kernel's raw error code.
public struct RouteEditorError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Hashable, Sendable {
            case exists = "slot taken"
            case notFound = "route not found"
            case kernel = "kernel refused"
        }

        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// Another route holds the target slot (same family, table, destination and metric).
        public static let exists = Code(.exists)
        /// The route to change is not in the kernel (any more).
        public static let notFound = Code(.notFound)
        /// Any other failure; see ``RouteEditorError/rawValue``.
        public static let kernel = Code(.kernel)

        public var description: String { value.rawValue }
    }

    /// What went wrong.
    public var code: Code
    /// The raw error (errno or a libnl `NLE_*` code), 0 when there is none.
    public var rawValue: Int32
    /// The operation and its route.
    public var context: String

    /// An error with its code, the raw kernel error (0 for none) and what was attempted.
    public init(_ code: Code, rawValue: Int32 = 0, context: String) {
        self.code = code
        self.rawValue = rawValue
        self.context = context
    }

    public var description: String { "\(context): \(code)" + (rawValue == 0 ? "" : " [\(rawValue)]") }
}

/// A ``RouteEditor`` made of two closures.
public struct ClosureRouteEditor: RouteEditor {
    private let list: @Sendable () async throws -> [RouteEntry]
    private let change: @Sendable (RouteEntry, UInt32) async throws -> Void

    /// Creates an editor that lists with `list` and changes metrics with `change`.
    public init(
        list: @escaping @Sendable () async throws -> [RouteEntry],
        change: @escaping @Sendable (RouteEntry, UInt32) async throws -> Void
    ) {
        self.list = list
        self.change = change
    }

    public func defaultRoutes() async throws -> [RouteEntry] { try await list() }

    public func changeMetric(of route: RouteEntry, to metric: UInt32) async throws {
        try await change(route, metric)
    }

    /// Calls the `change` closure, as for any other move: the closures keep no slots.
    public func changeMetric(of route: RouteEntry, toSharedMetric metric: UInt32) async throws {
        try await change(route, metric)
    }
}
