// SPDX-License-Identifier: Apache-2.0

import NetPathCore
import NetPathLinux
import Testing

/// ``NetlinkDatagram``: datagrams given as bytes, walked and parsed as the engine reads the
/// kernel's. Inputs the netlink fuzz harness (Fuzz/netlink) found are kept here.
struct NetlinkDatagramTests {
    /// An `RTM_NEWROUTE` default route of `family` through interface 3 in table main, whose
    /// `RTA_PREFSRC` is `source` (4 or 16 bytes, whatever the family).
    static func defaultRoute(family: UInt8, source: [UInt8]) -> [UInt8] {
        func u16(_ v: Int) -> [UInt8] { [UInt8(v & 0xff), UInt8(v >> 8)] }
        func u32(_ v: Int) -> [UInt8] { u16(v & 0xffff) + u16(v >> 16) }
        func attribute(_ type: Int, _ payload: [UInt8]) -> [UInt8] {
            let bytes = u16(4 + payload.count) + u16(type) + payload
            return bytes + [UInt8](repeating: 0, count: (4 - bytes.count % 4) % 4)
        }
        // rtmsg: family, dst_len 0, src_len, tos, table main, proto boot, scope universe, type unicast, flags.
        let route: [UInt8] = [family, 0, 0, 0, 254, 3, 0, 1] + u32(0)
        let attributes = attribute(4, u32(3)) + attribute(7, source) + attribute(15, u32(254))  // OIF, PREFSRC, TABLE
        let body = route + attributes
        // nlmsghdr: length, RTM_NEWROUTE, flags, sequence, port.
        return u32(16 + body.count) + u16(24) + u16(0) + u32(1) + u32(0) + body
    }

    @Test("a route's preferred source of the other family is dropped, the route kept (found by the fuzzer)")
    func preferredSourceOfTheOtherFamilyIsDropped() throws {
        let walk = NetlinkDatagram.parse(Self.defaultRoute(family: 10, source: [192, 0, 2, 2]))
        let message = try #require(walk.messages.first)
        guard case .newRoute(let route, _) = message else {
            Issue.record("expected a route, got \(message)")
            return
        }
        #expect(route.family == .ipv6)
        #expect(route.preferredSource == nil)
        #expect(route.nexthops.map(\.interfaceIndex) == [3])
    }

    @Test("a route's preferred source of its own family is kept")
    func preferredSourceOfTheRoutesFamilyIsKept() throws {
        let walk = NetlinkDatagram.parse(Self.defaultRoute(family: 2, source: [192, 0, 2, 2]))
        guard case .newRoute(let route, _)? = walk.messages.first else {
            Issue.record("expected a route, got \(walk.messages)")
            return
        }
        #expect(route.preferredSource == "192.0.2.2")
    }
}
