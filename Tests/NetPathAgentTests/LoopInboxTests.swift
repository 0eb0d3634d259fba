// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathControl
import NetPathLinux
import Synchronization
import TestSupport
import Testing

@testable import NetPathAgent

/// The main loop's inbox without an agent: bounded, coalescing, in order, and never in the way
/// of a shutdown.
@Suite struct LoopInboxTests {
    static func snapshot(_ generation: UInt64) -> KernelSnapshot { KernelSnapshot(generation: generation) }

    /// A short name for an input, to compare sequences.
    static func name(_ input: LoopInbox.Input) -> String {
        switch input {
        case .update(let snapshot): "update \(snapshot.generation)"
        case .tick: "tick"
        case .targetsResolved: "targets"
        case .reload(let replies): "reload \(replies.count)"
        case .startupSettled(let settled): "startup \(settled)"
        case .pluginsSettled: "plugins"
        case .ended: "ended"
        case .probeTick: "probe tick"
        case .probed(let index, let sequence, _): "probed \(index) \(sequence)"
        case .probeNow(let interface, _): "probe now \(interface ?? "*")"
        case .resumed(let slept): "resumed \(slept)"
        }
    }

    @Test(
        "an engine that outpaces the loop keeps at most the limit waiting: the oldest merge, the newest always arrive, in order"
    )
    func snapshotsAreBounded() async {
        let inbox = LoopInbox(snapshotLimit: 8)
        let count: UInt64 = 2000
        // The engine's thread offers without ever waiting; the loop takes one now and then.
        var seen: [UInt64] = []
        for generation in 1...count {
            inbox.offer(Self.snapshot(generation))
            #expect(inbox.depth <= 8)
            if generation % 100 == 0, case .update(let snapshot) = await inbox.next() {
                seen.append(snapshot.generation)
            }
        }
        inbox.post(.ended)
        loop: while true {
            switch await inbox.next() {
            case .update(let snapshot): seen.append(snapshot.generation)
            case .ended: break loop
            default: Issue.record("unexpected input")
            }
        }
        #expect(seen == seen.sorted(), "in order")
        #expect(Array(seen.suffix(8)) == Array((count - 7)...count), "the newest eight all arrive")
        #expect(inbox.mergedSnapshots == Int(count) - seen.count)
        #expect(inbox.peakDepth <= 9, "eight snapshots and the end at most, found \(inbox.peakDepth)")
    }

    @Test("a snapshot offered while the loop waits goes straight to it")
    func offerWakesTheLoop() async {
        let inbox = LoopInbox(snapshotLimit: 1)
        let loop = Task { Self.name(await inbox.next()) }
        // No way to know that the loop is already waiting; either way it gets the snapshot.
        inbox.offer(Self.snapshot(3))
        #expect(await loop.value == "update 3")
        #expect(inbox.mergedSnapshots == 0)
    }

    @Test("ticks and target re-evaluations coalesce, reloads merge their replies, the rest keeps its order")
    func coalescing() async {
        let inbox = LoopInbox()
        for _ in 0..<100 {
            inbox.post(.tick)
            inbox.post(.targetsResolved)
            inbox.post(.reload([]))
        }
        let replies = Mutex<[String]>([])
        inbox.post(.reload([{ reply in replies.withLock { $0.append("a: \(reply.ok)") } }]))
        inbox.post(.startupSettled(true))
        inbox.post(.reload([{ reply in replies.withLock { $0.append("b: \(reply.ok)") } }]))
        inbox.post(.pluginsSettled)
        inbox.offer(Self.snapshot(7))
        inbox.post(.ended)
        #expect(inbox.depth == 7)
        var names: [String] = []
        for _ in 0..<7 {
            let input = await inbox.next()
            if case .reload(let owed) = input { for send in owed { send(ControlReply(ok: true)) } }
            names.append(Self.name(input))
        }
        #expect(names == ["tick", "targets", "reload 2", "startup true", "plugins", "update 7", "ended"])
        #expect(replies.withLock { $0 } == ["a: true", "b: true"])
    }

    @Test("the waiting loop is woken by the next input")
    func wakesTheLoop() async {
        let inbox = LoopInbox()
        let loop = Task { Self.name(await inbox.next()) }
        inbox.post(.startupSettled(false))
        #expect(await loop.value == "startup false")
    }

    // MARK: Steps on the engine's thread

    /// Runs `body` on a thread of its own, as the engine's thread offers; returns when it ends.
    static func onAnotherThread(_ body: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                body()
                done.resume()
            }
        }
    }

    @Test("a snapshot that finds the loop idle is stepped on the offering thread, and the loop keeps waiting")
    func idleLoopIsSteppedInline() async throws {
        let inbox = LoopInbox()
        let stepped = Mutex<[(String, ObjectIdentifier)]>([])
        inbox.handleInline { input in
            stepped.withLock { $0.append((Self.name(input), ObjectIdentifier(Thread.current))) }
        }
        let loop = Task { Self.name(await inbox.next()) }
        try await waitUntil("the loop waits for an input") { inbox.loopIsWaiting }
        let offeringThread = Mutex<ObjectIdentifier?>(nil)
        await Self.onAnotherThread {
            offeringThread.withLock { $0 = ObjectIdentifier(Thread.current) }
            inbox.offer(Self.snapshot(4))
        }
        #expect(stepped.withLock { $0.map(\.0) } == ["update 4"])
        #expect(stepped.withLock { $0.first?.1 } == offeringThread.withLock { $0 }, "stepped on the offering thread")
        #expect(inbox.loopIsWaiting, "the loop must not have been handed the stepped snapshot")
        inbox.post(.startupSettled(true))
        #expect(await loop.value == "startup true")
    }

    @Test("what is posted during a step on the engine's thread waits for the step, then reaches the loop in order")
    func postsDuringAStepWait() async throws {
        let inbox = LoopInbox()
        let release = DispatchSemaphore(value: 0)
        let inStep = DispatchSemaphore(value: 0)
        inbox.handleInline { _ in
            inStep.signal()
            // Bounded: a regression fails the expectations below instead of hanging the suite.
            _ = release.wait(timeout: .now() + 10)
        }
        let received = Mutex<[String]>([])
        let loop = Task {
            for _ in 0..<3 { let name = Self.name(await inbox.next()); received.withLock { $0.append(name) } }
        }
        try await waitUntil("the loop waits for an input") { inbox.loopIsWaiting }
        let engine = Task.detached { await Self.onAnotherThread { inbox.offer(Self.snapshot(1)) } }
        let stepping = Mutex(false)
        await Self.onAnotherThread { stepping.withLock { $0 = inStep.wait(timeout: .now() + 10) == .success } }
        try #require(stepping.withLock { $0 }, "the snapshot was not stepped on the offering thread")
        inbox.post(.tick)
        inbox.post(.startupSettled(false))
        // Queued, not handed to the loop: a step runs.
        #expect(inbox.depth == 2)
        #expect(received.withLock { $0 }.isEmpty)
        release.signal()
        await engine.value
        // The loop now takes them in order, then a last snapshot (no more steps here).
        inbox.handleInline(nil)
        inbox.offer(Self.snapshot(2))
        await loop.value
        #expect(received.withLock { $0 } == ["tick", "startup false", "update 2"])
    }

    @Test("a snapshot that finds inputs waiting queues behind them; without a step, snapshots go to the loop")
    func busyLoopQueues() async {
        let inbox = LoopInbox()
        let stepped = Mutex(0)
        inbox.handleInline { _ in stepped.withLock { $0 += 1 } }
        inbox.post(.tick)
        inbox.offer(Self.snapshot(5))
        #expect(stepped.withLock { $0 } == 0)
        #expect(Self.name(await inbox.next()) == "tick")
        #expect(Self.name(await inbox.next()) == "update 5")
        inbox.handleInline(nil)
        let loop = Task { Self.name(await inbox.next()) }
        inbox.offer(Self.snapshot(6))
        #expect(await loop.value == "update 6")
        #expect(stepped.withLock { $0 } == 0)
    }
}
