// SPDX-License-Identifier: Apache-2.0

import FuzzSupport
import NetPathCore
import NetPathLinux

/// Fuzzes the netlink walk and parsers: each input is one datagram as `recv` returns it, walked by
/// the C shim (`np_walk`, `np_parse_link`, `np_parse_rule`, libnl for addresses and routes) into
/// ``KernelMessage``s (``NetlinkDatagram``), which are then mirrored into a ``KernelTable`` and
/// read back as a snapshot reads it. AddressSanitizer watches the C as well as the Swift.
///
/// - Each message handed to the parser gives at most one record.
/// - Parsing is a function of the bytes: a second walk gives the same result (no read of memory
///   the message did not fill).
/// - The records are what the kernel could send: a link's index is positive and its name the
///   kernel's bytes (at most 15, or the `ifN` netpath makes up for none), its MAC `aa:bb:…` of
///   at most 32 bytes; a route's destination and preferred source, and a rule's
///   addresses, are of its own family.
/// - The table's queries hold up on what it mirrored.
@main
enum NetlinkHarness {
    static func main() { Fuzzer.run(check) }

    /// A watched address of each family, so that the walk's covering check runs too.
    static let watched: [IPAddress] = ["192.0.2.7", "2001:db8::7"]

    static func check(_ bytes: UnsafeBufferPointer<UInt8>) {
        let walk = NetlinkDatagram.parse(Array(bytes), watching: watched)
        invariant(walk.messages.count <= walk.delivered, "\(walk.messages.count) records of \(walk.delivered) messages")
        invariant(NetlinkDatagram.parse(Array(bytes), watching: watched) == walk, "a second walk differs")
        var table = KernelTable()
        for message in walk.messages {
            check(message)
            table.apply(message)
        }
        invariant(table.defaultRouteKeys.isSubset(of: table.routes.keys), "a default route key without its route")
        _ = table.defaultRoutesByInterface()
        _ = table.addressesByInterface()
        for family in [IPAddress.Family.ipv4, .ipv6] {
            _ = table.reachableTables(family)
            _ = table.candidateInterfaces(for: family)
        }
    }

    static func check(_ message: KernelMessage) {
        switch message {
        case .newLink(let link):
            invariant(link.index > 0, "a link with index \(link.index)")
            invariant(
                InterfaceName.kernelBytes(link.name).count <= 15 || link.name == "if\(link.index)",
                "a link name longer than the kernel's: \(link.name)"
            )
            let macBytes = link.mac.isEmpty ? 0 : (link.mac.utf8.count + 1) / 3
            invariant(
                macBytes <= 32 && (link.mac.isEmpty || link.mac.utf8.count == 3 * macBytes - 1),
                "MAC \(link.mac)"
            )
        case .deleteLink(let index):
            invariant(index > 0, "a deleted link with index \(index)")
        case .newAddress, .deleteAddress:
            // Any local address of 4 or 16 bytes makes a record (libnl reads its family from them).
            break
        case .newRoute(let route, _), .deleteRoute(let route):
            // Not the gateways, which may be of the other family: an IPv4 route through an IPv6
            // next hop (RFC 8950, `ip route add … via inet6 fe80::1`) is real.
            let own = [route.destination, route.preferredSource].compactMap { $0?.family }
            invariant(own.allSatisfy { $0 == route.family }, "a route with an address of another family: \(route)")
        case .newRule(let rule), .deleteRule(let rule):
            let families = [rule.source, rule.destination].compactMap { $0?.family }
            invariant(families.allSatisfy { $0 == rule.family }, "a rule with an address of another family: \(rule)")
        }
    }
}
