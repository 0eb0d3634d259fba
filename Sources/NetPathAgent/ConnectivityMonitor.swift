// SPDX-License-Identifier: Apache-2.0

import Logging
import NetPathControl
import NetPathCore

/// The agent's connectivity probing: which interfaces to probe and when (``ProbeScheduler``),
/// what their results add up to (``ConnectivityTracker``), and the probes in flight.
///
/// Owned by the main loop and touched only there. It never waits for a probe: each runs in a
/// task of its own, whose result comes back through the ``LoopInbox`` as
/// ``LoopInbox/Input/probed(_:sequence:result:)``; at most one per interface is in flight, so at
/// most one result per interface waits there.
final class ConnectivityMonitor {
    /// Completes a `probe` request of the control socket.
    typealias Reply = @Sendable (ControlReply) -> Void

    private let inbox: LoopInbox
    private let logger: Logger
    private let makeProber: (@Sendable () -> any ConnectivityProbing)?
    private var prober: (any ConnectivityProbing)?
    private(set) var settings: ConnectivitySettings?
    private var scheduler = ProbeScheduler(interval: .seconds(300))
    private var trackers: [Int32: ConnectivityTracker] = [:]
    /// The raw state last observed (before connectivity is laid over it).
    private var interfaces: [Int32: Interface] = [:]
    private var sequence: UInt64 = 0
    /// The last probe started under settings that no longer hold: its result, and those before
    /// it, are not counted (a result of the old method must not decide the new trackers' state).
    private var retiredSequence: UInt64 = 0
    /// `probe` requests waiting for results.
    private var waiters: [Waiter] = []
    private var timer: Task<Void, Never>?
    private var timerDeadline: ContinuousClock.Instant?
    /// Probes started since the agent started (metrics, tests).
    private(set) var probesStarted = 0

    private struct Waiter {
        var reply: Reply
        /// Per interface: the first probe sequence number whose result counts.
        var pending: [Int32: UInt64]
        var reports: [ProbeReport] = []
    }

    init(inbox: LoopInbox, logger: Logger, makeProber: (@Sendable () -> any ConnectivityProbing)?) {
        self.inbox = inbox
        self.logger = logger
        self.makeProber = makeProber
    }

    /// Whether probes can be made: `[connectivity]` is configured and the agent has a prober.
    var isProbing: Bool { settings != nil && prober != nil }

    // MARK: Configuration

    /// Applies `[connectivity]` (at start and on every reload). Changed settings start over:
    /// every state goes back to unknown and every interface is probed again.
    func configure(_ new: ConnectivitySettings?) {
        guard new != settings else { return }
        if new != nil, makeProber == nil {
            logger.warning(
                "[connectivity] is configured, but this netpathd has no connectivity prober (the probe helper is not available in this build): nothing is probed and every interface's connectivity stays unknown"
            )
        }
        settings = new
        if settings != nil, prober == nil, let makeProber { prober = makeProber() }
        trackers = [:]
        retiredSequence = sequence
        // The timetable stays: probes in flight stay counted, so that no second one starts beside them.
        scheduler.interval = new?.interval ?? .seconds(300)
        scheduler.initialBackoff = min(.seconds(1), scheduler.interval)
        let now = ContinuousClock.now
        for (index, interface) in interfaces {
            // An interface no longer covered is forgotten, answering whoever waits for its probe.
            if covers(interface) { scheduler.trigger(index, at: now) } else { forget(index) }
        }
        if !isProbing {
            for waiter in waiters {
                waiter.reply(.failure("connectivity probing stopped before the probe ended"))
            }
            waiters = []
        }
    }

    private func covers(_ interface: Interface) -> Bool {
        isProbing && settings?.probes(interface) == true
    }

    // MARK: State

    /// Takes a new kernel state before it is evaluated: interfaces that became candidates, or
    /// whose addresses or default routes changed, are probed soon; those no longer probed go back
    /// to unknown at once.
    func observe(_ state: SystemState, at now: ContinuousClock.Instant) {
        guard isProbing else {
            // Nothing is probed, so nothing is scheduled or forgotten: every kernel change passes
            // here before its hooks are spawned, and copying each interface in would delay them for
            // nothing. ``configure(_:)`` forgot what was probed; the next state after probing
            // starts again fills ``interfaces`` anew.
            if !interfaces.isEmpty {
                for index in interfaces.keys { forget(index) }
                interfaces = [:]
            }
            return
        }
        var seen: Set<Int32> = []
        for interface in state.interfaces {
            seen.insert(interface.index)
            let before = interfaces[interface.index]
            interfaces[interface.index] = interface
            guard covers(interface) else {
                // Only what was probed has anything to forget: not every interface on every change.
                if before.map(covers) == true { forget(interface.index) }
                continue
            }
            let changed =
                before.map {
                    !covers($0) || $0.addresses != interface.addresses || $0.defaultRoutes != interface.defaultRoutes
                } ?? true
            if changed || !scheduler.interfaces.contains(interface.index) {
                scheduler.trigger(interface.index, at: now)
            }
        }
        for index in interfaces.keys where !seen.contains(index) {
            interfaces[index] = nil
            forget(index)
        }
    }

    /// Takes the paths after an evaluation: a new primary is probed soon (its answer is now the path's).
    func observe(paths old: [NetworkPath], _ new: [NetworkPath], at now: ContinuousClock.Instant) {
        guard isProbing else { return }
        let before = Dictionary(old.map { ($0.policy, $0.primary?.index) }, uniquingKeysWith: { a, _ in a })
        for path in new {
            guard let primary = path.primary?.index, before[path.policy] != primary,
                let interface = interfaces[primary], covers(interface)
            else { continue }
            scheduler.trigger(primary, at: now)
        }
    }

    private func forget(_ index: Int32) {
        scheduler.remove(index)
        trackers[index] = nil
        for i in waiters.indices where waiters[i].pending[index] != nil {
            waiters[i].pending[index] = nil
            let name = interfaces[index]?.name ?? "#\(index)"
            waiters[i].reports.append(
                ProbeReport(
                    interface: name,
                    verdict: .unknown,
                    connectivity: .unknown,
                    evidence: "no longer probed: not a candidate (no carrier, address or default route) or gone"
                )
            )
        }
        answerCompleteWaiters()
    }

    /// `state` with each probed interface's connectivity laid over it.
    func overlay(_ state: SystemState) -> SystemState {
        guard !trackers.isEmpty else { return state }
        var copy = state
        copy.interfaces = state.interfaces.map { interface in
            trackers[interface.index].map { $0.applied(to: interface) } ?? interface
        }
        return copy
    }

    // MARK: Probes

    /// Starts the probes that are due, and arms the timer for the next.
    func pump(at now: ContinuousClock.Instant = .now) {
        if let prober, let settings {
            for index in scheduler.start(at: now) {
                guard let interface = interfaces[index] else { continue }
                sequence += 1
                probesStarted += 1
                let request = ProbeRequest(
                    interface: interface.name,
                    index: index,
                    method: settings.method,
                    timeout: settings.timeout
                )
                let number = sequence
                Task { [inbox] in
                    let result = await prober.probe(request)
                    inbox.post(.probed(index, sequence: number, result: result))
                }
            }
        }
        arm()
    }

    private func arm() {
        guard let deadline = scheduler.nextDeadline else {
            timer?.cancel()
            timer = nil
            timerDeadline = nil
            return
        }
        if let pending = timerDeadline, pending == deadline { return }
        timer?.cancel()
        timerDeadline = deadline
        timer = Task { [inbox] in
            try? await Task.sleep(until: deadline, clock: .continuous)
            if !Task.isCancelled { inbox.post(.probeTick) }
        }
    }

    /// The timer fired.
    func tick() {
        timerDeadline = nil
    }

    /// A probe ended; returns whether anything the state shows changed (connectivity, portal,
    /// round trip, loss or evidence).
    func received(
        _ index: Int32,
        sequence number: UInt64,
        result: ProbeResult,
        at now: ContinuousClock.Instant
    ) -> Bool {
        guard number > retiredSequence, let settings, let interface = interfaces[index], covers(interface) else {
            scheduler.finished(index, connectivity: .unknown, at: now)
            return false
        }
        var tracker = trackers[index] ?? ConnectivityTracker(settings)
        let before = tracker
        let changed = tracker.record(result)
        trackers[index] = tracker
        scheduler.finished(index, connectivity: tracker.connectivity, at: now)
        if changed {
            logger.notice(
                "connectivity \(before.connectivity) → \(tracker.connectivity)",
                metadata: ["interface": .string(interface.name), "evidence": .string(tracker.evidence ?? "")]
            )
        }
        let report = ProbeReport(
            interface: interface.name,
            verdict: result.connectivity,
            connectivity: tracker.connectivity,
            portalURL: result.portalURL,
            roundTripMilliseconds: result.roundTrip?.milliseconds,
            loss: result.loss,
            evidence: tracker.evidence ?? result.evidence
        )
        for i in waiters.indices {
            if let first = waiters[i].pending[index], number >= first {
                waiters[i].pending[index] = nil
                waiters[i].reports.append(report)
            }
        }
        answerCompleteWaiters()
        return tracker != before
    }

    /// Probes every interface probing covers now, outside the schedule (after a resume from
    /// suspend, when every verdict is stale); returns how many.
    @discardableResult
    func probeAllNow(at now: ContinuousClock.Instant) -> Int {
        guard settings != nil, isProbing else { return 0 }
        let chosen = interfaces.values.filter(covers)
        for interface in chosen { scheduler.probeNow(interface.index, at: now) }
        return chosen.count
    }

    // MARK: netpathctl probe

    /// Probes `name` (or every probed interface) now, and replies when the probes end.
    func probeNow(_ name: String?, reply: @escaping Reply, at now: ContinuousClock.Instant) {
        guard settings != nil else {
            reply(
                .failure(
                    "connectivity probing is off: add a [connectivity] table to the configuration (docs/connectivity.md)"
                )
            )
            return
        }
        guard isProbing else {
            reply(.failure("connectivity probing is unavailable: this netpathd has no probe helper"))
            return
        }
        let chosen: [Interface]
        if let name {
            guard let interface = interfaces.values.first(where: { $0.name == name }) else {
                reply(.failure("no interface named \(name.escapingControlCharacters)"))
                return
            }
            guard covers(interface) else {
                reply(
                    .failure(
                        "\(name.escapingControlCharacters) is not probed: it is not a candidate (no carrier, usable address or default route), or [connectivity] interfaces does not name it"
                    )
                )
                return
            }
            chosen = [interface]
        } else {
            chosen = interfaces.values.filter(covers).sorted { $0.index < $1.index }
            guard !chosen.isEmpty else {
                reply(.failure("no interface is probed now: none is a candidate that [connectivity] covers"))
                return
            }
        }
        var pending: [Int32: UInt64] = [:]
        for interface in chosen {
            // The result that counts is the next probe started: one in flight began before the ask.
            pending[interface.index] = sequence + 1
            scheduler.probeNow(interface.index, at: now)
        }
        // Every probe started from here has a number above `sequence`; one already in flight
        // does not, and its end starts the fresh one.
        waiters.append(Waiter(reply: reply, pending: pending))
    }

    private func answerCompleteWaiters() {
        let done = waiters.filter { $0.pending.isEmpty }
        waiters.removeAll { $0.pending.isEmpty }
        for waiter in done {
            waiter.reply(ControlReply(ok: true, probes: waiter.reports.sorted { $0.interface < $1.interface }))
        }
    }

    /// Stops the timer; probes in flight end on their own, their results unread.
    func stop() {
        timer?.cancel()
        timer = nil
        for waiter in waiters { waiter.reply(.failure("netpathd is stopping")) }
        waiters = []
    }

    /// Each probed interface's state, for metrics.
    var states: [(name: String, tracker: ConnectivityTracker)] {
        trackers.compactMap { index, tracker in interfaces[index].map { ($0.name, tracker) } }.sorted {
            $0.name < $1.name
        }
    }
}
