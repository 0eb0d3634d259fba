// SPDX-License-Identifier: Apache-2.0

import Logging
import NetPathCore
import NetPathPlugin

/// `route-metrics`: the opt-in enforcement of a policy's `prefer`. It rewrites default-route
/// metrics so that the kernel's own choice (the lowest metric) is the policy's primary, for IPv4
/// and IPv6.
///
/// ```toml
/// [plugin.route-metrics]
/// policy = "default"     # the policy whose primary the kernel should use
/// metrics = { wired = 100, wifi = 600, cellular = 700, other = 800 }   # NetworkManager's convention
///
/// [[rule]]
/// name = "enforce-prefer"
/// on = ["satisfied", "unsatisfied", "changed", "up", "down"]
/// plugins = ["route-metrics"]
/// ```
///
/// On start and on every path event of its policy (and on interface `up`, `down` and `changed`
/// events, to catch routes that DHCP or an administrator re-added) it ranks the interfaces with a
/// default route in the main table: the primary of each family first, then the other candidates
/// in preference order, then the rest (links without carrier keep their routes, and IPv4 still
/// uses them). Each route gets its type's base metric, raised where needed to stay above the
/// route ranked before it, so the primary gets the lowest. With connectivity probing on
/// (`[connectivity]`), an interface whose probes found less than `full` is ranked last, as
/// NetworkManager does, and its `connectivity-changed` events re-rank. Only default routes are changed, each
/// one add-then-delete (``NetPathPlugin/RouteEditor``), so a default route always exists. Every
/// change is logged. The first metric each route had is remembered and restored when the agent
/// stops or a reload disables the plugin.
///
/// - Important: It needs the ``NetPathPlugin/PluginCapability/routeEditing`` capability (root or
///   `CAP_NET_ADMIN`). A DHCP client, network manager or router advertisement that re-adds a
///   route at its own metric adds a second route; the next event re-ranks both. IPv4 routes that
///   shared one metric (as networkd leaves its DHCP routes) share it again after a restore.
public struct RouteMetricsPlugin: Plugin {
    public static let name = "route-metrics"
    public static let capabilities: Set<PluginCapability> = [.routeEditing]

    /// The policy whose primary is enforced.
    public let policy: String
    let bases: MetricPlan.Bases
    private let enforcer = Enforcer()

    public init(configuration: PluginConfiguration) throws {
        var settings = configuration
        policy = settings.string("policy") ?? PathPolicy.default.name
        var bases = MetricPlan.Bases()
        settings.table("metrics") { metrics in
            let range: ClosedRange<Int64> = 0...Int64(UInt32.max - 1024)
            if let value = metrics.integer("wired", in: range) { bases.wired = UInt32(value) }
            if let value = metrics.integer("wifi", in: range) { bases.wifi = UInt32(value) }
            if let value = metrics.integer("cellular", in: range) { bases.cellular = UInt32(value) }
            if let value = metrics.integer("other", in: range) { bases.other = UInt32(value) }
        }
        self.bases = bases
        try settings.finish()
    }

    public func start(context: PluginContext) async throws {
        guard let path = context.path(forPolicy: policy) else {
            context.logger.warning("route-metrics: no path for policy \(policy) yet; enforcing from its first event")
            return
        }
        try await enforcer.enforce(path, bases: bases, context: context)
    }

    public func handle(_ event: Event, context: PluginContext) async throws {
        let path: NetworkPath?
        switch (event.scope, event.name) {
        case (.path, _) where event.policy == policy:
            path = event.path ?? context.path(forPolicy: policy)
        case (.interface, .up), (.interface, .down), (.interface, .changed), (.interface, .connectivityChanged):
            path = context.path(forPolicy: policy)
        default:
            return
        }
        guard let path else { return }
        try await enforcer.enforce(path, bases: bases, context: context)
    }

    public func stop(context: PluginContext) async throws {
        try await enforcer.restore(context: context)
    }

    /// The remembered original metrics and the passes that move routes.
    ///
    /// An actor alone would not do: it is re-entered at every `await`, and calls for different
    /// subjects (a path event, an interface event) arrive concurrently. Two passes interleaving
    /// would each plan from a listing the other makes stale, so each pass holds ``PassLock``.
    private actor Enforcer {
        /// Each changed route's first metric, by identity without the metric.
        private var originals: [RouteEntry: UInt32] = [:]
        private let lock = PassLock()

        func enforce(_ path: NetworkPath, bases: MetricPlan.Bases, context: PluginContext) async throws {
            try await exclusively {
                do {
                    try await self.enforcePass(path, bases: bases, context: context)
                } catch let error as RouteEditorError where error.code == .notFound || error.code == .exists {
                    // Someone else (a DHCP client, an administrator) changed the routes under us:
                    // plan again from a fresh listing, once.
                    context.logger.notice("route-metrics: \(error); planning again")
                    try await self.enforcePass(path, bases: bases, context: context)
                }
            }
        }

        func restore(context: PluginContext) async throws {
            try await exclusively { try await self.restorePass(context: context) }
        }

        private func exclusively(_ body: () async throws -> Void) async throws {
            await lock.acquire()
            do {
                try await body()
            } catch {
                await lock.release()
                throw error
            }
            await lock.release()
        }

        private func enforcePass(_ path: NetworkPath, bases: MetricPlan.Bases, context: PluginContext) async throws {
            let editor = try context.routeEditor()
            let routes = try await editor.defaultRoutes()
            let present = Set(routes.map(\.slotless))
            originals = originals.filter { present.contains($0.key) }
            var types: [Int32: InterfaceType] = [:]
            var connectivity: [Int32: Connectivity] = [:]
            for interface in context.state.interfaces {
                types[interface.index] = interface.type
                connectivity[interface.index] = interface.connectivity
            }
            var targets: [RouteEntry: UInt32] = [:]
            for family in [IPAddress.Family.ipv4, .ipv6] {
                targets.merge(
                    MetricPlan.targets(
                        family: family,
                        path: path,
                        routes: routes,
                        types: types,
                        bases: bases,
                        connectivity: connectivity
                    )
                ) { a, _ in a }
            }
            let reason = "primary of policy \(path.policy): \(path.primary?.name ?? "none")"
            try await apply(
                MetricPlan.moves(routes: routes, targets: targets),
                editor: editor,
                context: context,
                reason: reason
            )
        }

        private func restorePass(context: PluginContext) async throws {
            guard !originals.isEmpty else { return }
            let editor = try context.routeEditor()
            let routes = try await editor.defaultRoutes()
            var targets: [RouteEntry: UInt32] = [:]
            for route in routes {
                if let original = originals[route.slotless] { targets[route] = original }
            }
            let plan = MetricPlan.moves(routes: routes, targets: targets)
            try await apply(
                (plan.moves, []),
                editor: editor,
                context: context,
                reason: "restoring the original metrics"
            )
            // Routes that shared a metric before (a manager's DHCP routes all at its one metric) go
            // back beside each other: IPv4 keeps several routes at one metric, IPv6 cannot.
            for route in plan.blocked {
                guard let original = targets[route] else { continue }
                do {
                    try await editor.changeMetric(of: route, toSharedMetric: original)
                    let name = Self.name(of: route.interfaceIndex, context: context)
                    context.logger.notice(
                        "route-metrics: IPv4 default route\(route.route.gateway.map { " via \($0)" } ?? "") dev \(name): metric \(route.route.metric) -> \(original), beside the route already there (restoring the original metrics)",
                        metadata: ["interface": .string(name), "from": "\(route.route.metric)", "to": "\(original)"]
                    )
                } catch {
                    context.logger.warning(
                        "route-metrics: cannot move \(route) back to \(original): another default route holds it (\(error))"
                    )
                }
            }
            originals = [:]
        }

        private static func name(of index: Int32, context: PluginContext) -> String {
            context.state.interfaces.first { $0.index == index }?.name ?? "#\(index)"
        }

        private func apply(
            _ plan: (moves: [MetricPlan.Move], blocked: [RouteEntry]),
            editor: any RouteEditor,
            context: PluginContext,
            reason: String
        ) async throws {
            for move in plan.moves {
                let key = move.route.slotless
                if originals[key] == nil { originals[key] = move.route.route.metric }
                try await editor.changeMetric(of: move.route, to: move.metric)
                let name = Self.name(of: move.route.interfaceIndex, context: context)
                context.logger.notice(
                    "route-metrics: \(move.route.route.family == .ipv6 ? "IPv6" : "IPv4") default route\(move.route.route.gateway.map { " via \($0)" } ?? "") dev \(name): metric \(move.route.route.metric) -> \(move.metric)\(move.isTemporary ? " (temporary, to free a slot)" : "") (\(reason))",
                    metadata: [
                        "interface": .string(name), "from": "\(move.route.route.metric)", "to": "\(move.metric)",
                    ]
                )
                if originals[key] == move.metric { originals[key] = nil }
            }
            for route in plan.blocked {
                context.logger.warning(
                    "route-metrics: cannot move \(route): another default route holds its target metric"
                )
            }
        }
    }
}

/// A FIFO lock for async code: one holder at a time, across suspension points.
private actor PassLock {
    private var held = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func acquire() async {
        guard held else {
            held = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    func release() {
        if waiters.isEmpty {
            held = false
        } else {
            waiters.removeFirst().resume()
        }
    }
}
