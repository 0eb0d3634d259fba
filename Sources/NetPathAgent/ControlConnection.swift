// SPDX-License-Identifier: Apache-2.0

import NetPathControl

/// One control-socket client as the server thread sees it: what it sent, what it is owed, and
/// until when it may take its time. No I/O here: the server reads and writes, and asks this
/// what to do.
///
/// A connection carries one request at a time. The next request line is taken only when the
/// previous reply has been handed to the kernel whole (for `reload`, once it has come back from
/// the main loop), and nothing is read from the client meanwhile. A client that pipelines
/// requests without reading its replies therefore fills its own socket buffers, not the agent's
/// memory, and its pending reply's deadline then closes it.
///
/// ```swift
/// connection.receive(bytes, at: .now)
/// while let request = connection.nextRequest(at: .now) { answer(request) }
/// if connection.isFinished { close(connection.fd) }
/// ```
final class ControlConnection {
    /// What the connection is doing, which decides its deadline.
    enum Phase: Equatable {
        /// Nothing under way: no request begun, no reply owed.
        case idle
        /// A request has begun to arrive, or is buffered and about to be taken.
        case receiving
        /// A reply is queued and not yet handed to the kernel whole.
        case replying
        /// A request was taken and its reply is not queued yet: a `reload`, whose reply comes when
        /// the main loop has carried it out.
        case awaitingReply
        /// A `monitor` stream: events until either side closes.
        case monitoring
    }

    /// A request taken from the input.
    enum Request: Equatable {
        /// One request line, without its newline.
        case line([UInt8])
        /// A line longer than ``ControlProtocol/maximumRequestBytes``: the connection closes
        /// after the error reply, and the rest of the line is never read.
        case tooLong
    }

    /// The server's name for the connection. Unlike the descriptor it is never reused, so a
    /// reply that arrives after its client left cannot reach a newer client.
    let id: UInt64
    let fd: Int32
    let peer: ControlPeer
    private(set) var input: [UInt8] = []
    private(set) var output: [UInt8] = []
    /// The client shut down its sending side (or closed): no request will follow.
    private(set) var inputEnded = false
    /// Close as soon as the output is handed over.
    private(set) var closing = false
    private(set) var monitoring = false
    /// A request was taken and its reply is not queued yet.
    private(set) var replyOwed = false
    /// When ``phase`` began: its deadline counts from here.
    private(set) var phaseStarted: ContinuousClock.Instant
    private var lastPhase = Phase.idle

    init(id: UInt64, fd: Int32, peer: ControlPeer, at now: ContinuousClock.Instant) {
        self.id = id
        self.fd = fd
        self.peer = peer
        phaseStarted = now
    }

    var phase: Phase {
        if monitoring { return .monitoring }
        if replyOwed { return .awaitingReply }
        if !output.isEmpty { return .replying }
        if !input.isEmpty { return .receiving }
        return .idle
    }

    /// When the connection is to be closed unless its phase ends first; `nil` when it may wait.
    func deadline(_ limits: ControlLimits) -> ContinuousClock.Instant? {
        switch phase {
        case .idle: return phaseStarted + limits.idleTimeout
        case .receiving, .replying: return phaseStarted + limits.requestTimeout
        case .awaitingReply, .monitoring: return nil
        }
    }

    /// Whether the server should read from the client now. Not while a request is buffered or a
    /// reply owed: that is the bound on what one client can make the agent hold. A monitor is
    /// read (and what it sends dropped) only to notice that it closed.
    var wantsInput: Bool {
        guard !inputEnded, !closing else { return false }
        if monitoring { return true }
        return mayTakeRequest && !input.contains(UInt8(ascii: "\n"))
            && input.count <= ControlProtocol.maximumRequestBytes
    }

    /// Whether ``nextRequest(at:)`` has a request to give now.
    var hasRequest: Bool {
        mayTakeRequest
            && (input.contains(UInt8(ascii: "\n")) || input.count > ControlProtocol.maximumRequestBytes
                || (inputEnded && !input.isEmpty))
    }

    /// Whether the connection is done: its output handed over and nothing more to come or owed.
    var isFinished: Bool {
        guard output.isEmpty, !replyOwed else { return false }
        return closing || (inputEnded && !monitoring && input.isEmpty)
    }

    /// Takes bytes the client sent. A monitor's are dropped: after `monitor` nothing is read.
    func receive(_ bytes: ArraySlice<UInt8>, at now: ContinuousClock.Instant) {
        guard !monitoring else { return }
        input += bytes
        advance(now)
    }

    /// The client will send nothing more; a last line without its newline still counts.
    func receiveEnd(at now: ContinuousClock.Instant) {
        inputEnded = true
        advance(now)
    }

    /// The next request, when one is buffered and the previous one is answered. The connection
    /// then owes a reply (``queue(_:at:)``): until it comes, it takes no other request.
    func nextRequest(at now: ContinuousClock.Instant) -> Request? {
        guard hasRequest else { return nil }
        defer { advance(now) }
        replyOwed = true
        let limit = ControlProtocol.maximumRequestBytes
        let end = input.firstIndex(of: UInt8(ascii: "\n")) ?? (input.count > limit ? nil : input.endIndex)
        guard let end, end <= limit else {
            input = []
            closing = true
            return .tooLong
        }
        let line = Array(input[..<end])
        input.removeSubrange(..<min(end + 1, input.endIndex))
        return .line(line)
    }

    /// Queues bytes to send: the reply owed, or for a monitor an event line.
    func queue(_ bytes: [UInt8], at now: ContinuousClock.Instant) {
        output += bytes
        replyOwed = false
        advance(now)
    }

    /// The first `count` bytes of the output were handed to the kernel.
    func sent(_ count: Int, at now: ContinuousClock.Instant) {
        output.removeFirst(count)
        advance(now)
    }

    /// From now on, events; nothing more is read as a request.
    func startMonitoring(at now: ContinuousClock.Instant) {
        monitoring = true
        input = []
        advance(now)
    }

    /// Restarts the deadline's clock when the phase changed. A pipelined request's clock thus
    /// starts when the previous reply is handed over, not when its bytes arrived with that request.
    private func advance(_ now: ContinuousClock.Instant) {
        let current = phase
        if current != lastPhase {
            lastPhase = current
            phaseStarted = now
        }
    }

    private var mayTakeRequest: Bool {
        !monitoring && !replyOwed && !closing && output.isEmpty
    }
}
