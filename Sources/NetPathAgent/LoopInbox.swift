import NetPathControl
import NetPathCore
import NetPathLinux
import Synchronization

/// The main loop's inputs, in arrival order, bounded whatever the kernel, the clock or the
/// clients do.
///
/// The loop takes one input at a time and everything else waits here, so what waits must not
/// grow with the load:
/// - **Kernel snapshots**: at most one waits here. ``put(_:)`` suspends the forwarder until the
///   loop has taken the one before, so the rest wait in the engine's stream, which keeps the newest
///   ``NetlinkEngine/bufferedSnapshots``. Each snapshot is the full state and the loop diffs it
///   against the last one it saw, so the final state always gets through; a loop that falls far
///   behind only sees the transitions in between merged.
/// - **A settle tick, a target re-evaluation**: at most one of each; a second asks for the same.
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
    }

    private struct State {
        var queue: [Input] = []
        /// The loop, waiting for an input.
        var consumer: CheckedContinuation<Input, Never>?
        /// Forwarders waiting for the queued snapshot to be taken, with theirs, by wait number.
        var producers: [UInt64: (snapshot: KernelSnapshot, continuation: CheckedContinuation<Void, Never>)] = [:]
        /// Waits cancelled before they were registered.
        var cancelled: Set<UInt64> = []
        var lastWait: UInt64 = 0
        /// The most inputs ever queued at once (tests, diagnostics).
        var peak = 0
    }

    private let state = Mutex(State())

    /// Queues a kernel snapshot once the one queued before it has been taken, and returns then;
    /// returns at once, dropping `snapshot`, when the calling task is cancelled (shutdown).
    func put(_ snapshot: KernelSnapshot) async {
        let id = state.withLock { state in
            state.lastWait += 1
            return state.lastWait
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let (proceed, consumer) = state.withLock { state -> (Bool, CheckedContinuation<Input, Never>?) in
                    if state.cancelled.remove(id) != nil { return (true, nil) }
                    if state.queue.contains(where: \.isSnapshot) {
                        state.producers[id] = (snapshot, continuation)
                        return (false, nil)
                    }
                    return (true, Self.enqueue(.update(snapshot), in: &state))
                }
                consumer?.resume(returning: .update(snapshot))
                if proceed { continuation.resume() }
            }
        } onCancel: {
            let waiting = state.withLock { state in
                guard let waiting = state.producers.removeValue(forKey: id) else {
                    state.cancelled.insert(id)
                    return nil as CheckedContinuation<Void, Never>?
                }
                return waiting.continuation
            }
            waiting?.resume()
        }
        // A wait that ended normally may have been marked by a late cancellation: forget it.
        state.withLock { _ = $0.cancelled.remove(id) }
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
            let taken = state.withLock { state -> (Input, CheckedContinuation<Void, Never>?)? in
                guard !state.queue.isEmpty else {
                    state.consumer = continuation
                    return nil
                }
                return Self.take(from: &state)
            }
            guard let (input, producer) = taken else { return }
            producer?.resume()
            continuation.resume(returning: input)
        }
    }

    /// Inputs waiting now, not counting a forwarder's snapshot waiting to be queued.
    var depth: Int { state.withLock { $0.queue.count } }

    /// The most inputs that ever waited at once.
    var peakDepth: Int { state.withLock { $0.peak } }

    /// Appends `input`, or hands it straight to the waiting loop (returned, to be resumed outside
    /// the lock).
    private static func enqueue(_ input: Input, in state: inout State) -> CheckedContinuation<Input, Never>? {
        if let consumer = state.consumer {
            state.consumer = nil
            return consumer
        }
        state.queue.append(input)
        state.peak = max(state.peak, state.queue.count)
        return nil
    }

    /// Takes the oldest input. When that was the snapshot, the longest-waiting forwarder's
    /// snapshot takes its place, and that forwarder is returned, to be let go.
    private static func take(from state: inout State) -> (Input, CheckedContinuation<Void, Never>?) {
        let input = state.queue.removeFirst()
        guard input.isSnapshot, let first = state.producers.keys.min(),
            let waiting = state.producers.removeValue(forKey: first)
        else { return (input, nil) }
        state.queue.append(.update(waiting.snapshot))
        state.peak = max(state.peak, state.queue.count)
        return (input, waiting.continuation)
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
        case (.tick, .tick), (.targetsResolved, .targetsResolved), (.reload, .reload), (.probeTick, .probeTick):
            return true
        default: return false
        }
    }
}
