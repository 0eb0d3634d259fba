// SPDX-License-Identifier: Apache-2.0

import NetPathCore

/// A routing policy rule as the kernel last described it (`RTM_NEWRULE`): `ip rule`.
///
/// The whole value is its identity: the kernel refuses a second rule equal in every selector, and
/// an `RTM_DELRULE` notification repeats the whole rule.
package struct RuleRecord: Hashable, Sendable {
    /// `FR_ACT_*`: what a matching rule does.
    package enum Action: UInt8, Hashable, Sendable {
        case unspecified = 0
        /// `lookup TABLE`.
        case toTable = 1
        /// `goto PRIORITY`.
        case goto = 2
        case nop = 3
        case blackhole = 6
        case unreachable = 7
        case prohibit = 8
    }

    package var family: IPAddress.Family
    package var priority: UInt32
    package var action: Action
    package var table: UInt32
    package var gotoTarget: UInt32
    /// `not`: the selectors' verdict is inverted (`FIB_RULE_INVERT`).
    package var inverted: Bool
    package var source: IPAddress?
    package var sourceLength: Int
    package var destination: IPAddress?
    package var destinationLength: Int
    package var tos: UInt8
    /// `fwmark MARK/MASK`.
    package struct Mark: Hashable, Sendable {
        package var value: UInt32
        package var mask: UInt32

        package init(value: UInt32, mask: UInt32 = .max) {
            self.value = value
            self.mask = mask
        }
    }

    /// The firewall mark the rule selects, when it has one.
    package var mark: Mark?
    package var inputInterface: String
    package var outputInterface: String
    /// `suppress_prefixlength N`: a looked-up route this specific or less is ignored.
    package var suppressPrefixLength: Int?
    package var suppressInterfaceGroup: Int?
    package var l3mdev: Bool
    package var uidRange: ClosedRange<UInt32>?
    package var ipProtocol: UInt8
    /// A source or destination port range (`sport`, `dport`) is set.
    package var hasPortRange: Bool

    package init(
        family: IPAddress.Family,
        priority: UInt32,
        action: Action = .toTable,
        table: UInt32 = DefaultRoute.mainTable,
        gotoTarget: UInt32 = 0,
        inverted: Bool = false,
        source: IPAddress? = nil,
        sourceLength: Int = 0,
        destination: IPAddress? = nil,
        destinationLength: Int = 0,
        tos: UInt8 = 0,
        mark: Mark? = nil,
        inputInterface: String = "",
        outputInterface: String = "",
        suppressPrefixLength: Int? = nil,
        suppressInterfaceGroup: Int? = nil,
        l3mdev: Bool = false,
        uidRange: ClosedRange<UInt32>? = nil,
        ipProtocol: UInt8 = 0,
        hasPortRange: Bool = false
    ) {
        self.family = family
        self.priority = priority
        self.action = action
        self.table = table
        self.gotoTarget = gotoTarget
        self.inverted = inverted
        self.source = source
        self.sourceLength = sourceLength
        self.destination = destination
        self.destinationLength = destinationLength
        self.tos = tos
        self.mark = mark
        self.inputInterface = inputInterface
        self.outputInterface = outputInterface
        self.suppressPrefixLength = suppressPrefixLength
        self.suppressInterfaceGroup = suppressInterfaceGroup
        self.l3mdev = l3mdev
        self.uidRange = uidRange
        self.ipProtocol = ipProtocol
        self.hasPortRange = hasPortRange
    }

    /// Whether the selectors match what this host sends when nothing marks, binds or
    /// source-routes it: `ip route get ADDRESS` run as root (mark 0, uid 0, `iif lo`, no output
    /// interface, no ports, TOS 0).
    func matchesPlainTraffic(to address: IPAddress) -> Bool {
        var matches =
            sourceLength == 0 && tos == 0 && outputInterface.isEmpty && !l3mdev && ipProtocol == 0
            && !hasPortRange && (inputInterface.isEmpty || inputInterface == "lo")
        if matches, destinationLength > 0 {
            matches = destination.map { address.isIn($0, prefixLength: destinationLength) } ?? false
        }
        if matches, let mark { matches = 0 & mark.mask == mark.value }
        if matches, let uidRange { matches = uidRange.contains(0) }
        return matches != inverted
    }

    /// The rule as `ip rule` prints it, after the priority.
    package var selector: String {
        var parts: [String] = []
        if inverted { parts.append("not") }
        parts.append("from " + (sourceLength == 0 ? "all" : "\(source.map(\.description) ?? "?")/\(sourceLength)"))
        if destinationLength > 0 { parts.append("to \(destination.map(\.description) ?? "?")/\(destinationLength)") }
        if tos != 0 { parts.append("tos 0x" + String(tos, radix: 16)) }
        if let mark {
            parts.append(
                "fwmark 0x" + String(mark.value, radix: 16)
                    + (mark.mask == .max ? "" : "/0x" + String(mark.mask, radix: 16))
            )
        }
        if !inputInterface.isEmpty { parts.append("iif \(inputInterface)") }
        if !outputInterface.isEmpty { parts.append("oif \(outputInterface)") }
        if l3mdev { parts.append("lookup [l3mdev-table]") }
        if let uidRange { parts.append("uidrange \(uidRange.lowerBound)-\(uidRange.upperBound)") }
        if ipProtocol != 0 { parts.append("ipproto \(ipProtocol)") }
        switch action {
        case .toTable where !l3mdev: parts.append("lookup \(KernelRoute.tableName(table))")
        case .goto: parts.append("goto \(gotoTarget)")
        case .nop: parts.append("nop")
        case .blackhole: parts.append("blackhole")
        case .unreachable: parts.append("unreachable")
        case .prohibit: parts.append("prohibit")
        default: break
        }
        if let suppressPrefixLength { parts.append("suppress_prefixlength \(suppressPrefixLength)") }
        if let suppressInterfaceGroup { parts.append("suppress_ifgroup \(suppressInterfaceGroup)") }
        return parts.joined(separator: " ")
    }
}
