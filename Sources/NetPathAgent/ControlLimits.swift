// SPDX-License-Identifier: Apache-2.0

import NetPathControl

/// How much of the control socket one client may hold, and for how long: what keeps a client
/// that says nothing, reads nothing or never stops from locking out `status` and `reload`.
///
/// ```swift
/// let limits = ControlLimits()
/// limits.admits(peer, open: connections.count)   // false: refuse with "too many clients"
/// ```
struct ControlLimits: Sendable {
    /// Connections any peer may open, together.
    var sharedConnections = 64
    /// Connections beyond those that only privileged peers (root, the agent's own user) may open.
    ///
    /// Root's `status` and `reload` must get through whatever other users do. A reserve does that
    /// where evicting an idle client would not: a client that keeps every connection busy (a
    /// request every few seconds, or `monitor`, which has no idle deadline) leaves nothing idle
    /// to evict. Privileged peers may also use the shared slots; they could stop the agent
    /// anyway, so letting them past the shared cap gives nothing away.
    var reservedConnections = 8
    /// A connection with nothing under way (no request begun, no reply owed) is closed after this.
    var idleTimeout = ControlProtocol.idleTimeout
    /// A request must arrive whole within this of its first byte, and its reply must be taken by
    /// the client within this of being queued. `reload`, answered when the main loop has carried
    /// it out, and `monitor` streams are not timed.
    var requestTimeout = ControlProtocol.requestTimeout
    /// Unread output after which a `monitor` client is dropped.
    var monitorBacklog = 1 << 20
    /// Requests taken from one client before the server turns to the others, so a client that
    /// pipelines many requests cannot delay everyone else's.
    var requestsPerPass = 16

    /// Whether `peer` may open one more connection while `open` are open.
    func admits(_ peer: ControlPeer, open: Int) -> Bool {
        open < sharedConnections || (peer.isPrivileged && open < sharedConnections + reservedConnections)
    }
}
