import NetPathCore

// The hook dispatcher's obsolescence table (NetPathDispatch's `Event.supersedes`), which this
// module cannot import: NetPathDispatch sits above it. Kept identical on purpose; it belongs in
// NetPathCore, where both could share it.
extension Event {
    /// Whether this event makes `older`, still queued for the same subject, obsolete: it reports
    /// the newer value of the same piece of state (usability, carrier, one address's presence,
    /// the whole interface or path). `added` and `removed` are never obsolete.
    func obsoletes(_ older: Event) -> Bool {
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
        case (.changed, .changed):
            return true
        case (.changed, .unsatisfied):
            return scope == .path
        default:
            return false
        }
    }

    /// This event, keeping what the obsolete `older` said that it does not: a path change's
    /// previous primary (what the plugin last saw), an interface change's list of changes.
    func absorbingObsolete(_ older: Event) -> Event {
        guard name == .changed, older.name == .changed else { return self }
        var merged = self
        switch scope {
        case .path:
            merged.previousInterface = older.previousInterface
        case .interface:
            merged.previousInterface = older.previousInterface ?? previousInterface
            merged.changes = older.changes + changes.filter { !older.changes.contains($0) }
        }
        return merged
    }
}
