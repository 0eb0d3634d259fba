import Foundation
import NetPathCore
import NetPathQueues
import Testing

@testable import NetPathDispatch

/// The queue state machine and the obsolescence rules, without processes.
struct SubjectQueuesTests {
    static let target = [HookTarget.all(timeout: .seconds(1))]

    static func job(_ event: Event) -> HookJob { HookJob(id: 0, event: event, targets: target) }

    @Test("a later up/down supersedes a queued up/down of the same interface, never another's")
    func supersession() {
        let up = Events.interface(.up, "eth0")
        let down = Events.interface(.down, "eth0")
        #expect(down.supersedes(up))
        #expect(up.supersedes(down))
        #expect(!down.supersedes(Events.interface(.up, "eth1", index: 8)))
        #expect(Events.interface(.carrierUp, "eth0").supersedes(Events.interface(.carrierDown, "eth0")))
        #expect(!Events.interface(.carrierUp, "eth0").supersedes(down))
        #expect(!Events.interface(.removed, "eth0").supersedes(Events.interface(.added, "eth0")))
        #expect(!Events.interface(.up, "eth0").supersedes(Events.interface(.addressAdded, "eth0")))
        let satisfied = Events.path(.satisfied, primary: "eth0")
        let unsatisfied = Events.path(.unsatisfied, primary: nil)
        #expect(unsatisfied.supersedes(satisfied))
        #expect(!Events.path(.changed, primary: "wlan0").supersedes(satisfied), "a rule on satisfied must not lose it")
        #expect(unsatisfied.supersedes(Events.path(.changed, primary: "wlan0")))
        #expect(!unsatisfied.supersedes(Events.path(.satisfied, policy: "other", primary: "eth0")))
    }

    @Test("up, down, up queued: the first two are dropped and the newest is kept")
    func newestKept() {
        var queues = SubjectQueues<HookJob>()
        let subject = Events.interface(.up, "eth0").subject
        #expect(queues.enqueue(Self.job(Events.interface(.added, "eth0"))).startWorker)
        #expect(queues.take(subject)?.event.name == .added)  // running: never dropped
        #expect(queues.enqueue(Self.job(Events.interface(.up, "eth0"))).drops.isEmpty)
        #expect(
            queues.enqueue(Self.job(Events.interface(.down, "eth0"))).drops.map(\.item.event.name) == [.up]
        )
        let last = queues.enqueue(Self.job(Events.interface(.up, "eth0")))
        #expect(last.drops.map(\.item.event.name) == [.down])
        #expect(!last.startWorker, "the subject already has a worker")
        #expect(queues.pending == 2)
        #expect(queues.take(subject)?.event.name == .up)
        queues.finish(subject)
        #expect(queues.take(subject) == nil)
        queues.finish(subject)
        #expect(queues.pending == 0)
        #expect(queues.enqueue(Self.job(Events.interface(.down, "eth0"))).startWorker)
    }

    @Test("a dropped path change hands its previous primary to the one that supersedes it")
    func pathChangesMerge() {
        var queues = SubjectQueues<HookJob>()
        let first = Events.path(.changed, primary: "wlan0", previous: "eth0")
        _ = queues.enqueue(Self.job(first))
        _ = queues.enqueue(Self.job(Events.path(.changed, primary: "wwan0", previous: "wlan0")))
        let job = queues.take(first.subject)
        #expect(job?.event.interface == "wwan0")
        #expect(job?.event.previousInterface == "eth0")
    }

    @Test("subjects are independent queues")
    func subjectsIndependent() {
        var queues = SubjectQueues<HookJob>()
        #expect(queues.enqueue(Self.job(Events.interface(.up, "eth0", index: 1))).startWorker)
        #expect(queues.enqueue(Self.job(Events.interface(.down, "eth1", index: 2))).startWorker)
        #expect(queues.enqueue(Self.job(Events.path(.satisfied, primary: "eth0"))).startWorker)
        #expect(queues.queued == 3)
    }

    @Test(
        "an interface added and removed 1,000 times while its hook runs queues at most the limit; the final state stays"
    )
    func boundedWithTheFinalState() {
        var queues = SubjectQueues<HookJob>(limit: 8)
        let subject = Events.interface(.added, "eth0").subject
        _ = queues.enqueue(Self.job(Events.interface(.added, "eth0")))
        _ = queues.take(subject)  // running: its hook hangs
        // A lone carrier-down, early: no later event reports carrier, so it must survive.
        _ = queues.enqueue(Self.job(Events.interface(.carrierDown, "eth0")))
        var overflowed = 0
        for round in 0..<1000 {
            for name in [Event.Name.removed, .added] where !(round == 999 && name == .added) {
                let drops = queues.enqueue(Self.job(Events.interface(name, "eth0"))).drops
                #expect(drops.allSatisfy { $0.supersededBy == nil && $0.item.event.reportedState == "presence" })
                overflowed += drops.count
            }
        }
        #expect(queues.queued == 8)
        #expect(queues.pending == 9, "the running job and the queue")
        #expect(overflowed == 1 + 1999 - 8)
        var names: [Event.Name] = []
        while let job = queues.take(subject) {
            names.append(job.event.name)
            queues.finish(subject)
        }
        #expect(names.first == .carrierDown)
        #expect(names.last == .removed, "the final state: removed")
        #expect(queues.pending == 1)
    }

    @Test("when nothing queued is reported again, the oldest goes")
    func overflowWithoutRepeatsDropsTheOldest() {
        var queues = SubjectQueues<HookJob>(limit: 2)
        let events = [Event.Name.added, .carrierUp, .up].map { Events.interface($0, "eth0") }
        var drops: [SubjectQueues<HookJob>.Drop] = []
        for event in events { drops += queues.enqueue(Self.job(event)).drops }
        #expect(drops.map(\.item.event.name) == [.added])
        #expect(drops.first?.reason == "too many events of its interface or policy queued while it was busy")
    }
}
