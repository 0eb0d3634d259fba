// SPDX-License-Identifier: Apache-2.0

import CNetlink
import NetPathCore

/// The messages of one netlink datagram given as bytes, walked and parsed as the engine reads
/// what the kernel sends (``NetlinkSocket``'s walk, then ``MessageCollector``).
///
/// For the netlink fuzz harness (Fuzz/netlink) and tests, which have bytes but no socket.
///
/// ```swift
/// let walk = NetlinkDatagram.parse(bytes, watching: ["192.0.2.7"])
/// for message in walk.messages { table.apply(message) }
/// ```
package enum NetlinkDatagram {
    /// What the walk found.
    package struct Walk: Hashable, Sendable {
        /// The messages parsed, in order.
        package var messages: [KernelMessage]
        /// How many messages the walk handed to the parser (`np_walk_result.delivered`).
        package var delivered: Int
        /// How many route messages it dropped unparsed (neither default nor covering a kept address).
        package var skipped: Int
        /// Whether a dropped route covers one of the watched addresses.
        package var covering: Bool
        /// Whether `NLMSG_DONE` ended a dump.
        package var done: Bool
        /// The negative errno of an `NLMSG_ERROR` that is not an acknowledgement, else 0.
        package var error: Int32
        /// Whether the datagram ended in the middle of a message.
        package var truncated: Bool
    }

    /// Walks `bytes` as one datagram, keeping the routes the engine keeps (default routes and
    /// those covering the internet probes) and checking the others against `watched`.
    package static func parse(_ bytes: [UInt8], watching watched: [IPAddress] = []) -> Walk {
        let collector = MessageCollector()
        // The walk reads headers in place: copy into memory aligned as recv's buffer is.
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: max(bytes.count, 1), alignment: 8)
        defer { buffer.deallocate() }
        bytes.withUnsafeBytes { raw in
            if let start = raw.baseAddress { buffer.copyMemory(from: start, byteCount: raw.count) }
        }
        let result = NetlinkSocket.walk(
            buffer,
            count: bytes.count,
            delivering: collector,
            filterRoutes: true,
            keeping: NetlinkSocket.keptAddresses,
            watching: watched.map(NetlinkSocket.watch),
            sequence: 0
        )
        return Walk(
            messages: collector.messages,
            delivered: Int(result.delivered),
            skipped: Int(result.skipped),
            covering: result.covering != 0,
            done: result.done != 0,
            error: result.error,
            truncated: result.truncated != 0
        )
    }
}
