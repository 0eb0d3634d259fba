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
struct SubjectQueues {
    /// A queued job that a newer event made obsolete.
    struct Drop {
        var job: HookJob
        var supersededBy: Event
    }

    private var queues: [String: [HookJob]] = [:]
    /// Subjects that have a worker: it takes their jobs one by one.
    private var busy: Set<String> = []
    private var lastID: UInt64 = 0
    /// Jobs queued or running.
    private(set) var pending = 0

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
