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

    /// Routes every valid message to `collector`'s callback.
    func deliver(to collector: MessageCollector) {
        nl_socket_modify_cb(
            handle,
            NL_CB_VALID,
            NL_CB_CUSTOM,
            MessageCollector.validCallback,
            Unmanaged.passUnretained(collector).toOpaque()
        )
    }

    /// Joins the link, address and route groups; turns the socket into a pure listener.
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

    /// Reads with a large buffer and no `MSG_PEEK`: the kernel caps a netlink datagram at 32 KiB,
    /// so 64 KiB never truncates and saves libnl's peek syscall on every read.
    func useLargeReads() {
        _ = nl_socket_set_msg_buf_size(handle, 65536)
        nl_socket_disable_msg_peek(handle)
    }

    /// Reads one datagram's messages into the collector. Returns the number of messages handled,
    /// 0 or `-NLE_AGAIN` when nothing is pending, or another negative libnl error.
    func receiveOnce() -> Int32 {
        let callbacks = nl_socket_get_cb(handle)
        defer { nl_cb_put(callbacks) }
        return nl_recvmsgs_report(handle, callbacks)
    }

    /// Asks the kernel which route it would use for `address` (`ip route get`, rules applied) and
    /// delivers the matched route to the collector; `false` when there is none (`ENETUNREACH`)
    /// or the question failed.
    ///
    /// The socket must not request acknowledgements (``disableAcknowledgements()``): the reply is
    /// one message, and an ACK after it would be read as the answer to the next question.
    func routeGet(_ address: IPAddress) -> Bool {
        var bytes = address.bytes
        let sent = bytes.withUnsafeMutableBufferPointer {
            np_route_get_request(handle, address.family == .ipv4 ? AF_INET : AF_INET6, $0.baseAddress, Int32($0.count))
        }
        guard sent >= 0 else { return false }
        return nl_recvmsgs_default(handle) >= 0
    }

    /// Stops libnl from asking for an ACK to every request it sends.
    func disableAcknowledgements() { nl_socket_disable_auto_ack(handle) }

    /// Dumps one object class (`RTM_GETLINK`, `RTM_GETADDR`, `RTM_GETROUTE`, `RTM_GETRULE`) into
    /// the collector.
    func dump(_ type: Int32) throws(NetlinkError) {
        var result = nl_rtgen_request(handle, type, AF_UNSPEC, Int32(NLM_F_DUMP))
        if result < 0 { throw .libnl(.dump, result, "request \(type)") }
        result = nl_recvmsgs_default(handle)
        if result < 0 { throw .libnl(.dump, result, "receive \(type)") }
    }
}
