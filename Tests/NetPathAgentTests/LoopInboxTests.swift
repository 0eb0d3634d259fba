import NetPathControl
import NetPathLinux
import Synchronization
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
}
