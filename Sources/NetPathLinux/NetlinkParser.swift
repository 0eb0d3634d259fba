// SPDX-License-Identifier: Apache-2.0

import CNetlink
import NetPathCore

/// Turns netlink messages into ``KernelMessage``s: links and rules from their attributes
/// (`np_parse_link`, `np_parse_rule`), addresses and routes from libnl objects. The only file
/// that reads libnl's parse results.
///
/// Messages arrive from ``NetlinkSocket``'s own receive (`np_walk`), which has already dropped
/// the routes netpath does not keep. libnl parses an address or kept route into a
/// `struct nl_object` and hands it to a C callback that cannot capture context, so the collector
/// travels through the `void *arg` (libnl-facts.md).
final class MessageCollector {
    var messages: [KernelMessage] = []
    private var currentType: UInt16 = 0
    private var currentFlags: UInt16 = 0

    // rtnetlink message types and flags (linux/rtnetlink.h, linux/netlink.h).
    static let newLink = UInt16(RTM_NEWLINK)
    static let deleteLink = UInt16(RTM_DELLINK)
    static let newAddress = UInt16(RTM_NEWADDR)
    static let deleteAddress = UInt16(RTM_DELADDR)
    static let newRoute = UInt16(RTM_NEWROUTE)
    static let deleteRoute = UInt16(RTM_DELROUTE)
    static let newRule = UInt16(RTM_NEWRULE)
    static let deleteRule = UInt16(RTM_DELRULE)
    static let replaceFlag = UInt16(NLM_F_REPLACE)

    /// The `np_walk` callback: one call per message the walk delivers.
    static let headerCallback: @convention(c) (UnsafeMutablePointer<nlmsghdr>?, UnsafeMutableRawPointer?) -> Void = {
        header,
        arg in
        guard let header, let arg else { return }
        Unmanaged<MessageCollector>.fromOpaque(arg).takeUnretainedValue().handle(header)
    }

    /// Parses one message and appends what netpath reads of it.
    func handle(_ header: UnsafeMutablePointer<nlmsghdr>) {
        let type = header.pointee.nlmsg_type
        switch type {
        case Self.newLink, Self.deleteLink:
            // Bridge-port (AF_BRIDGE) and per-family link messages also travel on RTNLGRP_LINK;
            // a bridge port's RTM_DELLINK must not delete the link itself.
            guard np_link_wire_family(header) == AF_UNSPEC else { return }
            // Links are read straight from their attributes (np_parse_link says why).
            var parsed = np_link()
            guard np_parse_link(header, &parsed) == 0, let record = Self.link(parsed) else { return }
            messages.append(type == Self.newLink ? .newLink(record) : .deleteLink(index: record.index))
        case Self.newRule, Self.deleteRule:
            var parsed = np_rule()
            guard np_parse_rule(header, &parsed) == 0, let record = Self.rule(parsed) else { return }
            messages.append(type == Self.newRule ? .newRule(record) : .deleteRule(record))
        case Self.newAddress, Self.deleteAddress, Self.newRoute, Self.deleteRoute:
            // Few: addresses, and the routes np_walk kept. libnl parses them from a copy.
            guard let msg = np_msg_copy(header) else { return }
            defer { nlmsg_free(msg) }
            currentType = type
            currentFlags = header.pointee.nlmsg_flags
            nl_msg_parse(msg, Self.objectCallback, Unmanaged.passUnretained(self).toOpaque())
        default:
            return
        }
    }

    private static let objectCallback: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = {
        object,
        arg in
        guard let object, let arg else { return }
        let collector = Unmanaged<MessageCollector>.fromOpaque(arg).takeUnretainedValue()
        if let message = collector.convert(object) { collector.messages.append(message) }
    }

    private func convert(_ object: OpaquePointer) -> KernelMessage? {
        switch currentType {
        case Self.newAddress: return Self.address(object).map { .newAddress($0) }
        case Self.deleteAddress: return Self.address(object).map { .deleteAddress($0) }
        case Self.newRoute:
            return Self.route(object).map { .newRoute($0, replace: currentFlags & Self.replaceFlag != 0) }
        case Self.deleteRoute: return Self.route(object).map { .deleteRoute($0) }
        default: return nil
        }
    }

    static func link(_ link: np_link) -> LinkRecord? {
        guard link.index > 0 else { return nil }
        var link = link
        // Names are bytes: one that is not plain UTF-8 is kept escaped, losslessly (InterfaceName).
        let name = withUnsafeBytes(of: &link.name) { InterfaceName.string(fromKernel: $0) }
        let length = Int(link.address_length)
        let mac = withUnsafeBytes(of: &link.address) { macString(UnsafeRawBufferPointer(rebasing: $0.prefix(length))) }
        return LinkRecord(
            index: link.index,
            name: name.isEmpty ? "if\(link.index)" : name,
            flags: link.flags,
            operState: link.operstate,
            mtu: link.mtu,
            mac: mac,
            arpType: link.arptype,
            kind: Self.string(&link.kind)
        )
    }

    static func rule(_ rule: np_rule) -> RuleRecord? {
        var rule = rule
        let family: IPAddress.Family
        switch Int32(rule.family) {
        case AF_INET: family = .ipv4
        case AF_INET6: family = .ipv6
        default: return nil
        }
        let width = family == .ipv4 ? 4 : 16
        func address<Bytes>(_ tuple: inout Bytes, _ length: UInt8) -> IPAddress? {
            guard length > 0 else { return nil }
            return withUnsafeBytes(of: &tuple) { IPAddress(bytes: Array($0.prefix(width))) }
        }
        return RuleRecord(
            family: family,
            priority: rule.priority,
            action: RuleRecord.Action(rawValue: rule.action) ?? .unspecified,
            table: rule.table,
            gotoTarget: rule.goto_target,
            inverted: rule.flags & UInt32(FIB_RULE_INVERT) != 0,
            source: address(&rule.src, rule.src_len),
            sourceLength: Int(rule.src_len),
            destination: address(&rule.dst, rule.dst_len),
            destinationLength: Int(rule.dst_len),
            tos: rule.tos,
            mark: rule.has_fwmark != 0 ? RuleRecord.Mark(value: rule.fwmark, mask: rule.fwmask) : nil,
            inputInterface: withUnsafeBytes(of: &rule.iifname) { InterfaceName.string(fromKernel: $0) },
            outputInterface: withUnsafeBytes(of: &rule.oifname) { InterfaceName.string(fromKernel: $0) },
            suppressPrefixLength: rule.suppress_prefixlen >= 0 ? Int(rule.suppress_prefixlen) : nil,
            suppressInterfaceGroup: rule.suppress_ifgroup >= 0 ? Int(rule.suppress_ifgroup) : nil,
            l3mdev: rule.l3mdev != 0,
            uidRange: rule.has_uid_range != 0 && rule.uid_start <= rule.uid_end ? rule.uid_start...rule.uid_end : nil,
            ipProtocol: rule.ip_proto,
            hasPortRange: rule.has_port_range != 0
        )
    }

    /// A NUL-terminated C array imported as a tuple.
    private static func string<T>(_ tuple: inout T) -> String {
        withUnsafeBytes(of: &tuple) { raw in
            let bytes = raw.prefix { $0 != 0 }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    static func address(_ addr: OpaquePointer) -> AddressRecord? {
        guard let local = ipAddress(rtnl_addr_get_local(addr)) else { return nil }
        let flags = UInt32(truncatingIfNeeded: rtnl_addr_get_flags(addr))
        let address = InterfaceAddress(
            local,
            prefixLength: Int(rtnl_addr_get_prefixlen(addr)),
            scope: scope(rtnl_addr_get_scope(addr)),
            isTentative: flags & UInt32(IFA_F_TENTATIVE) != 0,
            isDADFailed: flags & UInt32(IFA_F_DADFAILED) != 0,
            isDeprecated: flags & UInt32(IFA_F_DEPRECATED) != 0
        )
        return AddressRecord(index: rtnl_addr_get_ifindex(addr), address: address)
    }

    static func route(_ route: OpaquePointer) -> RouteRecord? {
        let family: IPAddress.Family
        switch Int32(rtnl_route_get_family(route)) {
        case AF_INET: family = .ipv4
        case AF_INET6: family = .ipv6
        default: return nil
        }
        // Addresses of the route's own family only: the kernel sends no other, and a record
        // that kept one (an IPv6 route with a 4-byte RTA_PREFSRC, found by Fuzz/netlink) would tie
        // the route to an address of the other family in the mirror.
        func own(_ addr: OpaquePointer?) -> IPAddress? {
            ipAddress(addr).flatMap { $0.family == family ? $0 : nil }
        }
        let dst = rtnl_route_get_dst(route)
        let length = dst.map { Int(nl_addr_get_prefixlen($0)) } ?? 0
        var hops: [Nexthop] = []
        let count = rtnl_route_get_nnexthops(route)
        if count > 0 {
            for i in 0..<count {
                guard let hop = rtnl_route_nexthop_n(route, i) else { continue }
                hops.append(
                    Nexthop(
                        interfaceIndex: rtnl_route_nh_get_ifindex(hop),
                        gateway: ipAddress(rtnl_route_nh_get_gateway(hop))
                    )
                )
            }
        }
        return RouteRecord(
            family: family,
            table: rtnl_route_get_table(route),
            tos: rtnl_route_get_tos(route),
            destination: length == 0 ? nil : own(dst),
            destinationLength: length,
            metric: rtnl_route_get_priority(route),
            type: rtnl_route_get_type(route),
            nexthops: hops,
            preferredSource: own(rtnl_route_get_pref_src(route)),
            proto: rtnl_route_get_protocol(route),
            scope: rtnl_route_get_scope(route)
        )
    }

    private static func bytes(_ addr: OpaquePointer?) -> UnsafeRawBufferPointer? {
        guard let addr, let data = nl_addr_get_binary_addr(addr) else { return nil }
        return UnsafeRawBufferPointer(start: data, count: Int(nl_addr_get_len(addr)))
    }

    static func ipAddress(_ addr: OpaquePointer?) -> IPAddress? {
        guard let raw = bytes(addr) else { return nil }
        return IPAddress(rawBytes: raw)
    }

    /// `aa:bb:…` in lower-case hex. Written as ASCII bytes into the string's own storage, because
    /// every link message has one, and `Character` appends slowed each
    /// (BENCHMARKS.md, "The MAC address").
    static func macString(_ raw: UnsafeRawBufferPointer) -> String {
        guard !raw.isEmpty else { return "" }
        return String(unsafeUninitializedCapacity: raw.count * 3 - 1) { out in
            func digit(_ value: UInt8) -> UInt8 {
                value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
            }
            var index = 0
            for byte in raw {
                if index > 0 {
                    out[index] = UInt8(ascii: ":")
                    index += 1
                }
                out[index] = digit(byte >> 4)
                out[index + 1] = digit(byte & 0xf)
                index += 2
            }
            return index
        }
    }

    private static func scope(_ value: Int32) -> InterfaceAddress.Scope {
        switch value {
        case 0: return .global
        case 200: return .site
        case 253: return .link
        case 254: return .host
        default: return .nowhere
        }
    }
}
