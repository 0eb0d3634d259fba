// SPDX-License-Identifier: Apache-2.0

/// What the kernel says about a link, gathered from netlink and sysfs, before classification.
///
/// Classification is a pure function of these facts (and the configured overrides), so fixture
/// facts classify in tests exactly like real ones.
package struct LinkFacts: Hashable, Sendable, Codable {
    /// The interface name.
    package var name: String
    /// The ARPHRD_* hardware type (1 Ethernet, 772 loopback, 519 raw IP, 65534 none).
    package var arpType: UInt16
    /// The netlink link kind (`IFLA_INFO_KIND`): `veth`, `bridge`, `tun`, …; empty for hardware.
    package var linkKind: String
    /// `DEVTYPE=` from the sysfs `uevent` file (`wlan`, `wwan`, `bridge`, …).
    package var devType: String
    /// A `wireless/` directory exists under the sysfs node.
    package var hasWirelessDirectory: Bool
    /// A `phy80211` link exists under the sysfs node.
    package var hasPhy80211: Bool
    /// The sysfs node has a `device` link: it is backed by hardware (or a bus device).
    package var hasDevice: Bool
    /// The resolved sysfs path lies under `devices/virtual`.
    package var isVirtualPath: Bool
    /// The name of the driver bound to the device (`device/driver`).
    package var driver: String

    /// Facts for the link `name`; those not given are empty or false (an Ethernet link by default).
    package init(
        name: String,
        arpType: UInt16 = ARPHardware.ether,
        linkKind: String = "",
        devType: String = "",
        hasWirelessDirectory: Bool = false,
        hasPhy80211: Bool = false,
        hasDevice: Bool = false,
        isVirtualPath: Bool = false,
        driver: String = ""
    ) {
        self.name = name
        self.arpType = arpType
        self.linkKind = linkKind
        self.devType = devType
        self.hasWirelessDirectory = hasWirelessDirectory
        self.hasPhy80211 = hasPhy80211
        self.hasDevice = hasDevice
        self.isVirtualPath = isVirtualPath
        self.driver = driver
    }
}

/// The ARPHRD_* values classification looks at (from `linux/if_arp.h`).
package enum ARPHardware {
    /// `ARPHRD_ETHER`: Ethernet and Wi-Fi.
    package static let ether: UInt16 = 1
    /// `ARPHRD_RAWIP`: raw IP, as cellular modems present it.
    package static let rawIP: UInt16 = 519
    /// `ARPHRD_LOOPBACK`.
    package static let loopback: UInt16 = 772
    /// `ARPHRD_NONE`: no link layer (tun, WireGuard).
    package static let none: UInt16 = 65534
}
