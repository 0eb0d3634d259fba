import NetPathCore

/// One event waiting for, or getting, its hooks.
struct HookJob: Sendable {
    var id: UInt64
    var event: Event
    var targets: [HookTarget]
}

/// The dispatcher's queues as a pure state machine: one FIFO per ``Event/subject``, at most one
/// worker per subject, and obsolete queued events dropped on arrival of a newer one.
///
/// A job is *queued* until a worker takes it, then *running* until the worker reports it done;
/// only queued jobs can be dropped.
///
/// Each subject queues at most ``limit`` jobs, whatever its hooks are doing: obsolescence keeps
/// most queues short, but `added` and `removed` are never obsolete, so an interface created and
/// deleted over and over while its hook hangs would queue without end. Past the limit one job is
/// dropped: the oldest whose piece of state a later queued job reports again
/// (``NetPathCore/Event/reportedState``), so the subject's final state is still dispatched.
struct SubjectQueues {
    /// A queued job that was dropped.
    struct Drop {
        var job: HookJob
        /// The newer event that made it obsolete, or `nil` when it was dropped for the limit.
        var supersededBy: Event?

        /// Why it was dropped, for the log.
        var reason: String {
            if let supersededBy { return "superseded by \(supersededBy.name) before its hooks ran" }
            return "too many events of it queued while its hooks were busy"
        }
    }

    /// The most jobs one subject keeps queued (its running job aside).
    let limit: Int
    private var queues: [String: [HookJob]] = [:]
    /// Subjects that have a worker: it takes their jobs one by one.
    private var busy: Set<String> = []
    private var lastID: UInt64 = 0
    /// Jobs queued or running.
    private(set) var pending = 0

    init(limit: Int = 64) {
        self.limit = max(1, limit)
    }

    /// Jobs queued, over all subjects.
    var queued: Int { queues.values.reduce(0) { $0 + $1.count } }

    /// Queues `event`; drops the queued jobs of its subject that it supersedes.
    ///
    /// - Returns: The drops, and whether the subject needs a worker started (it had none).
    mutating func enqueue(_ event: Event, targets: [HookTarget]) -> (drops: [Drop], startWorker: Bool) {
        let subject = event.subject
        var queue = queues[subject] ?? []
        var drops: [Drop] = []
        var event = event
        queue.removeAll { job in
            guard event.supersedes(job.event) else { return false }
            event = event.absorbing(job.event)
            drops.append(Drop(job: job, supersededBy: event))
            return true
        }
        lastID += 1
        queue.append(HookJob(id: lastID, event: event, targets: targets))
        while queue.count > limit, let victim = queue.map(\.event).overflowVictim {
            drops.append(Drop(job: queue.remove(at: victim), supersededBy: nil))
        }
        queues[subject] = queue
        pending += 1 - drops.count
        let startWorker = busy.insert(subject).inserted
        return (drops, startWorker)
    }

    /// The next job of `subject` for its worker, now running; `nil` when the queue is empty, and
    /// the subject has no worker from then on.
    mutating func take(_ subject: String) -> HookJob? {
        guard var queue = queues[subject], !queue.isEmpty else {
            queues[subject] = nil
            busy.remove(subject)
            return nil
        }
        let job = queue.removeFirst()
        queues[subject] = queue.isEmpty ? nil : queue
        return job
    }

    /// A running job finished.
    mutating func finish() {
        pending -= 1
    }

    /// Empties `subject`'s queue and releases it (shutdown); returns the discarded jobs.
    mutating func abandon(_ subject: String) -> [HookJob] {
        let jobs = queues.removeValue(forKey: subject) ?? []
        busy.remove(subject)
        pending -= jobs.count
        return jobs
    }
}
