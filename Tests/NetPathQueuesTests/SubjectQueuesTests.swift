import Foundation
import NetPathCore
import NetPathQueues
import Testing

/// The parts of the shared queue state machine that plugins use: holding, stuck calls, and
/// queues that keep obsolete events.
struct SubjectQueuesTests {
    static func event(_ name: Event.Name, _ interface: String = "eth0", index: Int32 = 2) -> Event {
        Event(
            time: Date(timeIntervalSince1970: 0),
            name: name,
            scope: .interface,
            interface: interface,
            interfaceType: .wired,
            interfaceState: Interface(index: index, name: interface, type: .wired)
        )
    }

    @Test("held queues start no worker; release starts one per subject with events, in order")
    func holdAndRelease() {
        var queues = SubjectQueues<Event>()
        queues.hold()
        #expect(!queues.enqueue(Self.event(.up)).startWorker)
        #expect(!queues.enqueue(Self.event(.added, "eth1", index: 3)).startWorker)
        #expect(queues.take(Self.event(.up).subject) == nil, "nothing is taken while held")
        #expect(queues.release() == [Self.event(.up).subject, Self.event(.added, "eth1", index: 3).subject].sorted())
        #expect(queues.take(Self.event(.up).subject)?.name == .up)
        #expect(queues.running == 1)
    }

    @Test("a stuck call blocks its subject until it returns; its queue then resumes")
    func stuckSubject() {
        var queues = SubjectQueues<Event>()
        let subject = Self.event(.up).subject
        _ = queues.enqueue(Self.event(.up))
        _ = queues.take(subject)
        queues.markStuck(subject)
        #expect(queues.stuck == 1 && queues.running == 0)
        #expect(!queues.enqueue(Self.event(.addressAdded)).startWorker, "the stuck call's subject stays busy")
        #expect(queues.take(subject) == nil)
        #expect(queues.active == 0, "what waits behind a stuck call will not finish by itself")
        let resume = queues.unstick(subject)
        #expect(resume)
        #expect(queues.take(subject)?.name == .addressAdded)
    }

    @Test("without obsolescence every event stays, up to the limit")
    func keepsObsoleteEvents() {
        var queues = SubjectQueues<Event>(dropsObsolete: false, limit: 2)
        _ = queues.enqueue(Self.event(.up))
        #expect(queues.enqueue(Self.event(.down)).drops.isEmpty)
        let drops = queues.enqueue(Self.event(.up)).drops
        #expect(drops.count == 1 && drops[0].supersededBy == nil, "past the limit one is dropped")
        #expect(queues.queued == 2)
    }
}
