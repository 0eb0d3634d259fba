// SPDX-License-Identifier: Apache-2.0

import CNetlink
import Glibc
import NetPathCore
import NetPathLinux
import Testing

/// ``RouteFilter`` run by the kernel: the program is attached to one end of a Unix datagram
/// socket pair (the kernel runs socket filters there as on netlink), crafted rtnetlink messages
/// are sent through it, and what arrives is compared with what the engine's own walk keeps
/// (`np_route_is_default`, `np_route_covers`). Needs no privilege.
struct RouteFilterTests {
    /// A socket pair whose receiving end carries `filter`.
    private final class Pair {
        let sender: Int32, receiver: Int32

        init(_ filter: RouteFilter) throws {
            var fds: [Int32] = [-1, -1]
            guard socketpair(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0, &fds) == 0 else {
                throw Failure("socketpair: errno \(errno)")
            }
            (sender, receiver) = (fds[0], fds[1])
            let refused = filter.attach(to: receiver)
            guard refused == 0 else { throw Failure("attach: errno \(refused)") }
        }

        deinit {
            close(sender)
            close(receiver)
        }

        /// Whether `message` gets through.
        func passes(_ message: [UInt8]) throws -> Bool {
            guard send(sender, message, message.count, 0) == message.count else {
                throw Failure("send: errno \(errno)")
            }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let received = recv(receiver, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if received < 0 && errno == EAGAIN { return false }
            guard received == message.count else { throw Failure("recv: \(received), errno \(errno)") }
            return true
        }
    }

    private struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// Where `RTA_DST` sits in a generated message.
    private enum Layout: CaseIterable {
        case destinationFirst  // no RTA_TABLE
        case afterTable  // what today's kernels send
        case afterPriority  // another attribute first: the program cannot tell, so passes it
        case none  // no RTA_DST (a default route has none)
    }

    /// An rtnetlink route message as the kernel lays it out (host-endian header fields).
    private static func route(
        type: Int32 = Int32(RTM_NEWROUTE),
        family: Int32,
        length: Int,
        destination: [UInt8],
        layout: Layout
    ) -> [UInt8] {
        func attribute(_ type: UInt16, _ payload: [UInt8]) -> [UInt8] {
            let length = UInt16(4 + payload.count)
            var bytes =
                withUnsafeBytes(of: length.littleEndian, Array.init)
                + withUnsafeBytes(of: type.littleEndian, Array.init)
            bytes += payload
            while bytes.count % 4 != 0 { bytes.append(0) }
            return bytes
        }
        let table = attribute(UInt16(RTA_TABLE.rawValue), withUnsafeBytes(of: UInt32(254).littleEndian, Array.init))
        let priority = attribute(
            UInt16(RTA_PRIORITY.rawValue),
            withUnsafeBytes(of: UInt32(100).littleEndian, Array.init)
        )
        let dst = attribute(UInt16(RTA_DST.rawValue), destination)
        let attributes: [UInt8]
        switch layout {
        case .destinationFirst: attributes = dst + table
        case .afterTable: attributes = table + dst
        case .afterPriority: attributes = priority + dst + table
        case .none: attributes = table
        }
        // rtmsg: family, dst_len, src_len, tos, table, protocol, scope, type, flags.
        let rtmsg: [UInt8] = [UInt8(family), UInt8(length), 0, 0, 254, 4, 0, 1, 0, 0, 0, 0]
        let total = UInt32(16 + rtmsg.count + attributes.count)
        var header = withUnsafeBytes(of: total.littleEndian, Array.init)
        header += withUnsafeBytes(of: UInt16(type).littleEndian, Array.init)
        header += withUnsafeBytes(of: UInt16(0).littleEndian, Array.init)  // flags
        header += [UInt8](repeating: 0, count: 8)  // seq, pid
        return header + rtmsg + attributes
    }

    /// What the engine's walk keeps of `message`: a default route, or one covering a watched address.
    private static func walkKeeps(_ message: [UInt8], watching watched: [IPAddress]) -> Bool {
        message.withUnsafeBytes { raw in
            let header = raw.baseAddress!.assumingMemoryBound(to: nlmsghdr.self)
            let watches = watched.map(Self.watch)
            return np_route_is_default(header) != 0 || np_route_covers(header, watches, Int32(watches.count)) != 0
        }
    }

    private static func watch(_ address: IPAddress) -> np_watch {
        var watch = np_watch()
        watch.family = UInt8(address.family == .ipv4 ? AF_INET : AF_INET6)
        withUnsafeMutableBytes(of: &watch.bytes) { raw in
            for (i, byte) in address.bytes.enumerated() { raw[i] = byte }
        }
        return watch
    }

    static let watched: [IPAddress] = [
        KernelRoute.probe(.ipv4), KernelRoute.probe(.ipv6), "192.0.2.77", "2001:db8:1:2:3:4:5:6",
    ]

    @Test(
        "route messages: what passes is exactly what the engine's walk keeps, for every prefix length and layout it can read"
    )
    func passesWhatTheWalkKeeps() throws {
        let pair = try Pair(RouteFilter(watching: Self.watched))
        var generator = SystemRandomNumberGenerator()
        var checked = 0, passed = 0
        for (family, width) in [(AF_INET, 4), (AF_INET6, 16)] {
            let near = Self.watched.filter { $0.bytes.count == width }.map(\.bytes)
            for length in 0...(width * 8 + 1) {
                for layout in Layout.allCases {
                    for trial in 0..<6 {
                        // A watched address itself, one with a bit flipped at, before or after
                        // the prefix's end, or random bytes.
                        var destination = near[trial % near.count]
                        switch trial {
                        case 2: destination = (0..<width).map { _ in UInt8.random(in: 0...255, using: &generator) }
                        case 3, 4, 5:
                            let bit = min(max(length - 1 + (trial - 4), 0), width * 8 - 1)
                            destination[bit / 8] ^= 0x80 >> UInt8(bit % 8)
                        default: break
                        }
                        for type in [Int32(RTM_NEWROUTE), Int32(RTM_DELROUTE)] {
                            let message = Self.route(
                                type: type,
                                family: family,
                                length: length,
                                destination: destination,
                                layout: layout
                            )
                            let keeps = Self.walkKeeps(message, watching: Self.watched)
                            let passes = try pair.passes(message)
                            checked += 1
                            if passes { passed += 1 }
                            // A layout the program cannot read is passed whole: the walk decides.
                            let expected = layout == .afterPriority && length > 0 && length <= width * 8 ? true : keeps
                            #expect(
                                passes == expected,
                                "family \(family) /\(length) \(destination) \(layout): passed \(passes), walk keeps \(keeps)"
                            )
                        }
                    }
                }
            }
        }
        // Both outcomes were seen, many times.
        #expect(passed > 100 && checked - passed > 100, "\(passed) of \(checked) passed")
    }

    @Test("links, addresses and rules pass, as do truncated route messages; routes of other families do not")
    func otherMessages() throws {
        let pair = try Pair(RouteFilter(watching: []))
        for type in [
            RTM_NEWLINK, RTM_DELLINK, RTM_NEWADDR, RTM_DELADDR, RTM_NEWRULE, RTM_DELRULE, 0x1_00 | RTM_NEWROUTE,
        ] {
            var message = Self.route(family: AF_INET, length: 32, destination: [10, 9, 0, 1], layout: .afterTable)
            message[4] = UInt8(type & 0xFF)
            message[5] = UInt8(type >> 8)
            #expect(try pair.passes(message), "type \(type)")
        }
        let specific = Self.route(family: AF_INET, length: 32, destination: [10, 9, 0, 1], layout: .afterTable)
        #expect(!(try pair.passes(specific)))
        #expect(try pair.passes(Array(specific.prefix(24))), "a message too short for a route header")
        let bridge = Self.route(family: Int32(AF_BRIDGE), length: 8, destination: [10, 9, 0, 1], layout: .afterTable)
        #expect(!(try pair.passes(bridge)))
        #expect(!Self.walkKeeps(bridge, watching: []))
        // A default route of any family has no destination to compare: passed.
        #expect(try pair.passes(Self.route(family: AF_INET6, length: 0, destination: [], layout: .none)))
    }

    @Test("a watched address is let through only by the program that watches it; past the limit, no filter")
    func programsFollowTheWatchList() throws {
        let route = Self.route(family: AF_INET, length: 24, destination: [198, 51, 100, 0], layout: .afterTable)
        #expect(!(try Pair(RouteFilter(watching: [])).passes(route)))
        #expect(try Pair(RouteFilter(watching: ["198.51.100.9"])).passes(route))
        #expect(!(try Pair(RouteFilter(watching: ["198.51.101.9"])).passes(route)))

        let many = (0...RouteFilter.maximumAddresses).map { IPAddress("2001:db8::\(String($0, radix: 16))")! }
        let tooMany = RouteFilter(watching: many)
        #expect(tooMany.passesEverything && tooMany.instructions.isEmpty)
        #expect(try Pair(tooMany).passes(route))
        // The largest programs the limit allows, of each family and mixed as the engine makes
        // them (the probes first), are ones the kernel takes, and they still decide right.
        let ipv4 = (1...RouteFilter.maximumAddresses).map { IPAddress("10.\($0).0.1")! }
        let mixed =
            [KernelRoute.probe(.ipv4), KernelRoute.probe(.ipv6)]
            + (0..<(RouteFilter.maximumAddresses - 2)).map { $0 % 2 == 0 ? ipv4[$0] : many[$0] }
        for list in [Array(many.dropLast()), ipv4, mixed] {
            let largest = RouteFilter(watching: list)
            #expect(!largest.passesEverything && largest.instructions.count <= Int(BPF_MAXINSNS))
            let pair = try Pair(largest)
            for address in [list.first!, list.last!] {
                let width = address.bytes.count
                let family = width == 4 ? AF_INET : AF_INET6
                let covering = Self.route(
                    family: family,
                    length: width * 8 - 8,
                    destination: address.bytes,
                    layout: .afterTable
                )
                #expect(try pair.passes(covering), "\(address) in a list of \(list.count)")
                var other = address.bytes
                other[0] ^= 0x40
                let elsewhere = Self.route(family: family, length: width * 8, destination: other, layout: .afterTable)
                #expect(try !pair.passes(elsewhere) == !Self.walkKeeps(elsewhere, watching: list), "\(other)")
            }
        }
    }

    @Test("a datagram of a dump (NLM_F_MULTI) passes whole, whatever its first route")
    func dumpsPass() throws {
        let pair = try Pair(RouteFilter(watching: []))
        var message = Self.route(family: AF_INET, length: 32, destination: [10, 9, 0, 1], layout: .afterTable)
        #expect(!(try pair.passes(message)))
        message[6] |= UInt8(NLM_F_MULTI)
        #expect(try pair.passes(message))
    }
}
