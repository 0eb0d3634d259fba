// SPDX-License-Identifier: Apache-2.0

import NetPathCore
import Testing

/// The probe timetable with a hand-held clock.
struct ProbeSchedulerTests {
    let t0 = ContinuousClock.now

    @Test("a change asks for a probe after the debounce; a second trigger meanwhile merges into it")
    func triggerDebounces() {
        var s = ProbeScheduler(interval: .seconds(60))
        s.trigger(2, at: t0)
        #expect(s.start(at: t0).isEmpty)
        s.trigger(2, at: t0 + .milliseconds(50))
        #expect(s.start(at: t0 + .milliseconds(100)) == [2])
        #expect(s.isInFlight(2))
        #expect(s.nextDeadline == nil)
    }

    @Test("at most one probe in flight; a trigger during it asks for another once it ends, not sooner than spacing")
    func oneInFlight() {
        var s = ProbeScheduler(interval: .seconds(60))
        s.trigger(2, at: t0)
        #expect(s.start(at: t0 + .milliseconds(100)) == [2])
        s.trigger(2, at: t0 + .milliseconds(200))
        #expect(s.start(at: t0 + .seconds(10)).isEmpty)
        s.finished(2, connectivity: .full, at: t0 + .milliseconds(300))
        // Spacing: one second after the last start, not the full interval.
        #expect(s.due(2) == t0 + .milliseconds(1100))
    }

    @Test("full: again after interval; not full: back off from 1 s, doubling up to interval; a trigger starts over")
    func backoff() {
        var s = ProbeScheduler(interval: .seconds(8))
        var now = t0
        s.probeNow(2, at: now)
        var waits: [Duration] = []
        for _ in 0..<6 {
            #expect(s.start(at: now) == [2])
            s.finished(2, connectivity: .none, at: now)
            let due = s.due(2)!
            waits.append(now.duration(to: due))
            now = due
        }
        #expect(waits == [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(8), .seconds(8)])
        #expect(s.start(at: now) == [2])
        s.finished(2, connectivity: .full, at: now)
        #expect(s.due(2) == now + .seconds(8))
        s.trigger(2, at: now)
        #expect(s.start(at: now + .seconds(1)) == [2])
        s.finished(2, connectivity: .none, at: now + .seconds(1))
        #expect(s.due(2) == now + .seconds(2))
    }

    @Test("200 flaps in 10 s start a bounded number of probes: at most one a second")
    func flapsAreBounded() {
        var s = ProbeScheduler(interval: .seconds(300))
        var started = 0
        for flap in 0..<200 {
            let now = t0 + .milliseconds(50 * flap)
            // Down: no longer probed; up: probed again.
            s.remove(2)
            started += s.start(at: now + .milliseconds(10)).count
            s.trigger(2, at: now + .milliseconds(25))
            let ready = s.start(at: now + .milliseconds(25) + .milliseconds(100))
            started += ready.count
            for index in ready { s.finished(index, connectivity: .full, at: now + .milliseconds(130)) }
        }
        #expect(started <= 11, "\(started) probes for 200 flaps in 10 s")
        #expect(started >= 1)
    }

    @Test("an interface removed with its probe in flight is not probed twice if it comes back meanwhile")
    func removedInFlight() {
        var s = ProbeScheduler(interval: .seconds(60))
        s.probeNow(2, at: t0)
        #expect(s.start(at: t0) == [2])
        s.remove(2)
        #expect(!s.interfaces.contains(2))
        s.trigger(2, at: t0 + .seconds(2))
        #expect(s.start(at: t0 + .seconds(3)).isEmpty)
        s.finished(2, connectivity: .full, at: t0 + .seconds(4))
        #expect(s.start(at: t0 + .seconds(5)) == [2])
    }
}
