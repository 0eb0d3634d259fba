// SPDX-License-Identifier: Apache-2.0

import CNetlink
import Glibc
import NetPathCore

/// An owned `struct nl_sock` connected to `NETLINK_ROUTE`.
///
/// Not Sendable: a socket lives and dies on the engine thread.
final class NetlinkSocket {
    let handle: OpaquePointer

    /// The multicast groups netpath follows (`RTNLGRP_*`): links, addresses, routes and rules.
    static let groups: [Int32] = [
        np_group_link(), np_group_ipv4_ifaddr(), np_group_ipv4_route(), np_group_ipv4_rule(),
        np_group_ipv6_ifaddr(), np_group_ipv6_route(), np_group_ipv6_rule(),
    ]

    init() throws(NetlinkError) {
        guard let sock = nl_socket_alloc() else {
            throw NetlinkError(.socket, rawValue: ENOMEM, context: "nl_socket_alloc")
        }
        handle = sock
        let result = nl_connect(sock, NETLINK_ROUTE)
        if result < 0 {
            nl_socket_free(sock)
            throw .libnl(.connect, result, "nl_connect(NETLINK_ROUTE)")
        }
    }

    deinit { nl_socket_free(handle) }

    var fileDescriptor: Int32 { nl_socket_get_fd(handle) }

    /// Joins the link, address, route and rule groups; turns the socket into a pure listener.
    func subscribe() throws(NetlinkError) {
        // Notifications carry sequence number 0; libnl's check would reject them.
        nl_socket_disable_seq_check(handle)
        for group in Self.groups {
            let result = nl_socket_add_membership(handle, group)
            if result < 0 { throw .libnl(.subscribe, result, "group \(group)") }
        }
        let result = nl_socket_set_nonblocking(handle)
        if result < 0 { throw .libnl(.socket, result, "nl_socket_set_nonblocking") }
    }

    /// Sets the kernel receive buffer. `SO_RCVBUFFORCE` (root) ignores `net.core.rmem_max`;
    /// without the privilege this falls back to `SO_RCVBUF`, which the kernel caps.
    /// Returns the effective size the kernel reports (twice the request, for bookkeeping).
    @discardableResult
    func setReceiveBuffer(_ bytes: Int) -> Int {
        var size = Int32(clamping: bytes)
        let length = socklen_t(MemoryLayout<Int32>.size)
        if setsockopt(fileDescriptor, SOL_SOCKET, np_so_rcvbufforce(), &size, length) != 0 {
            _ = setsockopt(fileDescriptor, SOL_SOCKET, SO_RCVBUF, &size, length)
        }
        var effective: Int32 = 0
        var effectiveLength = length
        _ = getsockopt(fileDescriptor, SOL_SOCKET, SO_RCVBUF, &effective, &effectiveLength)
        return Int(effective)
    }

    /// The addresses whose covering routes are kept although they are not default routes: the
    /// internet probes (``KernelRoute/probe(_:)``). Few routes cover them, and they are what can
    /// change the kernel's route to the internet, so the engine asks again only when one changes.
    static let keptAddresses: [np_watch] = keptProbes.map(watch)

    /// The internet probes, as addresses (the kernel's route filter lets their routes through too).
    static let keptProbes = [KernelRoute.probe(.ipv4), KernelRoute.probe(.ipv6)]

    /// `address` in the form `np_walk` compares.
    static func watch(_ address: IPAddress) -> np_watch {
        var watch = np_watch()
        watch.family = UInt8(address.family == .ipv4 ? AF_INET : AF_INET6)
        withUnsafeMutableBytes(of: &watch.bytes) { raw in
            for (i, byte) in address.bytes.enumerated() where i < raw.count { raw[i] = byte }
        }
        return watch
    }

    /// The last sequence number used by a request; replies carry it back.
    private var sequence: UInt32 = 0

    /// How one read ended.
    enum Received {
        /// A datagram was read and walked.
        case messages(np_walk_result)
        /// Nothing was pending (non-blocking socket).
        case empty
        /// The kernel dropped messages: the receive buffer overflowed (`ENOBUFS`).
        case overrun
        /// Another failure, as a libnl error code (positive).
        case failed(Int32)
    }

    /// Reads one datagram into `buffer` and hands its messages to `collector`
    /// (``MessageCollector/handle(_:)``). With `filterRoutes`, only default routes and routes
    /// covering an address in `kept` are handed on; the others are dropped unparsed, and the
    /// result says whether one of them covered an address in `watched` (`np_walk`). With
    /// `sequence` non-zero, only replies to that request count.
    ///
    /// Its own `recv` rather than libnl's `nl_recvmsgs`, which allocates a receive buffer per
    /// read and a copy of every message before a callback can look at it: a 1,000,000-route
    /// batch then cost 1,000,000 allocations for routes that are thrown away.
    func receive(
        into buffer: ReceiveBuffer,
        delivering collector: MessageCollector,
        filterRoutes: Bool,
        keeping kept: [np_watch] = [],
        watching watched: [np_watch] = [],
        sequence: UInt32 = 0
    ) -> Received {
        while true {
            let count = recv(fileDescriptor, buffer.bytes, buffer.size, 0)
            if count < 0 {
                switch errno {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK: return .empty
                case ENOBUFS: return .overrun
                default: return .failed(nl_syserr2nlerr(errno))
                }
            }
            if count == 0 { return .empty }
            let result = Self.walk(
                buffer.bytes,
                count: count,
                delivering: collector,
                filterRoutes: filterRoutes,
                keeping: kept,
                watching: watched,
                sequence: sequence
            )
            return .messages(result)
        }
    }

    /// Walks the `count` bytes of one datagram at `bytes` (`np_walk`), handing its messages to
    /// `collector` as ``receive(into:delivering:filterRoutes:keeping:watching:sequence:)``
    /// describes. Apart from the socket so that ``NetlinkDatagram`` walks bytes the same way.
    static func walk(
        _ bytes: UnsafeMutableRawPointer,
        count: Int,
        delivering collector: MessageCollector,
        filterRoutes: Bool,
        keeping kept: [np_watch],
        watching watched: [np_watch],
        sequence: UInt32
    ) -> np_walk_result {
        var result = np_walk_result()
        withWatchLists(kept, watched) { kept, keptCount, watched, watchedCount in
            np_walk(
                bytes,
                Int32(count),
                sequence,
                filterRoutes ? 1 : 0,
                kept,
                keptCount,
                watched,
                watchedCount,
                MessageCollector.headerCallback,
                Unmanaged.passUnretained(collector).toOpaque(),
                &result
            )
        }
        return result
    }

    /// `kept` and `watched` as the C walk takes them, each a base address and a count.
    private static func withWatchLists<Result>(
        _ kept: [np_watch],
        _ watched: [np_watch],
        _ body: (UnsafePointer<np_watch>?, Int32, UnsafePointer<np_watch>?, Int32) -> Result
    ) -> Result {
        kept.withUnsafeBufferPointer { kept in
            watched.withUnsafeBufferPointer { watched in
                body(kept.baseAddress, Int32(kept.count), watched.baseAddress, Int32(watched.count))
            }
        }
    }

    /// Reads every datagram queued on this non-blocking socket, up to `buffer.slots` per system
    /// call (`np_receive_batch`: `recvmmsg`), handing their messages to `collector` with routes
    /// filtered as ``receive(into:delivering:filterRoutes:keeping:watching:sequence:)`` does.
    /// Returns ``Received/empty`` only when nothing at all was queued; `more` says whether the
    /// batch filled every slot (more may be queued: call again) or the queue is known empty.
    func receiveBatch(
        into buffer: ReceiveBuffer,
        delivering collector: MessageCollector,
        keeping kept: [np_watch],
        watching watched: [np_watch]
    ) -> (received: Received, more: Bool) {
        var result = np_walk_result()
        let slots = Int32(buffer.size / Self.slotSize)
        let count = Self.withWatchLists(kept, watched) { kept, keptCount, watched, watchedCount in
            np_receive_batch(
                fileDescriptor,
                buffer.bytes,
                Int32(Self.slotSize),
                slots,
                1,
                kept,
                keptCount,
                watched,
                watchedCount,
                MessageCollector.headerCallback,
                Unmanaged.passUnretained(collector).toOpaque(),
                &result
            )
        }
        if count < 0 {
            return (-count == ENOBUFS ? .overrun : .failed(nl_syserr2nlerr(-count)), false)
        }
        if count == 0 { return (.empty, false) }
        // A datagram cut short lost messages: recover as from an overrun.
        if result.truncated != 0 { return (.overrun, true) }
        return (.messages(result), count == slots)
    }

    /// The size of one ``receiveBatch(into:delivering:keeping:watching:)`` slot: a notification
    /// is one message, and 32 KiB is the most the kernel puts in one netlink datagram.
    static let slotSize = 32768

    /// Asks the kernel which route it would use for `address` (`ip route get ADDRESS [oif
    /// INDEX] fibmatch`, rules applied) and delivers the matched route to `collector`; `false`
    /// when there is none (`ENETUNREACH`, `EHOSTUNREACH`) or the question failed.
    /// `np_route_get_request` says what the kernel answers with an output interface.
    func routeGet(
        _ address: IPAddress,
        through interface: Int32 = 0,
        buffer: ReceiveBuffer,
        delivering collector: MessageCollector
    ) -> Bool {
        sequence &+= 1
        if sequence == 0 { sequence = 1 }
        let bytes = address.bytes
        let sent = bytes.withUnsafeBufferPointer {
            np_route_get_request(
                fileDescriptor,
                sequence,
                address.family == .ipv4 ? AF_INET : AF_INET6,
                $0.baseAddress,
                Int32($0.count),
                interface
            )
        }
        guard sent >= 0 else { return false }
        // One reply: the route, or an error. Replies to earlier questions are passed over.
        while true {
            switch receive(into: buffer, delivering: collector, filterRoutes: false, sequence: sequence) {
            case .messages(let result):
                if result.error != 0 { return false }
                if result.delivered > 0 { return true }
            case .overrun, .empty, .failed:
                // An overrun may have dropped the reply itself: waiting on would block for good.
                return false
            }
        }
    }

    /// Dumps one object class (`RTM_GETLINK`, `RTM_GETADDR`, `RTM_GETROUTE`, `RTM_GETRULE`) into
    /// `collector`, routes filtered as on the notification socket (``keptAddresses``).
    /// - Returns: the number of route messages dropped.
    @discardableResult
    func dump(_ type: Int32, buffer: ReceiveBuffer, delivering collector: MessageCollector) throws(NetlinkError)
        -> UInt64
    {
        sequence &+= 1
        if sequence == 0 { sequence = 1 }
        guard np_dump_request(fileDescriptor, sequence, type) >= 0 else {
            throw .libnl(.dump, -nl_syserr2nlerr(errno), "request \(type)")
        }
        var skipped: UInt64 = 0
        var interrupted = false
        while true {
            switch receive(
                into: buffer,
                delivering: collector,
                filterRoutes: true,
                keeping: Self.keptAddresses,
                sequence: sequence
            ) {
            case .messages(let result):
                skipped += UInt64(result.skipped)
                interrupted = interrupted || result.interrupted != 0
                if result.error != 0 { throw .libnl(.dump, -nl_syserr2nlerr(-result.error), "receive \(type)") }
                if result.truncated != 0 {
                    throw NetlinkError(.dump, rawValue: NLE_MSG_TRUNC, context: "receive \(type)")
                }
                if result.done != 0 {
                    if interrupted { throw NetlinkError(.dump, rawValue: NLE_DUMP_INTR, context: "receive \(type)") }
                    return skipped
                }
            case .empty:
                throw NetlinkError(.dump, rawValue: NLE_AGAIN, context: "receive \(type): the dump ended early")
            case .overrun:
                throw NetlinkError(.dump, rawValue: NLE_NOMEM, context: "receive \(type): receive buffer overrun")
            case .failed(let code):
                throw NetlinkError(.dump, rawValue: code, context: "receive \(type)")
            }
        }
    }
}

/// The memory one socket's datagrams are read into, allocated once. 64 KiB never truncates: the
/// kernel caps a netlink datagram at 32 KiB.
final class ReceiveBuffer {
    let size: Int
    let bytes: UnsafeMutableRawPointer

    init(size: Int = 65536) {
        self.size = size
        bytes = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
    }

    deinit { bytes.deallocate() }
}
