// SPDX-License-Identifier: Apache-2.0
// Shared by the hook dispatcher and the plugin runner: both queue events per subject and drop
// the ones a newer event makes obsolete, by this one table.
extension Event {
    /// Whether this event makes `older`, still queued for the same subject, obsolete.
    ///
    /// A later event supersedes a queued one when it reports the newer value of the same piece
    /// of state, so running the older one first would only replay a state that no longer holds:
    ///
    /// | queued | later | why |
    /// |---|---|---|
    /// | `up` / `down` | `up` / `down` | usability of the interface; the later is the current one |
    /// | `carrier-up` / `carrier-down` | `carrier-up` / `carrier-down` | carrier |
    /// | `address-added` / `address-removed` of address A | either, of the same A (and prefix) | A's presence |
    /// | interface `changed` | interface `changed` | the later carries the whole current state; the `changes` lists are merged |
    /// | `satisfied` / `unsatisfied` | `satisfied` / `unsatisfied` | the path's status |
    /// | path `changed` | path `changed` | the later carries the whole current path; `previous_interface` is taken from the older (what hooks last saw) |
    /// | path `changed` | `unsatisfied` | the changed path is gone |
    /// | `connectivity-changed` | `connectivity-changed` | the connectivity; `previous_connectivity` is taken from the older (what hooks last saw) |
    ///
    /// `added` and `removed` are never superseded, and nothing is superseded across subjects or
    /// across the rows (`changed` never drops a queued `satisfied`: a rule on `satisfied` alone
    /// would lose the transition). The later event is always queued, so the newest state of every
    /// subject is always dispatched.
    package func supersedes(_ older: Event) -> Bool {
        guard subject == older.subject, scope == older.scope else { return false }
        switch (older.name, name) {
        case (.up, .up), (.up, .down), (.down, .up), (.down, .down):
            return true
        case (.carrierUp, .carrierUp), (.carrierUp, .carrierDown), (.carrierDown, .carrierUp),
            (.carrierDown, .carrierDown):
            return true
        case (.addressAdded, .addressAdded), (.addressAdded, .addressRemoved), (.addressRemoved, .addressAdded),
            (.addressRemoved, .addressRemoved):
            guard let mine = address, let theirs = older.address else { return false }
            return mine.address == theirs.address && mine.prefixLength == theirs.prefixLength
        case (.satisfied, .satisfied), (.satisfied, .unsatisfied), (.unsatisfied, .satisfied),
            (.unsatisfied, .unsatisfied):
            return scope == .path
        case (.changed, .changed), (.connectivityChanged, .connectivityChanged):
            return true
        case (.changed, .unsatisfied):
            return scope == .path
        default:
            return false
        }
    }

    /// This event, taking over what `older` (which it supersedes) told that it does not: the
    /// previous primary of a path change (what handlers last saw), the change list of an
    /// interface change.
    package func absorbing(_ older: Event) -> Event {
        if name == .connectivityChanged, older.name == .connectivityChanged {
            var merged = self
            merged.previousConnectivity = older.previousConnectivity
            return merged
        }
        guard name == .changed, older.name == .changed else { return self }
        var merged = self
        switch scope {
        case .path:
            merged.previousInterface = older.previousInterface
        case .interface:
            merged.previousInterface = older.previousInterface ?? previousInterface
            merged.changes = older.changes + changes.filter { !older.changes.contains($0) }
        default:
            break
        }
        return merged
    }
}

extension Event {
    /// The piece of its subject's state this event reports: `usable` (up/down), `carrier`,
    /// `presence` (added/removed), one address, an interface's other properties (`changed`), or,
    /// for a path, the path as a whole.
    ///
    /// A bounded queue that must drop one of a subject's events drops one whose piece a later
    /// queued event reports again: that loses a transition, never the final state. Wider than
    /// ``supersedes(_:)`` on purpose: `removed` reports presence again after `added`, but a rule on
    /// `added` must still see it unless the queue overflows.
    package var reportedState: String {
        switch (scope, name) {
        case (.path, _): return "path"
        case (_, .up), (_, .down): return "usable"
        case (_, .carrierUp), (_, .carrierDown): return "carrier"
        case (_, .added), (_, .removed): return "presence"
        case (_, .addressAdded), (_, .addressRemoved):
            return "address " + (address.map { "\($0.address)/\($0.prefixLength)" } ?? "")
        default: return "properties"
        }
    }
}

extension Array where Element == Event {
    /// The position of the event a bounded queue should drop first: the oldest whose piece of
    /// state (``Event/reportedState``) a later element reports again, else the oldest.
    package var overflowVictim: Int? {
        guard !isEmpty else { return nil }
        var later: Set<String> = []
        var victim: Int?
        // From the newest back: the last index found whose piece comes again later is the oldest.
        for index in indices.reversed() {
            let piece = self[index].reportedState
            if later.contains(piece) { victim = index }
            later.insert(piece)
        }
        return victim ?? startIndex
    }
}
