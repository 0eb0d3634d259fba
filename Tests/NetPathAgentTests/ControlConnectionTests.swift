// SPDX-License-Identifier: Apache-2.0

import NetPathControl
import Testing

@testable import NetPathAgent

/// One control connection's rules without a socket: one request at a time, half-close,
/// over-long lines, deadlines; and who may open a connection.
@Suite struct ControlConnectionTests {
    let t0 = ContinuousClock.now
    let limits = ControlLimits()
    static let root = ControlPeer(pid: 1, uid: 0, gid: 0)
    static let nobody = ControlPeer(pid: 2, uid: 65534, gid: 65534)

    func at(_ ms: Int) -> ContinuousClock.Instant { t0 + .milliseconds(ms) }

    func connection() -> ControlConnection { ControlConnection(id: 1, fd: -1, peer: Self.nobody, at: at(0)) }

    func bytes(_ text: String) -> ArraySlice<UInt8> { ArraySlice(text.utf8) }

    @Test func pipelinedRequestsAreTakenOneReplyAtATimeAndNothingIsReadMeanwhile() {
        let c = connection()
        #expect(c.wantsInput)
        c.receive(bytes("{\"command\":\"status\"}\n{\"command\":\"hooks\"}\n{\"com"), at: at(10))
        // A complete request is buffered: read no more until it is answered.
        #expect(!c.wantsInput)
        #expect(c.nextRequest(at: at(10)) == .line(Array("{\"command\":\"status\"}".utf8)))
        c.queue(Array("reply\n".utf8), at: at(10))
        #expect(!c.hasRequest && c.nextRequest(at: at(10)) == nil)
        #expect(!c.wantsInput)
        c.sent(3, at: at(20))
        #expect(c.nextRequest(at: at(20)) == nil, "taken while the reply was half sent")
        c.sent(3, at: at(30))
        #expect(c.nextRequest(at: at(30)) == .line(Array("{\"command\":\"hooks\"}".utf8)))
        c.queue(Array("reply\n".utf8), at: at(30))
        c.sent(6, at: at(40))
        // Only the start of a third request is left: read again.
        #expect(c.nextRequest(at: at(40)) == nil)
        #expect(c.wantsInput)
        #expect(!c.isFinished)
    }

    @Test func aHalfClosedClientGetsItsRepliesEvenWithoutTheLastNewlineThenTheConnectionIsDone() {
        let c = connection()
        c.receive(bytes("{\"command\":\"status\"}\n{\"command\":\"hooks\"}"), at: at(0))
        c.receiveEnd(at: at(0))
        #expect(!c.wantsInput)
        #expect(c.nextRequest(at: at(0)) == .line(Array("{\"command\":\"status\"}".utf8)))
        #expect(!c.isFinished, "finished with a request still buffered")
        c.queue([1, 10], at: at(0))
        c.sent(2, at: at(1))
        #expect(c.nextRequest(at: at(1)) == .line(Array("{\"command\":\"hooks\"}".utf8)))
        #expect(!c.isFinished)
        c.queue([2, 10], at: at(1))
        #expect(!c.isFinished, "finished before the last reply was sent")
        c.sent(2, at: at(2))
        #expect(c.isFinished)
    }

    @Test func aReloadHoldsTheNextRequestUntilItsReplyArrives() {
        let c = connection()
        c.receive(bytes("{\"command\":\"reload\"}\n{\"command\":\"status\"}\n"), at: at(0))
        _ = c.nextRequest(at: at(0))
        c.receiveEnd(at: at(0))
        #expect(c.nextRequest(at: at(0)) == nil)
        #expect(c.deadline(limits) == nil, "a reload is answered when it is done, not timed")
        #expect(!c.isFinished)
        c.queue([1, 10], at: at(5000))
        c.sent(2, at: at(5000))
        #expect(c.nextRequest(at: at(5000)) == .line(Array("{\"command\":\"status\"}".utf8)))
    }

    @Test(arguments: [
        String(repeating: "x", count: ControlProtocol.maximumRequestBytes + 1),
        String(repeating: "x", count: ControlProtocol.maximumRequestBytes + 1) + "\n",
    ])
    func anOverLongLineIsRefusedWithoutReadingTheRest(_ text: String) {
        let c = connection()
        c.receive(bytes(text), at: at(0))
        #expect(!c.wantsInput)
        #expect(c.nextRequest(at: at(0)) == .tooLong)
        #expect(c.input.isEmpty)
        #expect(!c.wantsInput)
        c.queue([1, 10], at: at(0))
        #expect(!c.isFinished)
        c.sent(2, at: at(0))
        #expect(c.isFinished)
    }

    @Test func aLineOfExactlyTheMaximumIsARequest() {
        let c = connection()
        let line = String(repeating: "x", count: ControlProtocol.maximumRequestBytes)
        c.receive(bytes(line + "\n"), at: at(0))
        #expect(c.nextRequest(at: at(0)) == .line(Array(line.utf8)))
    }

    @Test func eachPhaseHasItsDeadlineCountedFromItsStart() {
        let c = connection()
        #expect(c.phase == .idle)
        #expect(c.deadline(limits) == at(0) + limits.idleTimeout)
        // A request begun at 1 s must be whole by 1 s + the request timeout.
        c.receive(bytes("{\"comm"), at: at(1000))
        #expect(c.phase == .receiving)
        #expect(c.deadline(limits) == at(1000) + limits.requestTimeout)
        c.receive(bytes("and\":\"status\"}\n{\"command\""), at: at(2000))
        #expect(c.deadline(limits) == at(1000) + limits.requestTimeout, "more bytes do not extend it")
        _ = c.nextRequest(at: at(3000))
        c.queue([1, 10], at: at(3000))
        #expect(c.phase == .replying)
        #expect(c.deadline(limits) == at(3000) + limits.requestTimeout)
        c.sent(2, at: at(4000))
        // The pipelined request's clock starts when it can be taken, not when its bytes came.
        #expect(c.phase == .receiving)
        #expect(c.deadline(limits) == at(4000) + limits.requestTimeout)
    }

    @Test func anIdleDeadlineRestartsAfterEachReply() {
        let c = connection()
        c.receive(bytes("{\"command\":\"status\"}\n"), at: at(4000))
        _ = c.nextRequest(at: at(4000))
        c.queue([1, 10], at: at(4000))
        c.sent(2, at: at(4500))
        #expect(c.phase == .idle)
        #expect(c.deadline(limits) == at(4500) + limits.idleTimeout)
    }

    @Test func aMonitorIsNotTimedAndWhatItSendsIsDropped() {
        let c = connection()
        c.receive(bytes("{\"command\":\"monitor\"}\n"), at: at(0))
        _ = c.nextRequest(at: at(0))
        c.queue([1, 10], at: at(0))
        c.startMonitoring(at: at(0))
        #expect(c.deadline(limits) == nil)
        c.receive(bytes("{\"command\":\"status\"}\n"), at: at(10))
        #expect(c.input.isEmpty && c.nextRequest(at: at(10)) == nil)
        #expect(c.wantsInput, "a monitor is read, to notice that it closed")
        // Half-closed, it still gets events.
        c.receiveEnd(at: at(20))
        c.sent(2, at: at(20))
        #expect(!c.isFinished)
    }

    @Test func otherUsersShareTheConnectionsAndRootHasAReserve() {
        #expect(limits.admits(Self.nobody, open: limits.sharedConnections - 1))
        #expect(!limits.admits(Self.nobody, open: limits.sharedConnections))
        #expect(limits.admits(Self.root, open: limits.sharedConnections))
        #expect(limits.admits(Self.root, open: limits.sharedConnections + limits.reservedConnections - 1))
        #expect(!limits.admits(Self.root, open: limits.sharedConnections + limits.reservedConnections))
    }
}
