// SPDX-License-Identifier: Apache-2.0

import NetPathCore

/// A link as the kernel last described it in an `RTM_NEWLINK`.
package struct LinkRecord: Hashable, Sendable {
    package var index: Int32
    package var name: String
    /// `IFF_*` flags (`IFF_UP` 0x1, `IFF_LOWER_UP` 0x10000, …).
    package var flags: UInt32
    package var operState: UInt8
    package var mtu: UInt32
    package var mac: String
    package var arpType: UInt16
    /// `IFLA_INFO_KIND`, empty for hardware.
    package var kind: String

    package init(
        index: Int32,
        name: String,
        flags: UInt32,
        operState: UInt8,
        mtu: UInt32,
        mac: String,
        arpType: UInt16,
        kind: String
    ) {
        self.index = index
        self.name = name
        self.flags = flags
        self.operState = operState
        self.mtu = mtu
        self.mac = mac
        self.arpType = arpType
        self.kind = kind
    }

    static let up: UInt32 = 0x1
    static let loopback: UInt32 = 0x8
    static let lowerUp: UInt32 = 0x10000

    package var adminUp: Bool { flags & Self.up != 0 }
    /// `IFF_LOOPBACK`.
    package var isLoopback: Bool { flags & Self.loopback != 0 }
    package var carrier: Bool { flags & Self.lowerUp != 0 }

    /// RFC 2863 operational state names, indexed by `IF_OPER_*`.
    package var operationalState: Interface.OperationalState {
        switch operState {
        case 1: return .notpresent
        case 2: return .down
        case 3: return .lowerlayerdown
        case 4: return .testing
        case 5: return .dormant
        case 6: return .up
        default: return .unknown
        }
    }
}

/// An address on a link; identity is (link, address, prefix length).
package struct AddressRecord: Hashable, Sendable {
    package struct Key: Hashable, Sendable {
        package var index: Int32
        package var address: IPAddress
        package var prefixLength: Int
    }

    package var index: Int32
    package var address: InterfaceAddress

    package init(index: Int32, address: InterfaceAddress) {
        self.index = index
        self.address = address
    }

    package var key: Key { Key(index: index, address: address.address, prefixLength: address.prefixLength) }
}

/// One next hop of a route.
package struct Nexthop: Hashable, Sendable {
    package var interfaceIndex: Int32
    package var gateway: IPAddress?

    package init(interfaceIndex: Int32, gateway: IPAddress? = nil) {
        self.interfaceIndex = interfaceIndex
        self.gateway = gateway
    }
}

/// A route, identified by everything the kernel uses to tell routes apart.
///
/// libnl's own cache ignores the next hops in route identity, which collapses same-metric
/// default routes on two links into one entry (libnl-facts.md); here the whole value is the key.
package struct RouteRecord: Hashable, Sendable {
    package var family: IPAddress.Family
    package var table: UInt32
    package var tos: UInt8
    /// `nil` with `destinationLength` 0 for a default route.
    package var destination: IPAddress?
    package var destinationLength: Int
    /// The priority (`ip route`'s `metric`).
    package var metric: UInt32
    /// `RTN_*` (1 unicast, 2 local, 3 broadcast, …).
    package var type: UInt8
    package var nexthops: [Nexthop]
    /// Not part of identity in the kernel, but needed to mirror silent flushes of routes whose
    /// preferred source address is deleted.
    package var preferredSource: IPAddress?
    package var proto: UInt8
    package var scope: UInt8

    package init(
        family: IPAddress.Family,
        table: UInt32,
        tos: UInt8 = 0,
        destination: IPAddress?,
        destinationLength: Int,
        metric: UInt32,
        type: UInt8 = 1,
        nexthops: [Nexthop],
        preferredSource: IPAddress? = nil,
        proto: UInt8 = 0,
        scope: UInt8 = 0
    ) {
        self.family = family
        self.table = table
        self.tos = tos
        self.destination = destination
        self.destinationLength = destinationLength
        self.metric = metric
        self.type = type
        self.nexthops = nexthops
        self.preferredSource = preferredSource
        self.proto = proto
        self.scope = scope
    }

    /// What `NLM_F_REPLACE` replaces, and what an `RTM_DELROUTE` without next hops deletes.
    package struct Slot: Hashable, Sendable {
        var family: IPAddress.Family
        var table: UInt32
        var tos: UInt8
        var destination: IPAddress?
        var destinationLength: Int
        var metric: UInt32
    }

    /// The full identity.
    package struct Key: Hashable, Sendable {
        var slot: Slot
        var type: UInt8
        var nexthops: [Nexthop]
    }

    package var slot: Slot {
        Slot(
            family: family,
            table: table,
            tos: tos,
            destination: destination,
            destinationLength: destinationLength,
            metric: metric
        )
    }

    package var key: Key { Key(slot: slot, type: type, nexthops: nexthops) }

    package var isDefault: Bool { destinationLength == 0 }

    /// Whether netpath keeps this route (the engine drops every other one unparsed, `np_walk`):
    /// a default route, or one covering the internet probe of its family
    /// (``KernelRoute/probe(_:)``).
    package var isKept: Bool {
        guard let destination, !isDefault else { return true }
        return KernelRoute.probe(family).isIn(destination, prefixLength: destinationLength)
    }

    /// `RTN_UNICAST`.
    package var isUnicast: Bool { type == 1 }

    /// `RTN_LOCAL`: a route to one of the host's own addresses.
    package static let localType: UInt8 = 2

    package func uses(interface index: Int32) -> Bool {
        nexthops.contains { $0.interfaceIndex == index }
    }
}

/// One parsed rtnetlink notification or dump entry.
package enum KernelMessage: Hashable, Sendable {
    case newLink(LinkRecord)
    case deleteLink(index: Int32)
    case newAddress(AddressRecord)
    case deleteAddress(AddressRecord)
    case newRoute(RouteRecord, replace: Bool)
    case deleteRoute(RouteRecord)
    case newRule(RuleRecord)
    case deleteRule(RuleRecord)
}
