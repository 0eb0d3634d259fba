import CNetlink
import Glibc

/// An owned `struct nl_sock` connected to `NETLINK_ROUTE`.
///
/// Not Sendable: a socket lives and dies on the engine thread.
final class NetlinkSocket {
    let handle: OpaquePointer

    /// The multicast groups netpath follows (`RTNLGRP_*`).
    static let groups: [Int32] = [
        1,  // RTNLGRP_LINK
        5,  // RTNLGRP_IPV4_IFADDR
        7,  // RTNLGRP_IPV4_ROUTE
        9,  // RTNLGRP_IPV6_IFADDR
        11,  // RTNLGRP_IPV6_ROUTE
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

    /// Dumps one object class (`RTM_GETLINK`, `RTM_GETADDR`, `RTM_GETROUTE`) into the collector.
    func dump(_ type: Int32) throws(NetlinkError) {
        var result = nl_rtgen_request(handle, type, AF_UNSPEC, Int32(NLM_F_DUMP))
        if result < 0 { throw .libnl(.dump, result, "request \(type)") }
        result = nl_recvmsgs_default(handle)
        if result < 0 { throw .libnl(.dump, result, "receive \(type)") }
    }
}
