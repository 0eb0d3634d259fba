import NetPathCore

/// A link as the kernel last described it in an `RTM_NEWLINK`.
public struct LinkRecord: Hashable, Sendable {
    public var index: Int32
    public var name: String
    /// `IFF_*` flags (`IFF_UP` 0x1, `IFF_LOWER_UP` 0x10000, …).
    public var flags: UInt32
    public var operState: UInt8
    public var mtu: UInt32
    public var mac: String
    public var arpType: UInt16
    /// `IFLA_INFO_KIND`, empty for hardware.
    public var kind: String

    public init(
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

    public var adminUp: Bool { flags & Self.up != 0 }
    /// `IFF_LOOPBACK`.
    public var isLoopback: Bool { flags & Self.loopback != 0 }
    public var carrier: Bool { flags & Self.lowerUp != 0 }

    /// RFC 2863 operational state names, indexed by `IF_OPER_*`.
    public var operationalState: Interface.OperationalState {
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
public struct AddressRecord: Hashable, Sendable {
    public struct Key: Hashable, Sendable {
        public var index: Int32
        public var address: IPAddress
        public var prefixLength: Int
    }

    public var index: Int32
    public var address: InterfaceAddress

    public init(index: Int32, address: InterfaceAddress) {
        self.index = index
        self.address = address
    }

    public var key: Key { Key(index: index, address: address.address, prefixLength: address.prefixLength) }
}

/// One next hop of a route.
public struct Nexthop: Hashable, Sendable {
    public var interfaceIndex: Int32
    public var gateway: IPAddress?

    public init(interfaceIndex: Int32, gateway: IPAddress? = nil) {
        self.interfaceIndex = interfaceIndex
        self.gateway = gateway
    }
}

/// A route, identified by everything the kernel uses to tell routes apart.
///
/// libnl's own cache ignores the next hops in route identity, which collapses same-metric
/// default routes on two links into one entry (libnl-facts.md); here the whole value is the key.
public struct RouteRecord: Hashable, Sendable {
    public var family: IPAddress.Family
    public var table: UInt32
    public var tos: UInt8
    /// `nil` with `destinationLength` 0 for a default route.
    public var destination: IPAddress?
    public var destinationLength: Int
    /// The priority (`ip route`'s `metric`).
    public var metric: UInt32
    /// `RTN_*` (1 unicast, 2 local, 3 broadcast, …).
    public var type: UInt8
    public var nexthops: [Nexthop]
    /// Not part of identity in the kernel, but needed to mirror silent flushes of routes whose
    /// preferred source address is deleted.
    public var preferredSource: IPAddress?
    public var proto: UInt8
    public var scope: UInt8

    public init(
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
    public struct Slot: Hashable, Sendable {
        var family: IPAddress.Family
        var table: UInt32
        var tos: UInt8
        var destination: IPAddress?
        var destinationLength: Int
        var metric: UInt32
    }

    /// The full identity.
    public struct Key: Hashable, Sendable {
        var slot: Slot
        var type: UInt8
        var nexthops: [Nexthop]
    }

    public var slot: Slot {
        Slot(
            family: family,
            table: table,
            tos: tos,
            destination: destination,
            destinationLength: destinationLength,
            metric: metric
        )
    }

    public var key: Key { Key(slot: slot, type: type, nexthops: nexthops) }

    public var isDefault: Bool { destinationLength == 0 }

    /// Whether netpath keeps this route (the engine drops every other one unparsed, `np_walk`):
    /// a default route, or one covering the internet probe of its family
    /// (``KernelRoute/probe(_:)``).
    public var isKept: Bool {
        guard let destination, !isDefault else { return true }
        return KernelRoute.probe(family).isIn(destination, prefixLength: destinationLength)
    }

    /// `RTN_UNICAST`.
    public var isUnicast: Bool { type == 1 }

    /// `RTN_LOCAL`: a route to one of the host's own addresses.
    public static let localType: UInt8 = 2

    public func uses(interface index: Int32) -> Bool {
        nexthops.contains { $0.interfaceIndex == index }
    }
}

/// One parsed rtnetlink notification or dump entry.
public enum KernelMessage: Hashable, Sendable {
    case newLink(LinkRecord)
    case deleteLink(index: Int32)
    case newAddress(AddressRecord)
    case deleteAddress(AddressRecord)
    case newRoute(RouteRecord, replace: Bool)
    case deleteRoute(RouteRecord)
    case newRule(RuleRecord)
    case deleteRule(RuleRecord)
}
