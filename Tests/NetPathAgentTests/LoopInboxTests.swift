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

    @Test("a forwarder that outpaces the loop holds one snapshot in the inbox: every one arrives, in order")
    func snapshotsAreBackpressured() async {
        let inbox = LoopInbox()
        let count: UInt64 = 2000
        let forwarder = Task {
            for generation in 1...count { await inbox.put(Self.snapshot(generation)) }
            inbox.post(.ended)
        }
        var seen: [UInt64] = []
        loop: while true {
            switch await inbox.next() {
            case .update(let snapshot):
                seen.append(snapshot.generation)
                // A loop slower than its forwarder, now and then.
                if snapshot.generation % 100 == 0 { await Task.yield() }
            case .ended: break loop
            default: Issue.record("unexpected input")
            }
        }
        await forwarder.value
        #expect(seen == Array(1...count))
        #expect(inbox.peakDepth <= 2, "one snapshot and the end at most, found \(inbox.peakDepth)")
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
        await inbox.put(Self.snapshot(7))
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

    @Test("a forwarder waiting for the loop returns when its task is cancelled (shutdown), dropping its snapshot")
    func cancelledForwarderReturns() async {
        let inbox = LoopInbox()
        await inbox.put(Self.snapshot(1))
        let forwarder = Task { await inbox.put(Self.snapshot(2)) }
        forwarder.cancel()
        await forwarder.value
        #expect(Self.name(await inbox.next()) == "update 1")
        inbox.post(.ended)
        #expect(Self.name(await inbox.next()) == "ended", "the cancelled forwarder's snapshot was dropped")
    }
}
