import NetPathCore

/// One plugin's event queues as a pure state machine: a FIFO per ``NetPathCore/Event/subject``,
/// at most one call in flight per subject, obsolete and overflowing events dropped.
///
/// A subject is *busy* while a worker delivers its events, and stays busy while a call that
/// timed out has not returned (*stuck*): its later events wait, in order, up to ``limit``.
///
/// The queues may be *held* (a plugin whose `start` has not returned yet): events queue, bounded
/// the same way, and no worker starts until ``release()``.
struct PluginQueues {
    /// Why a queued event was dropped.
    enum Drop {
        case obsolete(Event, by: Event)
        case overflow(Event)
    }

    private struct Subject {
        var queue: [Event] = []
        var busy = false
        var stuck = false
    }

    /// Whether a newer event drops the queued events it makes obsolete.
    let dropsObsolete: Bool
    /// The most events one subject keeps queued; past it, one is dropped: the oldest whose piece
    /// of state a later queued event reports again (``NetPathCore/Event/reportedState``), else
    /// the oldest.
    let limit: Int
    private var subjects: [String: Subject] = [:]
    /// Calls in flight that have not timed out.
    private(set) var running = 0
    /// Whether deliveries wait for ``release()``.
    private(set) var held = false

    init(dropsObsolete: Bool, limit: Int) {
        self.dropsObsolete = dropsObsolete
        self.limit = max(1, limit)
    }

    /// Events waiting, over all subjects.
    var queued: Int { subjects.values.reduce(0) { $0 + $1.queue.count } }

    /// Subjects blocked behind a call that timed out.
    var stuck: Int { subjects.values.filter(\.stuck).count }

    /// Work that will finish by itself: running calls, and queued events not behind a stuck call.
    var active: Int { running + subjects.values.filter { !$0.stuck }.reduce(0) { $0 + $1.queue.count } }

    /// Queues `event`. Returns the drops and whether the subject needs a worker started.
    mutating func enqueue(_ event: Event) -> (drops: [Drop], startWorker: Bool) {
        var subject = subjects[event.subject] ?? Subject()
        var drops: [Drop] = []
        var event = event
        if dropsObsolete {
            subject.queue.removeAll { older in
                guard event.supersedes(older) else { return false }
                event = event.absorbing(older)
                drops.append(.obsolete(older, by: event))
                return true
            }
        }
        subject.queue.append(event)
        // The oldest whose piece of state comes again later goes first: the final state stays.
        while subject.queue.count > limit, let victim = subject.queue.overflowVictim {
            drops.append(.overflow(subject.queue.remove(at: victim)))
        }
        let startWorker = !subject.busy && !held
        if startWorker { subject.busy = true }
        subjects[event.subject] = subject
        return (drops, startWorker)
    }

    /// Holds deliveries: from now on events queue and no worker starts; a worker running ends
    /// after its current call.
    mutating func hold() {
        held = true
    }

    /// Ends the hold; returns the subjects with events waiting, now busy: each needs a worker.
    mutating func release() -> [String] {
        held = false
        var start: [String] = []
        for (key, subject) in subjects where !subject.busy && !subject.queue.isEmpty {
            subjects[key]?.busy = true
            start.append(key)
        }
        return start.sorted()
    }

    /// Takes every queued event, each subject's in order (for another lane to deliver).
    mutating func takeAll() -> [Event] {
        var taken: [Event] = []
        for key in subjects.keys.sorted() {
            taken += subjects[key]!.queue
            subjects[key]!.queue = []
            if !subjects[key]!.busy && !subjects[key]!.stuck { subjects[key] = nil }
        }
        return taken
    }

    /// The next event of `subject` for its worker, now running; `nil` when the worker should
    /// end (queue empty: the subject is idle).
    mutating func take(_ subject: String) -> Event? {
        guard var entry = subjects[subject], !entry.queue.isEmpty, !entry.stuck else {
            if subjects[subject]?.stuck != true { subjects[subject] = nil }
            return nil
        }
        if held {
            // The worker ends; ``release()`` starts another for what is queued.
            entry.busy = false
            subjects[subject] = entry
            return nil
        }
        let event = entry.queue.removeFirst()
        subjects[subject] = entry
        running += 1
        return event
    }

    /// The running call of `subject` returned in time.
    mutating func finish(_ subject: String) {
        running -= 1
    }

    /// The running call of `subject` timed out: the subject waits for it to return.
    mutating func markStuck(_ subject: String) {
        running -= 1
        subjects[subject, default: Subject(busy: true)].stuck = true
    }

    /// The stuck call of `subject` returned; returns whether a worker must resume its queue.
    mutating func unstick(_ subject: String) -> Bool {
        guard var entry = subjects[subject] else { return false }
        entry.stuck = false
        if entry.queue.isEmpty {
            subjects[subject] = nil
            return false
        }
        subjects[subject] = entry
        return true
    }

    /// Empties every queue (stopping); returns the discarded events.
    mutating func discardQueued() -> [Event] {
        var discarded: [Event] = []
        for key in subjects.keys {
            discarded += subjects[key]!.queue
            subjects[key]!.queue = []
        }
        return discarded
    }
}
