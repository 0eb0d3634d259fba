// SPDX-License-Identifier: Apache-2.0

/// Hold-down for flapping links: holds the events of each interface or policy until it has been
/// quiet for ``window``, then emits only the net transition.
///
/// A pure value with an injected clock: the caller passes the time to ``receive(_:at:)`` and
/// ``tick(at:)``, and sleeps until ``nextDeadline`` between calls.
///
/// ```swift
/// var settler = Settler(window: .seconds(2))
/// dispatch(settler.receive(events, at: clock.now))   // usually nothing: held
/// dispatch(settler.tick(at: clock.now))              // after the window: the net change
/// ```
///
/// Events are grouped by ``Event/subject``. The net transition is the diff between the state
/// before the burst and the state after it, computed with ``PathTracker``'s own diffing, so a
/// settled event looks exactly like an unsettled one: `up`, `down`, `up` within the window is
/// nothing at all (or a `changed` if, say, the MTU differs afterwards); `satisfied`,
/// `unsatisfied`, `satisfied` is nothing, or a path `changed` if the primary moved; an address
/// added and removed again is nothing.
///
/// The state before a burst is the one the settler last saw for that subject, so it must see
/// every event: startup events pass straight through and record it (when `startup_events` is
/// off, hand them to ``remember(_:)`` instead). A burst whose previous state is unknown, or whose
/// events carry no state, is emitted unchanged rather than guessed at.
///
/// - Important: No final state is lost: a subject that never goes quiet is flushed anyway once
///   its oldest held event is ``maximumHold`` old.
///
/// Memory is bounded too: a burst keeps at most ``maximumHeldEvents`` events, whatever a link
/// does within ``maximumHold``. The net transition needs only the state before the burst and
/// its last event; the events in between matter only for a burst emitted unchanged, and of
/// those the ones dropped first are those whose piece of state a later one reports again
/// (``NetPathCore/Event/reportedState``).
package struct Settler: Sendable {
    /// The clock's instants.
    package typealias Instant = ContinuousClock.Instant

    /// How long a subject must be quiet before its net change is emitted; zero passes events through.
    package let window: Duration
    /// The longest an event is held while its subject keeps changing.
    package let maximumHold: Duration

    private enum Snapshot: Hashable, Sendable {
        case interface(Interface)
        case path(NetworkPath)
    }

    private struct Burst: Sendable {
        var sequence: Int
        var events: [Event]
        /// The state before the burst: `.some(nil)` for an interface known to be absent, `nil` when unknown.
        var before: Snapshot??
        var first: Instant
        var last: Instant
    }

    /// The most events one subject's burst holds.
    package static let maximumHeldEvents = 64

    private var bursts: [String: Burst] = [:]
    private var known: [String: Snapshot] = [:]
    private var sequence = 0

    /// Creates a settler.
    ///
    /// - Parameters:
    ///   - window: The agent's `settle`.
    ///   - maximumHold: The longest a burst is held; by default ten windows.
    package init(window: Duration, maximumHold: Duration? = nil) {
        self.window = max(window, .zero)
        self.maximumHold = max(maximumHold ?? window * 10, self.window)
    }

    /// Whether nothing is held.
    package var isIdle: Bool { bursts.isEmpty }

    /// The events held, over all subjects.
    package var heldEvents: Int { bursts.values.reduce(0) { $0 + $1.events.count } }

    /// When ``tick(at:)`` next has something to emit; `nil` when nothing is held.
    package var nextDeadline: Instant? {
        bursts.values.map(deadline).min()
    }

    /// Takes new events; returns those to dispatch now: bursts that were already due, then events
    /// that pass straight through (all of them when ``window`` is zero, and startup events).
    package mutating func receive(_ events: [Event], at now: Instant) -> [Event] {
        // Nothing is ever held with no window, so nothing is due and no state before a burst is
        // ever asked for: the events pass as they are (every kernel change goes through here,
        // before its hooks are spawned).
        if window == .zero { return events }
        var out = tick(at: now)
        for event in events {
            let subject = event.subject
            if event.startup && bursts[subject] == nil {
                learn(event)
                out.append(event)
                continue
            }
            if var burst = bursts[subject] {
                burst.events.append(event)
                while burst.events.count > Self.maximumHeldEvents, let victim = burst.events.overflowVictim {
                    burst.events.remove(at: victim)
                }
                burst.last = now
                bursts[subject] = burst
            } else {
                let before: Snapshot??
                if let snapshot = known[subject] {
                    before = .some(snapshot)
                } else if event.scope == .interface && event.name == .added {
                    before = .some(nil)
                } else {
                    before = nil
                }
                sequence += 1
                bursts[subject] = Burst(sequence: sequence, events: [event], before: before, first: now, last: now)
            }
            learn(event)
        }
        return out
    }

    /// Emits the net change of every burst that is due at `now`, oldest burst first.
    package mutating func tick(at now: Instant) -> [Event] {
        let due = bursts.filter { deadline($0.value) <= now }.sorted { $0.value.sequence < $1.value.sequence }
        var out: [Event] = []
        for (subject, burst) in due {
            bursts[subject] = nil
            out += Self.net(burst)
        }
        return out
    }

    /// Emits every held burst now, e.g. before a graceful shutdown or a reload.
    package mutating func flush() -> [Event] {
        let all = bursts.values.sorted { $0.sequence < $1.sequence }
        bursts = [:]
        return all.flatMap(Self.net)
    }

    /// Records the state `events` describe without emitting them, so that later bursts have a
    /// baseline (for startup events that are not dispatched).
    package mutating func remember(_ events: [Event]) {
        guard window > .zero else { return }  // read only by bursts, which a zero window never holds
        for event in events { learn(event) }
    }

    // MARK: - Internals

    private func deadline(_ burst: Burst) -> Instant {
        min(burst.last + window, burst.first + maximumHold)
    }

    private mutating func learn(_ event: Event) {
        let subject = event.subject
        switch event.scope {
        case .interface:
            if event.name == .removed {
                // Absent: a later burst starting with "added" knows its baseline anyway.
                known[subject] = nil
            } else {
                known[subject] = event.interfaceState.map { .interface($0) }
            }
        case .path:
            known[subject] = event.path.map { .path($0) }
        default:
            // A scope this settler does not know has no baseline to diff against.
            known[subject] = nil
        }
    }

    /// The net transition of a burst: a diff of the state before it and the state after it.
    private static func net(_ burst: Burst) -> [Event] {
        guard let last = burst.events.last, let before = burst.before else { return burst.events }
        switch last.scope {
        case .interface:
            let after: Interface?
            if last.name == .removed {
                after = nil
            } else if let state = last.interfaceState {
                after = state
            } else {
                return burst.events
            }
            let old: [Interface]
            switch before {
            case nil: old = []
            case .interface(let interface)?: old = [interface]
            case .path?: return burst.events
            }
            return PathTracker.interfaceEvents(from: old, to: after.map { [$0] } ?? [], at: last.time)
        case .path:
            guard case .path(let old)? = before, let new = last.path else { return burst.events }
            return PathTracker.pathEvents(from: old, to: new, at: last.time)
        default:
            return burst.events
        }
    }
}
