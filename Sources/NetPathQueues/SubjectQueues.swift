// SPDX-License-Identifier: Apache-2.0

import NetPathCore

// Public, in a module of its own that the library does not re-export: the dispatchers
// (NetPathDispatch's hooks, NetPathPlugin's plugins) are other modules, and a generic of theirs
// was compiled for them only in its unspecialized form while it was `package` in NetPathCore
// (-cross-module-optimization hands on public bodies only). That form looked up the metadata of
// `SubjectQueues<HookJob>`, its `Drop`, its dictionary and arrays on every event, and copied
// items through value witnesses, all on each link change's way to its hook's spawn
// (BENCHMARKS.md, "`SubjectQueues` public in a module of its own").

/// Something waiting in a ``SubjectQueues``: an event, or a job that carries one.
public protocol SubjectQueueItem: Sendable {
    /// The event the item dispatches. A queue may replace it with the newer event that absorbed it
    /// (``Event/absorbing(_:)``).
    var event: Event { get set }
}

extension Event: SubjectQueueItem {
    public var event: Event {
        get { self }
        set { self = newValue }
    }
}

/// The per-subject queues of a dispatcher, as a pure state machine: one FIFO per
/// ``Event/subject`` (an interface or a policy), at most one worker per subject, obsolete queued
/// events dropped when a newer one arrives, and a bound on each queue. Hooks and plugins share it.
///
/// The shell that owns it starts a worker when ``enqueue(_:)`` says so; the worker calls
/// ``take(_:)`` until it returns `nil`, and reports each item's end with ``finish(_:)`` or, when
/// the call outlived its deadline, ``markStuck(_:)`` (the subject then waits for ``unstick(_:)``).
///
/// - A subject is *busy* while a worker takes its items, and stays blocked while a call that timed
///   out has not returned (*stuck*): its later items wait, in order.
/// - Each subject queues at most ``limit`` items, whatever its worker is doing: obsolescence keeps
///   most queues short, but `added` and `removed` are never obsolete, so an interface created
///   and deleted over and over behind a hung hook would queue without end. Past the limit one
///   item is dropped: the oldest whose piece of state a later queued item reports again
///   (``Event/reportedState``), so the subject's final state is still dispatched.
/// - The queues may be *held* (a plugin whose `start` has not returned): items queue, bounded the
///   same way, and no worker starts until ``release()``.
public struct SubjectQueues<Item: SubjectQueueItem>: Sendable {
    /// A queued item that was dropped.
    public struct Drop: Sendable {
        public var item: Item
        /// The newer event that made it obsolete, or `nil` when it was dropped for the limit.
        public var supersededBy: Event?

        /// Why it was dropped, for the log.
        public var reason: String {
            if let supersededBy { return "superseded by \(supersededBy.name) before it was dispatched" }
            return "too many events of its interface or policy queued while it was busy"
        }
    }

    private struct Subject: Sendable {
        var queue: [Item] = []
        var busy = false
        var stuck = false
    }

    /// Whether a newer event drops the queued items it makes obsolete (``Event/supersedes(_:)``).
    public let dropsObsolete: Bool
    /// The most items one subject keeps queued (its running item aside).
    public let limit: Int
    private var subjects: [String: Subject] = [:]
    /// Items taken by a worker whose call has not ended or timed out.
    public private(set) var running = 0
    /// Whether workers wait for ``release()``.
    public private(set) var held = false

    public init(dropsObsolete: Bool = true, limit: Int = 64) {
        self.dropsObsolete = dropsObsolete
        self.limit = max(1, limit)
    }

    /// Items queued, over all subjects.
    public var queued: Int { subjects.values.reduce(0) { $0 + $1.queue.count } }

    /// Items queued or running: zero when everything handed in has been dealt with.
    public var pending: Int { queued + running }

    /// Subjects blocked behind a call that timed out.
    public var stuck: Int { subjects.values.filter(\.stuck).count }

    /// Work that will finish by itself: running calls, and queued items not behind a stuck call.
    public var active: Int { running + subjects.values.filter { !$0.stuck }.reduce(0) { $0 + $1.queue.count } }

    /// Queues `item`, first dropping the queued items of its subject that its event supersedes
    /// (the newest item absorbs what they carried).
    ///
    /// - Returns: The drops, and whether the subject needs a worker started.
    public mutating func enqueue(_ item: Item) -> (drops: [Drop], startWorker: Bool) {
        let key = item.event.subject
        // The usual case, an idle subject with nothing queued: one hash lookup and one insert,
        // nothing else. Kept apart from the busy case, whose closures keep its body from being
        // handed to the dispatchers' modules: this one is specialized there, on every event's
        // way to its hook's spawn.
        guard let index = subjects.index(forKey: key) else {
            if !held {
                subjects[key] = Subject(queue: [item], busy: true)
                return ([], true)
            }
            subjects[key] = Subject(queue: [item])
            return ([], false)
        }
        return enqueue(item, busy: index, key: key)
    }

    /// ``enqueue(_:)`` for a subject that has an entry, at `index`.
    private mutating func enqueue(
        _ item: Item,
        busy index: Dictionary<String, Subject>.Index,
        key: String
    ) -> (drops: [Drop], startWorker: Bool) {
        // Taken out and put back: the dictionary's copy would share the queue's buffer, and the
        // append would then copy it.
        var subject = subjects.remove(at: index).value
        var drops: [Drop] = []
        var item = item
        // Usually nothing is queued: skip the pass.
        if dropsObsolete && !subject.queue.isEmpty {
            subject.queue.removeAll { older in
                guard item.event.supersedes(older.event) else { return false }
                item.event = item.event.absorbing(older.event)
                drops.append(Drop(item: older, supersededBy: item.event))
                return true
            }
        }
        subject.queue.append(item)
        while subject.queue.count > limit, let victim = subject.queue.map(\.event).overflowVictim {
            drops.append(Drop(item: subject.queue.remove(at: victim), supersededBy: nil))
        }
        let startWorker = !subject.busy && !held
        if startWorker { subject.busy = true }
        subjects[key] = subject
        return (drops, startWorker)
    }

    /// The next item of `subject` for its worker, now running; `nil` when the worker should end
    /// (the queue is empty, the subject is stuck, or the queues are held).
    public mutating func take(_ subject: String) -> Item? {
        guard let index = subjects.index(forKey: subject) else { return nil }
        // In place, through the index: a copy of the entry would share its queue's buffer, and
        // removing from it would then copy the buffer.
        if subjects.values[index].queue.isEmpty || subjects.values[index].stuck {
            if !subjects.values[index].stuck { subjects.remove(at: index) }
            return nil
        }
        if held {
            // The worker ends; ``release()`` starts another for what is queued.
            subjects.values[index].busy = false
            return nil
        }
        running += 1
        // `remove(at:)`, Array's own: `removeFirst()` is the protocol's default, several times
        // slower unspecialized.
        return subjects.values[index].queue.remove(at: 0)
    }

    /// The running item of `subject` ended in time.
    public mutating func finish(_ subject: String) {
        running -= 1
    }

    /// The running item of `subject` timed out: the subject waits for it to return.
    public mutating func markStuck(_ subject: String) {
        running -= 1
        subjects[subject, default: Subject(busy: true)].stuck = true
    }

    /// The stuck call of `subject` returned; returns whether a worker must resume its queue.
    public mutating func unstick(_ subject: String) -> Bool {
        guard var entry = subjects[subject] else { return false }
        entry.stuck = false
        if entry.queue.isEmpty {
            subjects[subject] = nil
            return false
        }
        subjects[subject] = entry
        return true
    }

    /// Holds workers: from now on items queue and no worker starts; a worker running ends after
    /// its current item.
    public mutating func hold() {
        held = true
    }

    /// Ends the hold; returns the subjects with items waiting, now busy: each needs a worker.
    public mutating func release() -> [String] {
        held = false
        var start: [String] = []
        for (key, subject) in subjects where !subject.busy && !subject.queue.isEmpty {
            subjects[key]?.busy = true
            start.append(key)
        }
        return start.sorted()
    }

    /// Takes every queued item, each subject's in order (for another lane to deliver).
    public mutating func takeAll() -> [Item] {
        var taken: [Item] = []
        for key in subjects.keys.sorted() {
            taken += subjects[key]!.queue
            subjects[key]!.queue = []
            if !subjects[key]!.busy && !subjects[key]!.stuck { subjects[key] = nil }
        }
        return taken
    }

    /// Empties `subject`'s queue and releases it (shutdown); returns the discarded items.
    public mutating func abandon(_ subject: String) -> [Item] {
        let items = subjects.removeValue(forKey: subject)?.queue ?? []
        return items
    }

    /// Empties every queue (stopping); returns the discarded items.
    public mutating func discardQueued() -> [Item] {
        var discarded: [Item] = []
        for key in subjects.keys {
            discarded += subjects[key]!.queue
            subjects[key]!.queue = []
        }
        return discarded
    }
}
