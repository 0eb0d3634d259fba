// SPDX-License-Identifier: Apache-2.0

import CLinux
import CNetlink
import FoundationEssentials
import Glibc
import Logging
import NetPathCore
import Synchronization

/// Follows the kernel's links, addresses, rules and routes over rtnetlink and publishes a
/// `KernelSnapshot` after every batch of changes.
///
/// Of the routes it keeps the default routes of every table and the few that cover an internet
/// probe. The kernel drops the other route notifications before queueing them (`RouteFilter`,
/// on the event socket), except those covering an address asked about; what still arrives is
/// dropped after reading three bytes of its header. So a table of a million routes costs
/// neither memory nor parsing, and its churn no wake-up. What else a path needs is asked
/// of the kernel (`targetRoutes(to:)`), which applies `ip rule` as it does for traffic.
///
/// The engine runs its own thread: a blocking `poll()` on Swift's cooperative pool would take one
/// of its threads (two on the target machines). It subscribes first, then dumps, then applies
/// the notifications that queued meanwhile, so nothing between dump and live updates is missed.
/// A batch is everything readable without blocking: one admin toggle's 5–10 messages become one
/// snapshot. On a receive-buffer overrun it drains the socket, re-dumps everything and publishes
/// the result, so its state converges on the kernel's.
///
/// A program that imports NetPath uses it through `KernelPathSource`, whose initialiser takes its
/// ``Options``; starting and reading it is the package's own business:
///
/// ```swift
/// let engine = NetlinkEngine()
/// let snapshots = try engine.start()     // yields the initial dump first
/// for await snapshot in snapshots { … }
/// engine.stop()
/// ```
package final class NetlinkEngine: Sendable {
    /// Engine settings.
    package struct Options: Sendable {
        /// Run in this named network namespace (`/run/netns/NAME`) instead of the caller's.
        package var namespace: String?
        /// The receive buffer requested with `SO_RCVBUFFORCE` (the kernel doubles it). 2 MiB held
        /// a 100,000-route storm with no overrun on an idle machine, but not always with the CPU
        /// saturated by other work; 4 MiB leaves headroom, and costs memory only while it is full.
        package var receiveBufferSize: Int
        /// Where the engine reports overruns, resynchronisations and failures.
        package var logger: Logger
        /// Whether the kernel drops the route notifications the engine would drop unparsed
        /// (``RouteFilter``). Off, the engine reads every route and drops them itself: what it
        /// does whenever the kernel refuses the filter (logged at start). Tests turn it off to
        /// drive that path, and to let a storm reach the engine.
        package var filtersRoutesInKernel = true
        /// The links not mirrored (`[agent] ignore`): each is kept as its index, name and reason,
        /// and nothing of it reaches a snapshot. ``NetlinkEngine/setLinkFilter(_:)`` replaces it.
        package var linkFilter = LinkFilter.none

        /// Options for the caller's namespace, a 4 MiB receive buffer and a `netpath.netlink` logger.
        package init(
            namespace: String? = nil,
            receiveBufferSize: Int = 4 << 20,
            logger: Logger = Logger(label: "netpath.netlink"),
            linkFilter: LinkFilter = .none
        ) {
            self.namespace = namespace
            self.receiveBufferSize = receiveBufferSize
            self.logger = logger
            self.linkFilter = linkFilter
        }
    }

    private struct Shared {
        var table = KernelTable()
        /// The filter the next dump applies (the table has the one of the last dump).
        var filter = LinkFilter.none
        /// Why a re-dump was asked for (``NetlinkEngine/requestDump(because:)``), until the
        /// engine's thread starts it.
        var dumpRequest: String?
        /// The kernel's routes to the internet as of the last published snapshot.
        var kernelRoutes: [KernelRoute] = []
        /// ``routingGeneration`` when the kernel was last asked; `nil` before the first.
        var kernelRoutesGeneration: UInt64?
        /// Counts routing changes across tables: a resync's new table starts its own count, so
        /// this moves on then too. Target lookups are re-asked when it moves.
        var routingGeneration: UInt64 = 0
        /// Counts changes to the kept routes and the rules, across tables like
        /// ``routingGeneration``: the kernel's route to the internet is asked again when it moves.
        var probeGeneration: UInt64 = 0
        var statistics = EngineStatistics()
        var generation: UInt64 = 0
        var running = false
        /// The snapshot's per-interface addresses and default routes as of ``routingGeneration``,
        /// which every change to either moves (a resync too): a carrier flip, the most common
        /// change, then rebuilds neither, work that stood between every such change and
        /// `monitor --json`'s line. Filled only by the engine's thread as it publishes.
        var maps: SnapshotMaps?
    }

    private struct SnapshotMaps {
        var routingGeneration: UInt64
        var addresses: [Int32: [InterfaceAddress]]
        var defaultRoutes: [Int32: [DefaultRoute]]

        init(of state: Shared) {
            routingGeneration = state.routingGeneration
            addresses = state.table.addressesByInterface()
            defaultRoutes = state.table.defaultRoutesByInterface()
        }
    }

    /// The options the engine was created with.
    package let options: Options

    /// How many unread snapshots the stream keeps. Each is a full state, so dropping the oldest
    /// under a long lag still lets the consumer diff correctly; it only merges transitions.
    package static let bufferedSnapshots = 64
    private let shared = Mutex(Shared())
    // The eventfd that wakes the thread to stop, the one that asks it for a re-dump, and the
    // thread itself; set once in start().
    private let control = Mutex<(wakeFD: Int32, requestFD: Int32, thread: pthread_t?)>((-1, -1, nil))
    /// Dumps and kernel questions; set once the engine thread has opened its socket.
    private let queries = Mutex<KernelQueries?>(nil)

    /// An engine that has not started: ``start()`` opens the sockets and starts its thread.
    package init(options: Options = Options()) {
        self.options = options
        shared.withLock { $0.filter = options.linkFilter }
    }

    deinit { stop() }

    /// Starts the engine thread and waits until the initial dump is loaded.
    ///
    /// - Returns: the snapshots, starting with the initial dump. Up to ``bufferedSnapshots``
    ///   unread snapshots are kept, so a consumer that lags briefly still sees every transition;
    ///   one that falls further behind loses the oldest, never the latest.
    /// - Throws: ``NetlinkError`` when the namespace, the sockets or the first dump fail.
    package func start(watching watch: FileChangeWatch? = nil) throws(NetlinkError) -> AsyncStream<KernelSnapshot> {
        let (stream, continuation) = AsyncStream<KernelSnapshot>.makeStream(
            bufferingPolicy: .bufferingNewest(Self.bufferedSnapshots)
        )
        try start(
            delivering: SnapshotDelivery(deliver: { continuation.yield($0) }, finish: { continuation.finish() }),
            watching: watch
        )
        return stream
    }

    /// Starts the engine thread, which hands each snapshot, starting with the initial dump, to
    /// `delivery` itself; waits until the initial dump is loaded.
    ///
    /// For a consumer that keeps its own bounded mailbox (the agent's main loop): no task sits
    /// between the engine and it, so a change reaches it in at most one thread hop (none when
    /// `delivery` handles the snapshot right there, as the agent's idle loop does).
    ///
    /// `watch`: a file the snapshots' reader depends on (`resolv.conf`): the thread follows it
    /// too, and publishes a snapshot (``KernelSnapshot/Cause/watchedFile``) when it changes.
    /// - Throws: ``NetlinkError`` when the namespace, the sockets or the first dump fail.
    package func start(delivering delivery: SnapshotDelivery, watching watch: FileChangeWatch? = nil)
        throws(NetlinkError)
    {
        let wakeFD = np_eventfd_nonblocking()
        guard wakeFD >= 0 else { throw NetlinkError(.thread, rawValue: errno, context: "eventfd") }
        let requestFD = np_eventfd_nonblocking()
        guard requestFD >= 0 else {
            close(wakeFD)
            throw NetlinkError(.thread, rawValue: errno, context: "eventfd")
        }

        let startup = StartupSignal()
        let context = ThreadContext(
            engine: self,
            delivery: delivery,
            wakeFD: wakeFD,
            requestFD: requestFD,
            watch: watch,
            startup: startup
        )
        let thread: pthread_t
        switch OSThread.start({ context.engine.run(context) }) {
        case .success(let started): thread = started
        case .failure(let error):
            close(wakeFD)
            close(requestFD)
            throw NetlinkError(.thread, rawValue: error.rawValue, context: "pthread_create")
        }
        control.withLock { $0 = (wakeFD, requestFD, thread) }
        if let error = startup.wait() {
            stop()
            throw error
        }
    }

    /// Stops the thread, closes its sockets and finishes the stream. Idempotent.
    package func stop() {
        let (wakeFD, requestFD, thread) = control.withLock { state in
            defer { state = (-1, -1, nil) }
            return state
        }
        guard wakeFD >= 0 else { return }
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
        if let thread, !pthread_equal(thread, pthread_self()).isTrue { pthread_join(thread, nil) }
        close(wakeFD)
        close(requestFD)
    }

    /// Asks the engine's thread to dump the kernel's state again and publish it (as after an
    /// overrun: the differences become events), logging `reason`. Returns at once; a request
    /// made while one waits joins it. Does nothing before ``start()`` or after ``stop()``.
    package func requestDump(because reason: String) {
        // Under the lock: stop() cannot close the descriptor between the check and the write.
        control.withLock { control in
            guard control.requestFD >= 0 else { return }
            shared.withLock { $0.dumpRequest = reason }
            var one: UInt64 = 1
            _ = write(control.requestFD, &one, 8)
        }
    }

    /// Replaces the links not mirrored (a reload that changed `[agent] ignore`); a re-dump
    /// applies it, so links it no longer ignores come with their addresses. An equal filter
    /// changes nothing.
    package func setLinkFilter(_ filter: LinkFilter) {
        let changed = shared.withLock { state in
            defer { state.filter = filter }
            return state.filter != filter
        }
        if changed { requestDump(because: "the links to ignore changed") }
    }

    /// How many links the engine does not mirror.
    package var ignoredLinkCount: Int { shared.withLock { $0.table.ignoredLinks.count } }

    /// The links the engine does not mirror, by index, with the reason for each.
    package func ignoredInterfaces() -> [IgnoredInterface] {
        let (filter, ignored) = shared.withLock { ($0.table.filter, $0.table.ignoredLinks) }
        return filter.report(ignored)
    }

    /// Whether the engine thread is running its loop (for a watchdog).
    package var isRunning: Bool { shared.withLock { $0.running } }

    /// The counters so far.
    package var statistics: EngineStatistics { shared.withLock { $0.statistics } }

    /// A copy of the mirrored table: links, addresses, rules and the default routes of every
    /// table (the engine keeps no other route: `np_walk`: `np_route_is_default`, `np_route_covers`).
    /// Copying is O(1), but the engine's next change then copies the table once.
    ///
    /// Internal, for the tests (`@testable`): they compare it with `ip -j` on every table and
    /// route type, including what no snapshot shows (tables no rule looks up, blackhole and other
    /// non-unicast defaults) until a rule or route change makes it count.
    func table() -> KernelTable { shared.withLock { $0.table } }

    /// How each interface reaches `address`, as the kernel answers it (`ip route get ADDRESS oif
    /// DEV fibmatch`, `ip rule` applied): the best unicast route through each interface that is
    /// admin up and has an address of the family, and through the interface the kernel itself
    /// chooses (marked ``SystemState/TargetRoute/isKernelChoice``). Answers are kept until routing
    /// changes (a route, rule, address or a link's admin state), so asking after every snapshot
    /// costs a lookup in a dictionary. Empty before ``start()`` and after ``stop()``.
    package func targetRoutes(to address: IPAddress) -> [SystemState.TargetRoute] {
        guard let queries = queries.withLock({ $0 }) else { return [] }
        let (generation, interfaces) = shared.withLock { state in
            (state.routingGeneration, state.table.candidateInterfaces(for: address.family))
        }
        return queries.targetRoutes(to: address, through: interfaces, generation: generation)
    }

    // MARK: - The engine thread

    private final class ThreadContext: @unchecked Sendable {
        // @unchecked: handed to exactly one thread at creation and never touched by the creator again.
        let engine: NetlinkEngine
        let delivery: SnapshotDelivery
        let wakeFD: Int32
        let requestFD: Int32
        let watch: FileChangeWatch?
        let startup: StartupSignal

        init(
            engine: NetlinkEngine,
            delivery: SnapshotDelivery,
            wakeFD: Int32,
            requestFD: Int32,
            watch: FileChangeWatch?,
            startup: StartupSignal
        ) {
            self.engine = engine
            self.delivery = delivery
            self.wakeFD = wakeFD
            self.requestFD = requestFD
            self.watch = watch
            self.startup = startup
        }
    }

    /// Engine threads running now that follow `namespace` (`nil`: the caller's own), counted
    /// from the first instruction of a thread to its last, after its sockets are closed: what
    /// tests check to see that a stopped engine leaves nothing behind. (The thread itself stays in
    /// the caller's namespace, so `/proc` cannot tell which namespace it serves.)
    package static func threads(following namespace: String?) -> Int {
        runningThreads.withLock { $0[namespace ?? ""] ?? 0 }
    }

    private static let runningThreads = Mutex<[String: Int]>([:])

    private func run(_ context: ThreadContext) {
        let key = options.namespace ?? ""
        Self.runningThreads.withLock { $0[key, default: 0] += 1 }
        // Followed from here to the thread's end: its changes are read by this thread only.
        context.watch?.attach()
        defer { context.watch?.detach() }
        // Declared first, so it runs last: once the sockets are gone.
        defer {
            Self.runningThreads.withLock { threads in
                threads[key, default: 1] -= 1
                if threads[key] == 0 { threads[key] = nil }
            }
        }
        let logger = options.logger
        defer {
            shared.withLock { $0.running = false }
            queries.withLock { $0 = nil }
            context.delivery.finish()
        }
        let events: NetlinkSocket
        let queries: KernelQueries
        let eventCollector = MessageCollector()
        // Slots for np_receive_batch; a slot's pages become resident only once a datagram
        // reaches them (a storm touches the first page of each: 64 KiB).
        let buffer = ReceiveBuffer(size: 16 * NetlinkSocket.slotSize)
        do {
            let sockets: (events: NetlinkSocket, queries: KernelQueries)
            let filtered = options.filtersRoutesInKernel
            // The event socket, and the query socket, which keeps the event socket's route filter.
            let open = { () throws(NetlinkError) -> (events: NetlinkSocket, queries: KernelQueries) in
                let events = try NetlinkSocket()
                let queries = KernelQueries(
                    socket: try NetlinkSocket(),
                    filtering: filtered ? events.fileDescriptor : nil
                )
                return (events, queries)
            }
            if let namespace = options.namespace {
                // A socket stays in the namespace it was opened in, so both are opened by a thread
                // of their own that enters the followed namespace and ends. This thread stays in
                // the caller's: every thread it starts inherits its namespace (Dispatch starts
                // workers from the thread that wakes a task), and the agent's hooks, its waiting
                // threads and its notify socket belong in the agent's own namespace.
                sockets = try OSThread.run(in: namespace, open)
            } else {
                sockets = try open()
            }
            if sockets.queries.filterError != 0 {
                logger.notice(
                    "netlink: no route filter on the event socket; routes are dropped after reading them",
                    metadata: ["errno": "\(sockets.queries.filterError)"]
                )
            }
            events = sockets.events
            let effective = events.setReceiveBuffer(options.receiveBufferSize)
            logger.debug("netlink receive buffer", metadata: ["bytes": "\(effective)"])
            try events.subscribe()
            // Also used from callers' threads (target questions).
            queries = sockets.queries
            self.queries.withLock { $0 = queries }
            let (table, skipped) = try queries.dumpAll(filter: shared.withLock { $0.filter })
            shared.withLock {
                $0.table = table
                // A table of its own: nothing kept from an earlier run of this engine applies.
                $0.maps = nil
                $0.kernelRoutesGeneration = nil
                $0.statistics.skippedRoutes += skipped
                $0.running = true
            }
            publish(context, queries, cause: .initialDump, at: Date())
        } catch {
            context.startup.signal(error)
            return
        }
        context.startup.signal(nil)

        var fds = [
            pollfd(fd: events.fileDescriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: context.wakeFD, events: Int16(POLLIN), revents: 0),
            pollfd(fd: context.requestFD, events: Int16(POLLIN), revents: 0),
        ]
        if let watch = context.watch {
            if watch.descriptor >= 0 {
                fds.append(pollfd(fd: watch.descriptor, events: Int16(POLLIN), revents: 0))
            } else {
                logger.notice(
                    "\(watch.path) is not followed (no inotify): its changes are seen with the next kernel change",
                    metadata: ["errno": "\(watch.unavailableBecause)"]
                )
            }
        }
        // Set when a resync could not finish: retried every second until it does, since the
        // kernel will not report the lost messages again.
        var resyncPending = false
        while true {
            for index in fds.indices { fds[index].revents = 0 }
            let ready = poll(&fds, nfds_t(fds.count), resyncPending ? 1000 : -1)
            if ready < 0 {
                if errno == EINTR { continue }
                logger.error("netlink poll failed", metadata: ["errno": "\(errno)"])
                return
            }
            if fds[1].revents != 0 { return }
            // The file first: a snapshot published for netlink messages read in the same wake-up
            // then carries it too.
            let fileChanged = fds.count > 3 && fds[3].revents != 0 && context.watch?.consume() == true
            var overrun = resyncPending
            var published = false
            if fds[0].revents != 0 {
                let now = Date()
                let outcome = drain(events, buffer, eventCollector, queries, logger: logger)
                overrun = overrun || outcome.overrun
                if !overrun && outcome.changed {
                    publish(context, queries, cause: .update, at: now)
                    published = true
                }
            }
            if fileChanged && !published && !overrun { publish(context, queries, cause: .watchedFile, at: Date()) }
            // Asked for (a resume, a new ignore list), or a link left the ignore list: a dump.
            var requested: String?
            if fds[2].revents != 0 {
                var count: UInt64 = 0
                _ = read(context.requestFD, &count, 8)
                requested = shared.withLock { state in
                    defer { state.dumpRequest = nil }
                    return state.dumpRequest
                }
            }
            if requested == nil, shared.withLock({ $0.table.needsDump }) { requested = "a link is no longer ignored" }
            guard overrun || requested != nil else { continue }
            switch resync(
                context,
                queries: queries,
                events: events,
                eventCollector: eventCollector,
                buffer: buffer,
                requested: overrun ? nil : requested
            ) {
            case .converged: resyncPending = false
            case .failed: resyncPending = true
            case .stopping: return
            }
        }
    }

    /// Reads until the socket is empty, applying what arrives. Reports whether the kernel
    /// signalled an overrun (`ENOBUFS`) and whether the table changed.
    private func drain(
        _ socket: NetlinkSocket,
        _ buffer: ReceiveBuffer,
        _ collector: MessageCollector,
        _ queries: KernelQueries,
        logger: Logger
    ) -> (overrun: Bool, changed: Bool) {
        var overrun = false
        var changed = false
        var skipped: UInt64 = 0
        var received: UInt64 = 0
        var covering = false
        loop: while true {
            // Read per batch: an address watched during a long drain counts from the next one,
            // as the socket's filter lets its routes through from then on.
            let (outcome, more) = socket.receiveBatch(
                into: buffer,
                delivering: collector,
                keeping: NetlinkSocket.keptAddresses,
                watching: queries.watched
            )
            switch outcome {
            case .messages(let result):
                skipped += UInt64(result.skipped)
                covering = covering || result.covering != 0
                received += UInt64(result.skipped + result.delivered)
                // Apply in chunks so a long storm does not pile up parsed messages.
                if collector.messages.count >= 4096 { changed = apply(collector) || changed }
                // Fewer datagrams than slots: the queue was empty, no need to ask again.
                if !more { break loop }
            case .overrun where more:
                // Messages before the truncated datagram were handled; the rest are read on.
                overrun = true
            case .empty:
                break loop
            case .overrun:
                overrun = true
            case .failed(let code):
                logger.warning(
                    "netlink receive failed",
                    metadata: ["error": "\(NetlinkError(.receive, rawValue: code, context: "recv"))"]
                )
                // An unknown failure may have lost messages: recover as from an overrun.
                overrun = true
                break loop
            }
        }
        changed = apply(collector) || changed
        shared.withLock { state in
            state.statistics.messages += received
            state.statistics.skippedRoutes += skipped
            // A route the engine does not keep covers an address a target asked about: the
            // kernel's answer for it may have changed. Publish, so that it is asked again.
            if covering { state.routingGeneration &+= 1 }
        }
        return (overrun, changed || covering)
    }

    /// Applies and clears the collected messages; returns whether the table changed.
    private func apply(_ collector: MessageCollector) -> Bool {
        guard !collector.messages.isEmpty else { return false }
        // Cleared after, not copied before: a second reference to the array would make
        // removeAll(keepingCapacity:) allocate a new buffer, per batch.
        defer { collector.messages.removeAll(keepingCapacity: true) }
        return shared.withLock { state in
            let (routing, probe) = (state.table.routingGeneration, state.table.probeGeneration)
            var changed = false
            for message in collector.messages where state.table.apply(message) { changed = true }
            if state.table.routingGeneration != routing { state.routingGeneration &+= 1 }
            if state.table.probeGeneration != probe { state.probeGeneration &+= 1 }
            return changed
        }
    }

    /// How a resync ended.
    private enum ResyncOutcome {
        /// The table equals a dump with every later notification applied.
        case converged
        /// Dumps kept failing: the table may be stale; try again later.
        case failed
        /// A stop was requested meanwhile.
        case stopping
    }

    /// Re-dumps until a dump and the notifications that followed it are applied with no overrun
    /// in between. An overrun during the dump makes the fresh table stale again, and the kernel
    /// reports a congestion only once, so there is no second chance to notice it: dump again, as
    /// often as it takes (a storm ends). Only failing dumps are bounded.
    ///
    /// `requested`: why a dump was asked for when no overrun happened (it is not counted as one).
    private func resync(
        _ context: ThreadContext,
        queries: KernelQueries,
        events: NetlinkSocket,
        eventCollector: MessageCollector,
        buffer: ReceiveBuffer,
        requested: String? = nil
    ) -> ResyncOutcome {
        let logger = options.logger
        if requested == nil { shared.withLock { $0.statistics.overruns += 1 } }
        var failures = 0
        var attempts = 0
        while true {
            if Self.stopRequested(context.wakeFD) { return .stopping }
            attempts += 1
            do {
                let (table, skipped) = try queries.dumpAll(filter: shared.withLock { $0.filter })
                // Notifications that arrived during the dump are newer than or equal to it:
                // applying them on top converges (each object's last message wins).
                shared.withLock { state in
                    state.table = table
                    // A new table: whatever changed meanwhile, ask the kernel again.
                    state.routingGeneration &+= 1
                    state.probeGeneration &+= 1
                    state.statistics.resyncs += 1
                    state.statistics.skippedRoutes += skipped
                }
                if drain(events, buffer, eventCollector, queries, logger: logger).overrun {
                    shared.withLock { $0.statistics.overruns += 1 }
                    continue
                }
                if let requested {
                    logger.notice("kernel state re-read: \(requested)", metadata: ["attempts": "\(attempts)"])
                } else {
                    logger.notice("netlink overrun: state re-dumped", metadata: ["attempts": "\(attempts)"])
                }
                publish(context, queries, cause: .resync, at: Date())
                return .converged
            } catch {
                failures += 1
                logger.warning("re-dump after overrun failed", metadata: ["error": "\(error)"])
                if failures >= 5 {
                    publish(context, queries, cause: .resync, at: Date())
                    return .failed
                }
            }
        }
    }

    /// Whether `stop()` has signalled, without consuming the signal.
    private static func stopRequested(_ wakeFD: Int32) -> Bool {
        var fd = pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)
        return poll(&fd, 1, 0) > 0
    }

    private func publish(_ context: ThreadContext, _ queries: KernelQueries, cause: KernelSnapshot.Cause, at time: Date)
    {
        // The kernel's routes to the internet are asked after the batch is applied, outside the
        // lock, so the answer reflects at least every change in the batch; and only when the
        // batch could change them: a kept route (a default route, or one covering the probe) or
        // a rule changed. A link's admin state or an address alone cannot: the routes the kernel
        // flushes with them are flushed in the mirror too. Two round trips on every admin toggle
        // doubled the engine's time to publish it (BENCHMARKS.md, "The admin regression"). Only
        // the rules are copied: a copy of the table would make the next change copy it whole
        // (copy on write).
        let (generation, rules, asked) = shared.withLock { state in
            (state.probeGeneration, state.table.rules, state.kernelRoutesGeneration)
        }
        var kernelRoutes: [KernelRoute]?
        if asked != generation {
            kernelRoutes = queries.kernelRoutes(explainedBy: rules)
            shared.withLock { $0.kernelRoutesGeneration = generation }
        }
        yield(context, cause: cause, at: time, kernelRoutes: kernelRoutes)
    }

    /// Hands out the current state as the next generation, with `kernelRoutes` stored first when given.
    private func yield(
        _ context: ThreadContext,
        cause: KernelSnapshot.Cause,
        at time: Date,
        kernelRoutes: [KernelRoute]?
    ) {
        var snapshot = shared.withLock { state in
            state.generation += 1
            if let kernelRoutes { state.kernelRoutes = kernelRoutes }
            if state.maps?.routingGeneration != state.routingGeneration { state.maps = SnapshotMaps(of: state) }
            return Self.snapshot(of: state, cause: cause, at: time)
        }
        #if NETPATH_BENCH
            snapshot.publishedAt = Date()
        #endif
        context.delivery.deliver(snapshot)
    }

    /// The current state as a snapshot (the last published generation), for a reader that asks
    /// rather than follows the stream.
    package func snapshot() -> KernelSnapshot {
        shared.withLock { Self.snapshot(of: $0, cause: .update, at: Date()) }
    }

    private static func snapshot(of state: Shared, cause: KernelSnapshot.Cause, at time: Date) -> KernelSnapshot {
        // A reader's snapshot between a routing change and the next publication builds its own.
        let maps =
            state.maps.flatMap { $0.routingGeneration == state.routingGeneration ? $0 : nil } ?? SnapshotMaps(of: state)
        return KernelSnapshot(
            links: state.table.links.values.sorted { $0.index < $1.index },
            addresses: maps.addresses,
            defaultRoutes: maps.defaultRoutes,
            kernelRoutes: state.kernelRoutes,
            routeCount: state.table.routeCount,
            routingGeneration: state.routingGeneration,
            generation: state.generation,
            receivedAt: time,
            cause: cause,
            statistics: state.statistics
        )
    }

}

/// A one-shot latch that hands the thread's startup result to the caller of `start()`.
/// How the engine's thread tells `start` that its first dump is loaded, or why it failed.
private struct Startup {
    var done = false
    var error: NetlinkError?
}

private typealias StartupSignal = ConditionLock<Startup>

extension ConditionLock where State == Startup {
    fileprivate convenience init() { self.init(Startup()) }

    fileprivate func signal(_ error: NetlinkError?) {
        withLock { $0 = Startup(done: true, error: error) }
        broadcast()
    }

    fileprivate func wait() -> NetlinkError? {
        wait(until: .max) { $0.done }
        return withLock { $0.error }
    }
}

extension Int32 {
    fileprivate var isTrue: Bool { self != 0 }
}
