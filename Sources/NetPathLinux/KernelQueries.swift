// SPDX-License-Identifier: Apache-2.0

import CNetlink
import Glibc
import NetPathCore
import Synchronization

/// The engine's second netlink socket and everything asked over it: the dumps, the kernel's
/// route to the internet (``RouteLookup/kernelRoutes(explainedBy:)``) and how each interface
/// reaches a target (``targetRoutes(to:through:generation:)``).
///
/// The engine thread dumps and asks for its route to the internet; callers' threads ask for
/// targets. One lock serialises them: a question waits for a dump in progress (a resync), never
/// the other way round for long. Opened with the engine's event socket, in the namespace the
/// engine follows; following the kernel costs two netlink sockets, not three.
final class KernelQueries: Sendable {
    /// One target question: an address, asked through these interfaces.
    private struct Question: Hashable {
        var address: IPAddress
        var interfaces: [Int32]
    }

    private struct State: ~Copyable {
        /// The socket, its collector and buffer.
        let lookup: RouteLookup
        /// The routing generation the target answers belong to.
        var generation: UInt64?
        var answers: [Question: [SystemState.TargetRoute]] = [:]
    }

    private let state: Mutex<State>
    /// The addresses asked about in the current generation. A lock of its own: the engine
    /// thread reads it on every batch and must not wait for a question in progress, only, when
    /// an address is added, for the event socket's filter to be made and attached (tens of
    /// microseconds): that happens under it, so programs are attached in the order their lists
    /// were made.
    private let watchedAddresses = Mutex(Watched())

    /// The watched addresses, and the same in the form `np_walk` compares, made once per address
    /// rather than on each of the engine's batches.
    private struct Watched {
        var addresses: [IPAddress] = []
        var forWalk: [np_watch] = []
    }
    /// A descriptor of the engine's event socket of this object's own, for its ``RouteFilter``
    /// (-1: the kernel filters nothing). Its own, because the threads that ask change the filter,
    /// and the engine's descriptor number could be closed and reused meanwhile.
    private let eventFilter: Int32

    /// Asks over `socket` (opened in the engine's namespace), which nothing else reads. With
    /// `events`, the engine's event socket, keeps a ``RouteFilter`` on it for the internet probes
    /// and the watched addresses; returns with the first attached. `filterError` is the errno of
    /// that first attach (0: attached).
    init(socket: sending NetlinkSocket, filtering events: Int32?) {
        let collector = MessageCollector()
        let buffer = ReceiveBuffer()
        let lookup = RouteLookup(socket: socket, collector: collector, buffer: buffer)
        state = Mutex(State(lookup: lookup))
        eventFilter = events.map { fcntl($0, F_DUPFD_CLOEXEC, 3) } ?? -1
        filterError = eventFilter >= 0 ? Self.refilter(eventFilter, watching: []) : (events == nil ? 0 : errno)
    }

    deinit {
        if eventFilter >= 0 { close(eventFilter) }
    }

    /// The errno of the first filter's attach (0: attached, or none asked for). Without a filter
    /// the engine's own walk drops the same routes, after reading them.
    let filterError: Int32

    /// Attaches the program for the internet probes (the routes the engine keeps) and `watched`
    /// to `descriptor` (``RouteFilter/attach(to:)``: a refused one leaves no filter). Returns the
    /// errno of a refused attach, or 0.
    @discardableResult
    private static func refilter(_ descriptor: Int32, watching watched: [IPAddress]) -> Int32 {
        RouteFilter(watching: NetlinkSocket.keptProbes + watched).attach(to: descriptor)
    }

    /// Dumps links, addresses, the kept routes (`np_walk`: default routes, and routes covering
    /// the internet probes) and rules into a new table; returns it with the number of routes
    /// dropped unparsed.
    /// Links `filter` ignores are listed apart, their addresses dropped (links are dumped first).
    func dumpAll(filter: LinkFilter = .none) throws(NetlinkError) -> (table: KernelTable, skipped: UInt64) {
        try state.withLock { state throws(NetlinkError) in
            try Self.dumpAll(state.lookup.socket, state.lookup.buffer, state.lookup.collector, filter: filter)
        }
    }

    private static func dumpAll(
        _ socket: NetlinkSocket,
        _ buffer: ReceiveBuffer,
        _ collector: MessageCollector,
        filter: LinkFilter
    ) throws(NetlinkError) -> (table: KernelTable, skipped: UInt64) {
        var lastError: NetlinkError?
        // A dump interrupted by a concurrent change (NLE_DUMP_INTR) is simply asked again.
        for _ in 0..<5 {
            collector.messages.removeAll(keepingCapacity: true)
            var skipped: UInt64 = 0
            do {
                for type in [RTM_GETLINK, RTM_GETADDR, RTM_GETROUTE, RTM_GETRULE] {
                    skipped += try socket.dump(Int32(type), buffer: buffer, delivering: collector)
                }
            } catch {
                lastError = error
                if error.rawValue == NLE_DUMP_INTR { continue }
                throw error
            }
            var table = KernelTable(filter: filter)
            for message in collector.messages { table.apply(message) }
            collector.messages.removeAll(keepingCapacity: true)
            return (table, skipped)
        }
        throw lastError ?? NetlinkError(.dump, rawValue: NLE_DUMP_INTR, context: "dump kept being interrupted")
    }

    /// The kernel's route to the internet per family (``RouteLookup/kernelRoutes(explainedBy:)``).
    func kernelRoutes(explainedBy rules: Set<RuleRecord>) -> [KernelRoute] {
        state.withLock { $0.lookup.kernelRoutes(explainedBy: rules) }
    }

    /// The addresses asked about since routing last changed. The engine watches the routes it
    /// drops for one covering them (`np_route_covers`), which moves the routing generation, so
    /// that the next question asks again.
    var watched: [np_watch] { watchedAddresses.withLock { $0.forWalk } }

    /// The best unicast route to `address` through each of `interfaces` (and through the
    /// interface the kernel itself would use, if it is not among them), as of routing
    /// `generation`: asked of the kernel only when this generation has not asked it yet.
    ///
    /// For each interface the kernel is asked with it as the output interface (`ip route get
    /// ADDRESS oif DEV fibmatch`: the best route through it, rules applied) and once without (the
    /// interface it would really use, marked ``SystemState/TargetRoute/isKernelChoice``): N + 1
    /// round trips of a few microseconds, when routing changed.
    func targetRoutes(to address: IPAddress, through interfaces: [Int32], generation: UInt64)
        -> [SystemState.TargetRoute]
    {
        let question = Question(address: address, interfaces: interfaces)
        return state.withLock { state in
            if state.generation != generation {
                state.generation = generation
                state.answers.removeAll()
                // The filter follows below, with the address this question watches.
                watchedAddresses.withLock { $0 = Watched() }
            }
            if let known = state.answers[question] { return known }
            // Watched (and let through the event socket's filter) before the kernel is asked: a
            // covering route that arrives from now on moves the generation, and with it this answer.
            watchedAddresses.withLock { watched in
                guard !watched.addresses.contains(address) else { return }
                watched.addresses.append(address)
                watched.forWalk.append(NetlinkSocket.watch(address))
                if eventFilter >= 0 { Self.refilter(eventFilter, watching: watched.addresses) }
            }
            let answer = Self.ask(question, state.lookup)
            state.answers[question] = answer
            return answer
        }
    }

    private static func ask(_ question: Question, _ lookup: RouteLookup) -> [SystemState.TargetRoute] {
        let chosen = lookup.route(to: question.address).flatMap { $0.isUnicast ? $0 : nil }
        let kernelInterfaces = Set(chosen?.nexthops.map(\.interfaceIndex) ?? [])
        var interfaces = question.interfaces
        for index in kernelInterfaces.sorted() where !interfaces.contains(index) { interfaces.append(index) }
        var result: [SystemState.TargetRoute] = []
        for index in interfaces {
            guard let route = lookup.route(to: question.address, through: index), route.isUnicast,
                let hop = route.nexthops.first(where: { $0.interfaceIndex == index })
            else { continue }
            result.append(
                SystemState.TargetRoute(
                    interfaceIndex: index,
                    prefixLength: route.destinationLength,
                    metric: route.metric,
                    gateway: hop.gateway,
                    table: route.table,
                    isKernelChoice: kernelInterfaces.contains(index)
                )
            )
        }
        return result.sorted { $0.interfaceIndex < $1.interfaceIndex }
    }
}
