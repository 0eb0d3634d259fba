// SPDX-License-Identifier: Apache-2.0

/// When to probe which interface: the agent's connectivity timetable, as a pure value.
///
/// The rules (docs/connectivity.md, "When probes run"):
/// - A change that can change the answer (``trigger(_:at:)``: a new candidate, address or default
///   route, a new primary) asks for a probe soon: after ``debounce``, and never sooner than
///   ``spacing`` after the interface's last probe began, so a flapping link is probed at most
///   once per ``spacing`` however often it flaps. Triggers that arrive while a probe is due
///   merge into it.
/// - At most one probe per interface is in flight; a trigger during one asks for another once it
///   ends.
/// - After a probe: `full` is probed again after ``interval``; anything else after a back-off
///   that starts at ``initialBackoff`` and doubles up to ``interval``. A trigger starts the
///   back-off again.
///
/// Time is passed in, so tests need no clock.
package struct ProbeScheduler: Sendable {
    package typealias Instant = ContinuousClock.Instant

    /// The period while `full`, and the longest back-off.
    package var interval: Duration
    /// The first back-off while not `full`.
    package var initialBackoff: Duration
    /// The delay between a change and its probe, so that the changes of one event batch merge.
    package var debounce: Duration
    /// The shortest time between the starts of two probes of one interface caused by changes.
    package var spacing: Duration

    private struct Entry {
        var due: Instant?
        var inFlight = false
        var again = false
        var lastStart: Instant?
        var backoff: Duration
        /// No longer probed, but its probe is still in flight: forgotten when that ends.
        var retired = false
    }

    private var entries: [Int32: Entry] = [:]

    package init(
        interval: Duration,
        initialBackoff: Duration = .seconds(1),
        debounce: Duration = .milliseconds(100),
        spacing: Duration = .seconds(1)
    ) {
        self.interval = interval
        self.initialBackoff = min(initialBackoff, interval)
        self.debounce = debounce
        self.spacing = spacing
    }

    /// The interfaces the timetable knows.
    package var interfaces: Set<Int32> { Set(entries.filter { !$0.value.retired }.keys) }

    /// Whether a probe of `index` is in flight.
    package func isInFlight(_ index: Int32) -> Bool { entries[index]?.inFlight ?? false }

    /// When the probe of `index` is due, if one is and none is in flight.
    package func due(_ index: Int32) -> Instant? { entries[index].flatMap { $0.inFlight ? nil : $0.due } }

    /// Something changed that can change `index`'s answer: probe it soon.
    package mutating func trigger(_ index: Int32, at now: Instant) {
        var entry = entries[index] ?? Entry(backoff: initialBackoff)
        entry.backoff = initialBackoff
        entry.retired = false
        if entry.inFlight {
            entry.again = true
        } else {
            entry.due = min(entry.due ?? .distantFuture, soonest(entry, at: now))
        }
        entries[index] = entry
    }

    /// Probe `index` at once (`netpathctl probe`): unless one is in flight, then right after it.
    package mutating func probeNow(_ index: Int32, at now: Instant) {
        var entry = entries[index] ?? Entry(backoff: initialBackoff)
        entry.retired = false
        if entry.inFlight {
            entry.again = true
        } else {
            entry.due = now
        }
        entries[index] = entry
    }

    /// The interfaces whose probe is due at `now`, now marked in flight, in index order.
    package mutating func start(at now: Instant) -> [Int32] {
        // Retired entries kept only for their spacing are dropped once it has passed.
        entries = entries.filter { _, entry in
            !entry.retired || entry.inFlight || (entry.lastStart.map { $0 + spacing > now } ?? false)
        }
        var started: [Int32] = []
        for index in entries.keys.sorted() {
            guard var entry = entries[index], !entry.inFlight, !entry.retired, let due = entry.due, due <= now else {
                continue
            }
            entry.inFlight = true
            entry.again = false
            entry.due = nil
            entry.lastStart = now
            entries[index] = entry
            started.append(index)
        }
        return started
    }

    /// The probe of `index` ended with `connectivity` (after hysteresis): schedule the next.
    package mutating func finished(_ index: Int32, connectivity: Connectivity, at now: Instant) {
        guard var entry = entries[index] else { return }
        if entry.retired {
            entry.inFlight = false
            entries[index] = entry
            return
        }
        entry.inFlight = false
        if entry.again {
            entry.again = false
            entry.due = soonest(entry, at: now)
        } else if connectivity == .full {
            entry.backoff = initialBackoff
            entry.due = now + interval
        } else {
            entry.due = now + entry.backoff
            entry.backoff = min(entry.backoff * 2, interval)
        }
        entries[index] = entry
    }

    /// `index` is no longer probed. A probe in flight still counts (no second one starts
    /// beside it if the interface comes back), and its end forgets the interface.
    ///
    /// The time its last probe began is kept for ``spacing``: a link that flaps down and up
    /// is probed no more often than one that stays up.
    package mutating func remove(_ index: Int32) {
        guard var entry = entries[index] else { return }
        guard entry.inFlight || entry.lastStart != nil else {
            entries[index] = nil
            return
        }
        entry.retired = true
        entry.again = false
        entry.due = nil
        entries[index] = entry
    }

    /// The earliest due time of an interface with no probe in flight.
    package var nextDeadline: Instant? {
        entries.values.compactMap { $0.inFlight || $0.retired ? nil : $0.due }.min()
    }

    private func soonest(_ entry: Entry, at now: Instant) -> Instant {
        max(now + debounce, entry.lastStart.map { $0 + spacing } ?? now)
    }
}

extension ContinuousClock.Instant {
    fileprivate static var distantFuture: Self { .now + .seconds(100 * 365 * 86_400) }
}
