// SPDX-License-Identifier: Apache-2.0

/// The kind of network an interface connects to: the `NWInterface.InterfaceType` set.
///
/// Virtual links (veth, bridge, tun, …) are ``other`` with their ``Interface/kind`` unless the
/// configuration overrides the type by name.
///
/// A struct with static members rather than an enum, so that a new type in a later version
/// is not a breaking change: a `switch` over it needs a `default:`. Its raw value is the
/// text JSON, hook variables and configuration files carry.
public struct InterfaceType: RawRepresentable, Hashable, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// An Ethernet link with a physical device, including USB phone tethers.
    public static let wired = Self(.wired)
    /// An 802.11 link.
    public static let wifi = Self(.wifi)
    /// A cellular (WWAN / LTE) modem link.
    public static let cellular = Self(.cellular)
    /// The loopback interface.
    public static let loopback = Self(.loopback)
    /// Anything else: virtual links, tunnels, unknown hardware.
    public static let other = Self(.other)

    /// Every type this version knows, in declaration order.
    public static let allCases: [Self] = Value.allCases.map(Self.init)

    /// The text form (`wired`).
    public var rawValue: String { value.rawValue }

    /// The type whose text form is `rawValue`; `nil` for one this version does not know.
    public init?(rawValue: String) {
        guard let value = Value(rawValue: rawValue) else { return nil }
        self.value = value
    }

    /// The text form.
    public var description: String { rawValue }

    private enum Value: String, CaseIterable {
        case wired
        case wifi
        case cellular
        case loopback
        case other
    }

    private let value: Value

    private init(_ value: Value) { self.value = value }
}
