// SPDX-License-Identifier: Apache-2.0

import Logging
import NetPathConfig
import NetPathCore
import NetPathQueues
import Synchronization

/// Runs the hooks for each event: in order per interface or policy, isolated across them, with
/// obsolete queued events dropped.
///
/// - Each ``Event/subject`` (an interface, a policy) has a FIFO: its events run one after
///   another, and for one event its hooks run one after another in lexical order. A slow or hung
///   hook delays only later events of the same subject, and only until its timeout.
/// - Subjects are independent: each has its own worker task. At most
///   ``Options/maxRunningHooks`` hooks start and run at once over all of them, but a run that
///   has been going for ``Options/slowAfter`` stops counting, so hung hooks on other subjects
///   delay a subject's hook by at most that long (``HookSlots`` says why, and what stays
///   bounded).
/// - An idle subject's first hook starts inside ``dispatch(_:to:)`` itself: it is checked, its
///   invocation built and the hook spawned on the caller's thread, before the subject's worker
///   task is created; the worker then starts there too (`Task.immediate`), waits for the hook
///   and runs the rest, and hands the thread back at its first real suspension. A hook
///   therefore starts without waiting for the scheduler to wake another thread, nor for a task
///   to be made, each of which once took a sizeable share of the agent's way from a change to the
///   hook's fork (BENCHMARKS.md, "two task hops" and "The first hook before the task").
/// - An event still queued when a newer one of its subject supersedes it
///   (``NetPathCore/Event/supersedes(_:)``) is dropped and the drop logged; the newest is always
///   queued, so the final state of every subject is dispatched.
///
/// ```swift
/// let dispatcher = HookDispatcher(directory: HookDirectory(path: "/etc/netpath/hooks.d", logger: logger),
///                                 runner: HookRunner(logger: logger), logger: logger)
/// try await withThrowingDiscardingTaskGroup { group in
///     group.addTask { await dispatcher.run() }
///     for await event in events { dispatcher.dispatch(event, to: [.all(timeout: .seconds(30))]) }
/// }
/// ```
///
/// ``run()`` has the shape of a swift-service-lifecycle `Service`: it waits until its task is
/// cancelled, then starts nothing new, lets running hooks finish within their timeouts, and
/// returns.
package final class HookDispatcher: Sendable {
    /// Dispatcher settings.
    package struct Options: Hashable, Sendable {
        /// The most hooks running at once over all subjects, not counting runs that have been
        /// going for ``slowAfter`` (`max_running_hooks` in `[agent]`).
        package var maxRunningHooks: Int
        /// How long a run counts against ``maxRunningHooks``: after that it is presumed slow or
        /// hung, and its slot goes to the next hook waiting for one.
        package var slowAfter: Duration

        /// - Parameters:
        ///   - maxRunningHooks: at least 1.
        ///   - slowAfter: at least 1 ms.
        package init(maxRunningHooks: Int = 8, slowAfter: Duration = .seconds(1)) {
            self.maxRunningHooks = max(1, maxRunningHooks)
            self.slowAfter = max(.milliseconds(1), slowAfter)
        }
    }

    private struct State {
        var queues = SubjectQueues<HookJob>()
        var lastJob: UInt64 = 0
        var statistics = HookStatistics()
        var idleWaiters = IdleWaiters<Void>()
        /// Names a target asked for that were not in the directory, logged once each.
        var missingLogged: Set<String> = []
        /// Set once ``run()`` is cancelled: events are no longer queued.
        var stopping = false
        var stopWaiter: CheckedContinuation<Void, Never>?
        /// networkd-dispatcher: each interface's state as its scripts last saw it, by subject.
        var networkdStates: [String: NetworkdState] = [:]
    }

    package let directory: HookDirectory
    /// The `[[hook_dir]]` directories, run after ``directory`` for each event.
    package let dialectDirectories: [DialectHookDirectory]
    package let runner: HookRunner
    package let options: Options
    private let logger: Logger
    private let onResult: (@Sendable (HookResult) -> Void)?
    private let state = Mutex(State())
    private let slots: HookSlots
    /// The workers of busy subjects; cancelled at shutdown.
    private let workers = WorkerTasks()

    /// - Parameter onResult: called with every hook run's result as it ends (for metrics that
    ///   need each run, like a duration histogram); it must return quickly.
    package convenience init(
        directory: HookDirectory,
        runner: HookRunner,
        options: Options = Options(),
        logger: Logger,
        onResult: (@Sendable (HookResult) -> Void)? = nil
    ) {
        self.init(
            directory: directory,
            dialectDirectories: [],
            runner: runner,
            options: options,
            logger: logger,
            onResult: onResult
        )
    }

    /// A dispatcher that also runs the scripts of `dialectDirectories` (`[[hook_dir]]`), each
    /// with its dialect's contract, after the hooks of `directory`.
    package init(
        directory: HookDirectory,
        dialectDirectories: [DialectHookDirectory],
        runner: HookRunner,
        options: Options = Options(),
        logger: Logger,
        onResult: (@Sendable (HookResult) -> Void)? = nil
    ) {
        self.directory = directory
        self.dialectDirectories = dialectDirectories
        self.runner = runner
        self.options = options
        self.logger = logger
        self.onResult = onResult
        self.slots = HookSlots(limit: options.maxRunningHooks, slowAfter: options.slowAfter)
    }

    /// Queues `event` for the hooks of `targets`, and starts its subject's worker when it has
    /// none. Never blocks: it returns when the worker first waits (for its hook to end, or for a
    /// free slot), having spawned the hook if it could.
    ///
    /// An event with no targets (no rule matched) only makes older queued events obsolete.
    /// Once ``run()`` is cancelled, events are logged and dropped.
    package func dispatch(_ event: Event, to targets: [HookTarget]) {
        let queued = state.withLock { state -> (drops: [SubjectQueues<HookJob>.Drop], startWorker: Bool)? in
            guard !state.stopping else { return nil }
            state.statistics.eventsReceived += 1
            state.lastJob += 1
            let result = state.queues.enqueue(HookJob(id: state.lastJob, event: event, targets: targets))
            for drop in result.drops { state.statistics.eventsDropped[drop.item.event.name, default: 0] += 1 }
            return result
        }
        guard let (drops, startWorker) = queued else {
            logger.notice("shutting down: \(event.name) of \(event.subject) not dispatched")
            return
        }
        for drop in drops {
            logger.notice(
                "dropped queued \(drop.item.event.name) of \(drop.item.event.subject): \(drop.reason)",
                metadata: ["subject": .string(event.subject), "event": .string(drop.item.event.name.rawValue)]
            )
        }
        if startWorker { self.startWorker(for: event.subject) }
        resumeIdleWaitersIfIdle()
    }

    /// Waits until cancelled; then lets running hooks end (within their timeouts), drops what is
    /// still queued, and returns. Hooks run from ``dispatch(_:to:)`` whether or not this runs:
    /// it is the dispatcher's shutdown.
    package func run() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let stopped = state.withLock { state in
                    if state.stopping { return true }
                    state.stopWaiter = continuation
                    return false
                }
                if stopped { continuation.resume() }
            }
        } onCancel: {
            state.withLock { state in
                state.stopping = true
                defer { state.stopWaiter = nil }
                return state.stopWaiter
            }?.resume()
        }
        // Workers see the cancellation before their next event or hook; a running hook keeps
        // its timeout.
        await workers.cancelAll()
    }

    private func startWorker(for subject: String) {
        // The subject's first job is taken here, and its first hook spawned on this thread,
        // before the worker's task exists: creating and starting a task runs a good deal of the
        // concurrency runtime's code, cold again after the idle time between changes, and it
        // would come before the spawn (BENCHMARKS.md, "The first hook before the task").
        var first: (execution: Execution, started: Started?)?
        if !shuttingDown, let job = state.withLock({ $0.queues.take(subject) }) {
            var execution = prepare(job)
            let started = startFirst(of: &execution)
            first = (execution, started)
        }
        // Immediate: the worker runs on this thread up to its first suspension (see the type's
        // discussion), where the first hook's waiting begins.
        workers.start(immediate: true) { [first] in await self.work(subject, first: first) }
    }

    /// Takes `interfaces` as the state networkd-dispatcher scripts last saw, without running
    /// any: the agent's startup state when `startup_events` is off, so that the first change
    /// runs only the scripts of the states it enters.
    package func assumeNetworkdState(_ interfaces: [Interface]) {
        guard dialectDirectories.contains(where: { $0.dialect == .networkd }) else { return }
        state.withLock { state in
            for interface in interfaces {
                state.networkdStates["interface:\(interface.index)"] = NetworkdState(interface)
            }
        }
    }

    /// The networkd states `event` enters and the interface's state after it; records that
    /// state. `nil` for an event without an interface state.
    private func networkdTransition(_ event: Event) -> (entered: [String], now: NetworkdState)? {
        guard event.scope == .interface, let interface = event.interfaceState else { return nil }
        let removed = event.name == .removed
        let now = NetworkdState(interface, removed: removed)
        let previous = state.withLock { state in
            let previous = state.networkdStates[event.subject]
            // A removed interface's index may come back as another link: forget it.
            state.networkdStates[event.subject] = removed ? nil : now
            return previous
        }
        return (now.entered(since: previous), now)
    }

    /// The counters so far.
    package var statistics: HookStatistics { state.withLock { $0.statistics } }

    /// Events queued or running.
    package var pendingEvents: Int { state.withLock { $0.queues.pending } }

    /// Returns when no event is queued or running (tests, `simulate --run-hooks`).
    package func waitUntilIdle() async {
        await withCheckedContinuation { continuation in
            let idle = state.withLock { state in
                if state.queues.pending == 0 { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }

    private func resumeIdleWaitersIfIdle() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            // Nobody waits, almost always: skip counting the queues (after every event and run).
            if state.idleWaiters.count == 0 { return [] }
            let idle = state.queues.pending == 0
            return state.idleWaiters.takeReady { idle }
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Whether shutdown has begun, for this worker: its task cancelled, or run() cancelled (a
    /// worker started just as run() was cancelled is not in the list run() cancels).
    private var shuttingDown: Bool { Task.isCancelled || state.withLock { $0.stopping } }

    /// A subject's worker: its jobs, one at a time, until its queue is empty. `first`: the job
    /// ``startWorker(for:)`` took from the queue, and its first hook if it spawned one.
    private func work(_ subject: String, first: (execution: Execution, started: Started?)?) async {
        if let first {
            await execute(first.execution, started: first.started)
            state.withLock { $0.queues.finish(subject) }
        }
        while true {
            if shuttingDown {
                let abandoned = state.withLock { $0.queues.abandon(subject) }
                if !abandoned.isEmpty {
                    logger.notice("shutting down: \(abandoned.count) queued event(s) of \(subject) not dispatched")
                }
                break
            }
            guard let job = state.withLock({ $0.queues.take(subject) }) else { break }
            await execute(prepare(job), started: nil)
            state.withLock { $0.queues.finish(subject) }
        }
        resumeIdleWaitersIfIdle()
    }

    /// One hook run an event asks for.
    private struct PlannedRun {
        var name: String
        var directory: HookDirectory
        var dialect: HookDialect
        var target: HookTarget
        var noWait = false
        /// networkd-dispatcher: the state entered and the interface's state now.
        var networkd: (entering: String, now: NetworkdState)?
    }

    /// An event's hooks as planned when its worker takes it, before any runs.
    private struct Execution: Sendable {
        var job: HookJob
        /// networkd-dispatcher: the states the event enters (``networkdTransition(_:)``).
        var networkd: (entered: [String], now: NetworkdState)?
        /// The hooks directory's names, as listed for this event.
        var names: [String]
        /// The hooks of `hooks_dir` to run, in lexical order.
        var native: [PlannedRun]
        /// Computed once for all the event's hooks: only NETPATH_RULE and argv[0] differ.
        var payload: HookInvocation.EventPayload?
        /// The directory as listed, which the first hook is opened from.
        var checked: HookDirectory.Snapshot?
    }

    /// A hook run spawned, with the slot it holds.
    private struct Started: Sendable {
        var run: HookRunner.StartedRun
        var slot: HookSlots.Lease
        var rule: String?
    }

    /// Plans `job`: what ``execute(_:started:)`` runs.
    private func prepare(_ job: HookJob) -> Execution {
        // Before anything can return early: networkd's states follow every event.
        let networkd =
            dialectDirectories.contains { $0.dialect == .networkd } ? networkdTransition(job.event) : nil
        let snapshot = directory.snapshot()
        let names = snapshot.names
        var native: [PlannedRun] = []
        for target in job.targets {
            native += names.filter { target.hooks.includes($0) }.map {
                PlannedRun(name: $0, directory: directory, dialect: .netpath, target: target)
            }
        }
        return Execution(
            job: job,
            networkd: networkd,
            names: names,
            native: Self.lexical(native),
            payload: native.isEmpty ? nil : HookInvocation.EventPayload(job.event),
            checked: native.isEmpty ? nil : snapshot
        )
    }

    /// Spawns the first of `execution`'s native hooks when a slot is free now, without a task
    /// (``startWorker(for:)``), and takes it out of the plan; also a refused one, whose refusal
    /// is counted. `nil` when there is none to start, or the run would wait for a slot: the
    /// worker then runs the whole plan.
    private func startFirst(of execution: inout Execution) -> Started? {
        guard let planned = execution.native.first, let payload = execution.payload,
            let slot = slots.acquireNow()
        else { return nil }
        execution.native.removeFirst()
        let checked = execution.checked.take()
        return start(planned, invocation(for: planned, payload: payload), slot: slot, checked: checked)
    }

    /// One event: the hooks of `hooks_dir` in lexical order, one after another, then those of
    /// each `[[hook_dir]]` in turn (``DialectHookDirectory``). `started`: its first hook, when
    /// ``startFirst(of:)`` spawned it.
    private func execute(_ execution: Execution, started: Started?) async {
        let job = execution.job
        let networkd = execution.networkd
        let names = execution.names
        if started != nil || !execution.native.isEmpty, let payload = execution.payload {
            // Handed over: the checked directory is released once the first hook is open.
            let completed = await run(
                execution.native,
                job: job,
                payload: payload,
                checked: execution.checked,
                started: started
            )
            if !completed { return }
        }

        // Names a rule asks for that exist nowhere: logged once each, after the native hooks started.
        if job.targets.contains(where: { if case .named = $0.hooks { true } else { false } }) {
            var known = Set(names)
            for dialectDirectory in dialectDirectories { known.formUnion(dialectDirectory.allScriptNames()) }
            for target in job.targets {
                guard case .named(let wanted) = target.hooks else { continue }
                for missing in wanted where !known.contains(missing) { logMissing(missing, rule: target.rule) }
            }
        }

        // Each dialect directory is listed only now, after the native hooks have been spawned:
        // its listing (readlink and realpath per script) is no part of their start.
        for dialectDirectory in dialectDirectories {
            if dialectDirectory.dialect == .networkd {
                // The scripts of each state entered, administrative state first, one after another.
                for state in networkd?.entered ?? [] {
                    guard let now = networkd?.now else { break }
                    let plan = Self.plan(dialectDirectory.scripts(entering: state), of: dialectDirectory, for: job) {
                        PlannedRun(name: $0.name, directory: $1, dialect: .networkd, target: $2, networkd: (state, now))
                    }
                    if !(await run(Self.lexical(plan), job: job)) { return }
                }
                continue
            }
            // An event the dialect has no action for runs none of its scripts.
            if dialectDirectory.dialect == .networkmanager && NetworkManagerInvocation.Action(job.event) == nil {
                continue
            }
            let plan = Self.plan(dialectDirectory.scripts(), of: dialectDirectory, for: job) {
                PlannedRun(
                    name: $0.name,
                    directory: $1,
                    dialect: dialectDirectory.dialect,
                    target: $2,
                    noWait: $0.noWait
                )
            }
            let ordered = Self.lexical(plan)
            let waiting = ordered.filter { !$0.noWait }
            let noWait = ordered.filter(\.noWait)
            // no-wait scripts start with the others and run alongside them; the event is done
            // when all have ended, so the subject's order and the timeouts still hold.
            let completed = await withTaskGroup(of: Bool.self) { group in
                for planned in noWait {
                    group.addTask { await self.run([planned], job: job) }
                }
                return await run(waiting, job: job)
            }
            if !completed { return }
        }
    }

    /// The runs of `scripts` (of `dialectDirectory`) that the job's targets ask for, target by target.
    private static func plan(
        _ scripts: [DialectHookDirectory.Script],
        of dialectDirectory: DialectHookDirectory,
        for job: HookJob,
        _ make: (DialectHookDirectory.Script, HookDirectory, HookTarget) -> PlannedRun
    ) -> [PlannedRun] {
        var plan: [PlannedRun] = []
        for target in job.targets {
            for script in scripts where target.hooks.includes(script.name) {
                guard let directory = dialectDirectory.directory(script.directory) else { continue }
                plan.append(make(script, directory, target))
            }
        }
        return plan
    }

    /// Lexical byte order over all matching rules; a hook named by two rules runs once for each.
    private static func lexical(_ plan: [PlannedRun]) -> [PlannedRun] {
        guard plan.count > 1 else { return plan }  // one hook, as most rules name: nothing to order
        return plan.enumerated().sorted { lhs, rhs in
            if lhs.element.name == rhs.element.name { return lhs.offset < rhs.offset }
            return lhs.element.name.utf8.lexicographicallyPrecedes(rhs.element.name.utf8)
        }.map(\.element)
    }

    /// Runs `plan` one after another, after `started` (a run already spawned, the event's
    /// first); `false` when the event cannot go on (cancelled).
    ///
    /// `checked`: the hooks directory as the event's listing checked it, which the first hook
    /// is opened from; later hooks, which start after earlier ones end, are checked anew.
    private func run(
        _ plan: [PlannedRun],
        job: HookJob,
        payload: HookInvocation.EventPayload? = nil,
        checked: HookDirectory.Snapshot? = nil,
        started: Started? = nil
    ) async -> Bool {
        if let started { await complete(started, job: job) }
        var checked = checked
        for planned in plan {
            if shuttingDown { return false }
            let name = planned.name
            // What the run will be, which does not depend on the file: made before the slot is
            // taken, so a dialect's event that has no run never holds one.
            let invocation: HookInvocation
            switch planned.dialect {
            case .networkmanager:
                guard
                    let built = NetworkManagerInvocation.invocation(
                        script: name,
                        event: job.event,
                        timeout: planned.target.timeout
                    )
                else { continue }
                invocation = built
            case .networkd:
                guard let networkd = planned.networkd else { continue }
                invocation = NetworkdInvocation.invocation(
                    script: name,
                    path: planned.directory.path + "/" + name,
                    interface: job.event.interface ?? "",
                    entering: networkd.entering,
                    now: networkd.now,
                    interfaceState: job.event.interfaceState,
                    timeout: planned.target.timeout
                )
            case .netpath:
                invocation = self.invocation(for: planned, payload: payload ?? HookInvocation.EventPayload(job.event))
            }
            // The slot, then the checks: the wait for a slot (up to the slots' slowAfter while
            // every one is busy) comes before them, not between them and the exec. After a wait,
            // the event's snapshot of the directory (taken before it) is not used either.
            let slot: HookSlots.Lease
            if let free = slots.acquireNow() {
                slot = free
            } else {
                // Why a hook starts late: every slot is held by a run younger than slowAfter.
                logger.debug(
                    "hook \(name) of \(job.event.name) of \(job.event.subject) waits for a slot (all \(slots.limit) of max_running_hooks are held)",
                    metadata: [
                        "hook": .string(name), "event": .string(job.event.name.rawValue),
                        "subject": .string(job.event.subject),
                    ]
                )
                slot = await slots.acquire()
            }
            // The wait is not cancellable (HookSlots): a shutdown that began meanwhile starts no
            // new hook, as it starts no queued event. (A slot had at once follows the check at
            // the loop's top without a wait: no second look, and no lock, on the usual path.)
            if slot.waited && shuttingDown {
                slots.release(slot)
                logger.notice(
                    "shutting down: hook \(name) and the rest of \(job.event.name) of \(job.event.subject) not started",
                    metadata: [
                        "hook": .string(name), "event": .string(job.event.name.rawValue),
                        "subject": .string(job.event.subject),
                    ]
                )
                return false
            }
            if slot.waited { checked = nil }
            // Only the first hook is opened from the event's listing.
            guard let started = start(planned, invocation, slot: slot, checked: checked.take()) else { continue }
            await complete(started, job: job)
        }
        return true
    }

    /// A native hook's invocation.
    private func invocation(for planned: PlannedRun, payload: HookInvocation.EventPayload) -> HookInvocation {
        HookInvocation(hook: planned.name, payload: payload, rule: planned.target.rule, timeout: planned.target.timeout)
    }

    /// Opens `planned`'s file (from `checked`, the event's listing, when given and the hook is
    /// in ``directory``) and spawns it, holding `slot`; `nil`, with the slot given back and the
    /// refusal counted, when the file is refused.
    private func start(
        _ planned: PlannedRun,
        _ invocation: HookInvocation,
        slot: HookSlots.Lease,
        checked: HookDirectory.Snapshot?
    ) -> Started? {
        let hook: OpenedHook
        do {
            hook = try planned.directory.open(planned.name, in: planned.directory === directory ? checked : nil)
        } catch {
            slots.release(slot)
            state.withLock { $0.statistics.refusals[error.code, default: 0] += 1 }
            return nil
        }
        return Started(run: runner.start(invocation, executing: hook), slot: slot, rule: planned.target.rule)
    }

    /// Waits for a started run to end, gives its slot back, and counts and logs its result.
    ///
    /// Called in the worker's task: cancelling the dispatcher (shutdown) does not cut a running
    /// hook short, since nothing in a run waits on anything a cancellation ends (the runner
    /// waits on threads of its own); the hook keeps its timeout and its leftovers their grace,
    /// as docs/hooks.md promises (HookDispatcherTests.shutdownLetsRunsEnd).
    private func complete(_ started: Started, job: HookJob) async {
        let result = await runner.finish(started.run)
        slots.release(started.slot)
        state.withLock { $0.statistics.record(result) }
        onResult?(result)
        log(result, job: job, rule: started.rule)
    }

    private func log(_ result: HookResult, job: HookJob, rule: String?) {
        var metadata: Logger.Metadata = [
            "hook": .string(result.hook),
            "event": .string(job.event.name.rawValue),
            "subject": .string(job.event.subject),
            "outcome": .string(result.outcome.rawValue),
        ]
        if let rule { metadata["rule"] = .string(rule) }
        let message: Logger.Message =
            "hook \(result.hook) for \(job.event.name) \(job.event.interface ?? job.event.policy ?? ""): \(result)"
        switch result.outcome {
        case .success: logger.info(message, metadata: metadata)
        case .failure, .timeout, .error: logger.warning(message, metadata: metadata)
        }
    }

    private func logMissing(_ name: String, rule: String?) {
        let first = state.withLock { $0.missingLogged.insert(name).inserted }
        if first {
            logger.warning(
                "hook \(name) named by rule \(rule ?? "-") is not in \(directory.path) or any [[hook_dir]] (or is ignored); skipped",
                metadata: ["hook": .string(name)]
            )
        }
    }
}
