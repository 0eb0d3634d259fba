// SPDX-License-Identifier: Apache-2.0

import NetPathControl
import NetPathCore
import NetPathLinux
import Synchronization

/// The main loop's inputs, in arrival order, bounded whatever the kernel, the clock or the
/// clients do.
///
/// The loop takes one input at a time and everything else waits here, so what waits must not
/// grow with the load:
/// - **Kernel snapshots**: the engine's thread hands them in itself (``offer(_:)``, never
///   blocking: no task relays them). When the loop is idle — waiting, nothing queued — the
///   engine's thread takes the snapshot through the loop's step itself (``handleInline(_:)``), so
///   a change is decided and its hooks spawned without any thread hop; otherwise it queues, and
///   the loop takes it in turn. At most
///   ``snapshotLimit`` wait; past that the oldest waiting one is dropped. Each snapshot is the full
///   state and the loop diffs it against the last one it saw, so the final state of every
///   interface and policy always gets through; a loop that falls far behind only sees the
///   transitions in between merged (``mergedSnapshots`` counts them).
/// - **A settle tick, a target re-evaluation, a resume**: at most one of each; a second asks for
///   the same.
/// - **Reloads**: one entry, which collects the replies owed to every client that asked meanwhile.
/// - **Results of work the loop handed off** (startup hooks settled, a plugin job done, the end):
///   the loop starts at most one job of each kind at a time, so at most one of each waits.
/// - **Connectivity**: at most one probe tick; at most one probe result per interface (one
///   probe per interface is in flight); `probe` requests, one per control connection at most
///   (a connection owes one reply at a time), like reloads.
final class LoopInbox: Sendable {
    /// Completes a `reload` request of the control socket.
    typealias Reply = @Sendable (ControlReply) -> Void

    /// What the loop reacts to.
    enum Input: Sendable {
        /// The kernel changed.
        case update(KernelSnapshot)
        /// A settle deadline passed.
        case tick
        /// A policy target's host name resolved to something new: evaluate again.
        case targetsResolved
        /// Re-read the configuration; the replies are owed to the control clients that asked (a
        /// SIGHUP adds none).
        case reload([Reply])
        /// The startup events' hooks and plugins went idle (`true`), or the wait limit passed first.
        case startupSettled(Bool)
        /// The plugin job the loop started (starting, reloading or reopening plugins) ended.
        case pluginsSettled
        /// The engine stopped: stop the agent.
        case ended
        /// A connectivity probe is due.
        case probeTick
        /// A connectivity probe of the interface with this index ended: at most one per
        /// interface is in flight, so at most one per interface waits here.
        case probed(Int32, sequence: UInt64, result: ProbeResult)
        /// `netpathctl probe`: probe this interface (or every probed one) now and reply.
        case probeNow(String?, Reply)
        /// The machine resumed from a suspend that lasted about this long (``ResumeDetector``).
        case resumed(Duration)
    }

    private struct State {
        var queue: [Input] = []
        /// The loop, waiting for an input.
        var consumer: CheckedContinuation<Input, Never>?
        /// Snapshots in ``queue``.
        var snapshots = 0
        var merged = 0
        /// The most inputs ever queued at once (tests, diagnostics).
        var peak = 0
        /// The loop's step, for snapshots offered while it is idle (``handleInline(_:)``).
        var inline: (@Sendable (Input) -> Void)?
        /// A snapshot is going through the loop's step on the engine's thread: the waiting loop
        /// must not be handed anything until it is done (one step at a time).
        var steppingInline = false
    }

    /// The most kernel snapshots that wait for the loop at once.
    let snapshotLimit: Int
    private let state = Mutex(State())

    init(snapshotLimit: Int = NetlinkEngine.bufferedSnapshots) {
        self.snapshotLimit = max(1, snapshotLimit)
    }

    // Kept (issue 39) because it pays for itself: without it the first change after a
    // 100,000-route batch started its hook 1.30× netplug's instead of 1.03× (paired, both builds
    // in one `make bench` rotation, BENCHMARKS.md 2026-12-07 16:24), though plain toggles gained
    // nothing.
    /// Lets ``offer(_:)`` run `step` on the offering thread (the engine's) for a snapshot that
    /// arrives while the loop is idle: waiting in ``next()`` with nothing queued. The loop stays
    /// suspended meanwhile, and inputs posted during the step queue behind it and go to the loop
    /// after it, so steps never overlap and keep their order. `nil` stops it (the loop is
    /// ending).
    func handleInline(_ step: (@Sendable (Input) -> Void)?) {
        state.withLock { $0.inline = step }
    }

    /// Queues a kernel snapshot, or steps it right here when the loop is idle
    /// (``handleInline(_:)``); when ``snapshotLimit`` already wait, the oldest of them is dropped
    /// (merged into the ones after it). Never blocks: the engine's thread calls it.
    func offer(_ snapshot: KernelSnapshot) {
        enum Action {
            case handOver(CheckedContinuation<Input, Never>)
            case step(@Sendable (Input) -> Void)
            case queued
        }
        let action = state.withLock { state -> Action in
            if let step = state.inline, state.consumer != nil, state.queue.isEmpty, !state.steppingInline {
                state.steppingInline = true
                return .step(step)
            }
            if state.snapshots >= snapshotLimit, let oldest = state.queue.firstIndex(where: \.isSnapshot) {
                state.queue.remove(at: oldest)
                state.snapshots -= 1
                state.merged += 1
            }
            guard let consumer = Self.enqueue(.update(snapshot), in: &state) else {
                state.snapshots += 1
                return .queued
            }
            return .handOver(consumer)
        }
        switch action {
        case .handOver(let consumer):
            consumer.resume(returning: .update(snapshot))
        case .step(let step):
            step(.update(snapshot))
            // What was posted during the step goes to the waiting loop now, first in first.
            let handOver = state.withLock { state -> (CheckedContinuation<Input, Never>, Input)? in
                state.steppingInline = false
                guard let consumer = state.consumer, !state.queue.isEmpty else { return nil }
                state.consumer = nil
                let input = state.queue.removeFirst()
                if input.isSnapshot { state.snapshots -= 1 }
                return (consumer, input)
            }
            if let (consumer, input) = handOver { consumer.resume(returning: input) }
        case .queued:
            break
        }
    }

    /// Queues `input`, merging it into one already waiting that asks the same (see the type's
    /// discussion).
    func post(_ input: Input) {
        let (consumer, handed) = state.withLock { state -> (CheckedContinuation<Input, Never>?, Input) in
            if let index = state.queue.firstIndex(where: { $0.coalesces(with: input) }) {
                if case .reload(let queued) = state.queue[index], case .reload(let replies) = input {
                    state.queue[index] = .reload(queued + replies)
                }
                return (nil, input)
            }
            return (Self.enqueue(input, in: &state), input)
        }
        consumer?.resume(returning: handed)
    }

    /// The next input, waiting for one when none is queued. One consumer at a time: the loop.
    func next() async -> Input {
        await withCheckedContinuation { (continuation: CheckedContinuation<Input, Never>) in
            let taken = state.withLock { state -> Input? in
                guard !state.queue.isEmpty else {
                    state.consumer = continuation
                    return nil
                }
                let input = state.queue.removeFirst()
                if input.isSnapshot { state.snapshots -= 1 }
                return input
            }
            if let taken { continuation.resume(returning: taken) }
        }
    }

    /// Inputs waiting now.
    var depth: Int { state.withLock { $0.queue.count } }

    /// Whether the loop waits in ``next()`` (tests).
    var loopIsWaiting: Bool { state.withLock { $0.consumer != nil } }

    /// The most inputs that ever waited at once.
    var peakDepth: Int { state.withLock { $0.peak } }

    /// Snapshots dropped because ``snapshotLimit`` were waiting.
    var mergedSnapshots: Int { state.withLock { $0.merged } }

    /// Appends `input`, or hands it straight to the waiting loop (returned, to be resumed outside
    /// the lock) unless a step runs on the engine's thread.
    private static func enqueue(_ input: Input, in state: inout State) -> CheckedContinuation<Input, Never>? {
        if !state.steppingInline, let consumer = state.consumer {
            state.consumer = nil
            return consumer
        }
        state.queue.append(input)
        state.peak = max(state.peak, state.queue.count)
        return nil
    }
}

extension LoopInbox.Input {
    fileprivate var isSnapshot: Bool {
        if case .update = self { return true }
        return false
    }

    /// Whether a queued `self` already asks for what `other` asks.
    fileprivate func coalesces(with other: Self) -> Bool {
        switch (self, other) {
        case (.tick, .tick), (.targetsResolved, .targetsResolved), (.reload, .reload), (.probeTick, .probeTick),
            (.resumed, .resumed):
            return true
        default: return false
        }
    }
}
