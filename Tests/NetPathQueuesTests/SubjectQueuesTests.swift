// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathCore
import NetPathQueues
import Testing

/// The queue state machine hooks and plugins share, without processes: obsolete events dropped,
/// the bound on each queue, holding, stuck calls, and queues that keep obsolete events.
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

    /// A path event of policy `policy` with primary `primary`.
    static func path(_ name: Event.Name, policy: String = "default", primary: String?, previous: String? = nil)
        -> Event
    {
        let available = primary.map { [NetworkPath.PathInterface(name: $0, index: 3, type: .wifi)] } ?? []
        return Event(
            time: Date(timeIntervalSince1970: 0),
            name: name,
            scope: .path,
            interface: primary,
            interfaceType: primary == nil ? nil : .wifi,
            policy: policy,
            previousInterface: previous,
            path: NetworkPath(
                policy: policy,
                status: primary == nil ? .unsatisfied : .satisfied,
                unsatisfiedReason: primary == nil ? .noInterface : nil,
                availableInterfaces: available
            )
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

    @Test("up, down, up queued: the first two are dropped and the newest is kept")
    func newestKept() {
        var queues = SubjectQueues<Event>()
        let subject = Self.event(.up, "eth0").subject
        #expect(queues.enqueue(Self.event(.added, "eth0")).startWorker)
        #expect(queues.take(subject)?.name == .added)  // running: never dropped
        #expect(queues.enqueue(Self.event(.up, "eth0")).drops.isEmpty)
        #expect(
            queues.enqueue(Self.event(.down, "eth0")).drops.map(\.item.name) == [.up]
        )
        let last = queues.enqueue(Self.event(.up, "eth0"))
        #expect(last.drops.map(\.item.name) == [.down])
        #expect(!last.startWorker, "the subject already has a worker")
        #expect(queues.pending == 2)
        #expect(queues.take(subject)?.name == .up)
        queues.finish(subject)
        #expect(queues.take(subject) == nil)
        queues.finish(subject)
        #expect(queues.pending == 0)
        #expect(queues.enqueue(Self.event(.down, "eth0")).startWorker)
    }

    @Test("a dropped path change hands its previous primary to the one that supersedes it")
    func pathChangesMerge() {
        var queues = SubjectQueues<Event>()
        let first = Self.path(.changed, primary: "wlan0", previous: "eth0")
        _ = queues.enqueue(first)
        _ = queues.enqueue(Self.path(.changed, primary: "wwan0", previous: "wlan0"))
        let job = queues.take(first.subject)
        #expect(job?.interface == "wwan0")
        #expect(job?.previousInterface == "eth0")
    }

    @Test("subjects are independent queues")
    func subjectsIndependent() {
        var queues = SubjectQueues<Event>()
        #expect(queues.enqueue(Self.event(.up, "eth0", index: 1)).startWorker)
        #expect(queues.enqueue(Self.event(.down, "eth1", index: 2)).startWorker)
        #expect(queues.enqueue(Self.path(.satisfied, primary: "eth0")).startWorker)
        #expect(queues.queued == 3)
    }

    @Test(
        "an interface added and removed 1,000 times while its hook runs queues at most the limit; the final state stays"
    )
    func boundedWithTheFinalState() {
        var queues = SubjectQueues<Event>(limit: 8)
        let subject = Self.event(.added, "eth0").subject
        _ = queues.enqueue(Self.event(.added, "eth0"))
        _ = queues.take(subject)  // running: its hook hangs
        // A lone carrier-down, early: no later event reports carrier, so it must survive.
        _ = queues.enqueue(Self.event(.carrierDown, "eth0"))
        var overflowed = 0
        for round in 0..<1000 {
            for name in [Event.Name.removed, .added] where !(round == 999 && name == .added) {
                let drops = queues.enqueue(Self.event(name, "eth0")).drops
                #expect(drops.allSatisfy { $0.supersededBy == nil && $0.item.reportedState == "presence" })
                overflowed += drops.count
            }
        }
        #expect(queues.queued == 8)
        #expect(queues.pending == 9, "the running job and the queue")
        #expect(overflowed == 1 + 1999 - 8)
        var names: [Event.Name] = []
        while let job = queues.take(subject) {
            names.append(job.name)
            queues.finish(subject)
        }
        #expect(names.first == .carrierDown)
        #expect(names.last == .removed, "the final state: removed")
        #expect(queues.pending == 1)
    }

    @Test("when nothing queued is reported again, the oldest goes")
    func overflowWithoutRepeatsDropsTheOldest() {
        var queues = SubjectQueues<Event>(limit: 2)
        let events = [Event.Name.added, .carrierUp, .up].map { Self.event($0, "eth0") }
        var drops: [SubjectQueues<Event>.Drop] = []
        for event in events { drops += queues.enqueue(event).drops }
        #expect(drops.map(\.item.name) == [.added])
        #expect(drops.first?.reason == "too many events of its interface or policy queued while it was busy")
    }
}
