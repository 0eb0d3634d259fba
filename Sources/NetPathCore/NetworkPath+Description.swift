// SPDX-License-Identifier: Apache-2.0

extension NetworkPath: CustomStringConvertible {
    /// The path on one line, for logs and `print`: the policy, the status and why, then what a
    /// satisfied path runs over.
    ///
    /// ```swift
    /// print(path)
    /// // default: satisfied via eth0 (wired), also wlan0 (wifi); IPv4, DNS; gateway 192.0.2.1
    /// // wired: unsatisfied (required-type-absent)
    /// // default: requires-connection (a link waits for an address)
    /// // default: satisfied via eth0 (wired); IPv4; connectivity portal http://portal.example/login
    /// ```
    ///
    /// Interface names are printed with control characters escaped, so one path is always one line.
    public var description: String {
        var text = "\(policy.escapingControlCharacters): \(status.rawValue)"
        switch status {
        case .unsatisfied:
            if let unsatisfiedReason { text += " (\(unsatisfiedReason.rawValue))" }
        case .requiresConnection:
            text += " (a link waits for an address)"
        case .satisfied:
            if let primary { text += " via \(Self.describe(primary))" }
            let others = availableInterfaces.filter { $0 != primary }
            if !others.isEmpty { text += ", also " + others.map(Self.describe).joined(separator: ", ") }
            let families = [(supportsIPv4, "IPv4"), (supportsIPv6, "IPv6"), (supportsDNS, "DNS")]
                .filter(\.0).map(\.1)
            if !families.isEmpty { text += "; " + families.joined(separator: ", ") }
            if !gateways.isEmpty {
                text += "; gateway\(gateways.count == 1 ? "" : "s") "
                text += gateways.map(\.description).joined(separator: ", ")
            }
            if isExpensive { text += "; expensive" }
            if isConstrained { text += "; constrained" }
            // Only a probed path has one; an unprobed path reads as it always did.
            if connectivity != .unknown {
                text += "; connectivity \(connectivity)"
                if connectivity == .portal, let portalURL { text += " \(portalURL.escapingControlCharacters)" }
            }
        }
        if let origin { text += "; from the \(origin.rawValue)" }
        return text
    }

    private static func describe(_ interface: PathInterface) -> String {
        "\(interface.name.escapingControlCharacters) (\(interface.type.rawValue)\(interface.isMetered ? ", metered" : ""))"
    }
}
