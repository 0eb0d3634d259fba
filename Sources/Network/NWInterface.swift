// SPDX-License-Identifier: Apache-2.0

#if os(Linux)
    internal import NetPath

    /// One network interface a path can use: Apple's `NWInterface`, for Linux.
    ///
    /// ```swift
    /// for interface in monitor.currentPath.availableInterfaces {
    ///     print(interface.name, interface.index, interface.type)   // eth0 2 wiredEthernet
    /// }
    /// ```
    public struct NWInterface: Hashable, Sendable, CustomDebugStringConvertible {
        /// The kind of network an interface connects to.
        ///
        /// Linux has no such property: netpath classifies each link from what the kernel and sysfs
        /// say (Wi-Fi by its `wireless` directory, cellular by a WWAN device type or driver, wired by
        /// an Ethernet device), and configuration overrides can set it by name. Virtual links (veth,
        /// bridge, tun, wireguard, …) are ``other``.
        ///
        /// ```swift
        /// let wired = NWPathMonitor(requiredInterfaceType: .wiredEthernet)
        /// ```
        ///
        /// Apple's cases, exactly: code written for Apple's framework switches over them, so this stays
        /// an enum and grows only when Apple's does.
        public enum InterfaceType: Hashable, Sendable {
            /// Virtual links, tunnels and anything not classified as one of the others.
            case other
            /// An 802.11 link.
            case wifi
            /// A cellular (WWAN, LTE) modem.
            case cellular
            /// An Ethernet link with a physical device, USB phone tethers included.
            case wiredEthernet
            /// The loopback interface.
            case loopback
        }

        /// The interface's name, as `ip link` shows it (`eth0`, `wlan0`).
        ///
        /// ```swift
        /// print(interface.name)
        /// ```
        public let name: String
        /// The kernel's interface index, stable for the life of the link.
        ///
        /// ```swift
        /// print(interface.index)
        /// ```
        public let index: Int
        /// The kind of network, as classified (see ``InterfaceType``).
        ///
        /// ```swift
        /// if interface.type == .cellular { print("metered, most likely") }
        /// ```
        public let type: InterfaceType

        /// The name, as Apple prints an interface.
        ///
        /// ```swift
        /// print(interface)   // eth0
        /// ```
        public var debugDescription: String { name }

        init(_ interface: NetworkPath.PathInterface) {
            name = interface.name
            index = Int(interface.index)
            type = InterfaceType(interface.type)
        }
    }

    extension NWInterface.InterfaceType {
        init(_ type: InterfaceType) {
            switch type {
            case .wired: self = .wiredEthernet
            case .wifi: self = .wifi
            case .cellular: self = .cellular
            case .loopback: self = .loopback
            default: self = .other  // a type Apple's set does not have
            }
        }

        /// NetPath's name for the type.
        var netPathType: InterfaceType {
            switch self {
            case .wiredEthernet: .wired
            case .wifi: .wifi
            case .cellular: .cellular
            case .loopback: .loopback
            case .other: .other
            }
        }
    }
#endif
