/// The kind of network an interface connects to: the `NWInterface.InterfaceType` set.
///
/// Virtual links (veth, bridge, tun, …) are ``other`` with their ``Interface/kind`` unless the
/// configuration overrides the type by name.
public enum InterfaceType: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// An Ethernet link with a physical device, including USB phone tethers.
    case wired
    /// An 802.11 link.
    case wifi
    /// A cellular (WWAN / LTE) modem link.
    case cellular
    /// The loopback interface.
    case loopback
    /// Anything else: virtual links, tunnels, unknown hardware.
    case other

    public var description: String { rawValue }
}
