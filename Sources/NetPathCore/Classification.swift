// SPDX-License-Identifier: Apache-2.0

/// The outcome of classifying one link: type, kind, driver, metered and the facts behind them.
package struct Classification: Hashable, Sendable {
    /// The interface type the steps (and overrides) decided.
    package var type: InterfaceType
    /// The netlink link kind (`veth`, `wireguard`, …); empty for hardware.
    package var kind: String
    /// The bound driver's name; empty when there is none.
    package var driver: String
    /// Whether traffic on the link should be treated as costly.
    package var isMetered: Bool
    /// Where ``isMetered`` came from.
    package var meteredReason: Interface.MeteredReason
    /// Whether an override marks the link constrained (low-data mode).
    package var isConstrained: Bool
    /// Human-readable facts, in the order they decided (e.g. `"DEVTYPE=wlan"`, `"override wwan*"`).
    package var classifiedBy: [String]

    /// A classification with these values; what is not given is empty or false.
    package init(
        type: InterfaceType,
        kind: String = "",
        driver: String = "",
        isMetered: Bool = false,
        meteredReason: Interface.MeteredReason = .default,
        isConstrained: Bool = false,
        classifiedBy: [String] = []
    ) {
        self.type = type
        self.kind = kind
        self.driver = driver
        self.isMetered = isMetered
        self.meteredReason = meteredReason
        self.isConstrained = isConstrained
        self.classifiedBy = classifiedBy
    }
}

/// Classifies links from their facts, in this order; the first matching step wins:
///
/// loopback (ARPHRD 772) → WWAN link kinds (`wwan`, `rmnet`, `qmimux`: cellular) → any other
/// netlink kind (virtual) → Wi-Fi by cfg80211 (`phy80211`, `wireless/`) → a sysfs path under
/// `devices/virtual` (virtual) → Wi-Fi by DEVTYPE=wlan → cellular (DEVTYPE=wwan, ARPHRD_RAWIP,
/// WWAN drivers) → USB phone tether (wired, guessed metered) → wired (Ethernet with a device) →
/// other.
///
/// Overrides then replace the type, metered or constrained flags by name.
package struct InterfaceClassifier: Sendable {
    /// Drivers of USB WWAN modems that present a network interface.
    package static let cellularDrivers: Set<String> = [
        "qmi_wwan", "cdc_mbim", "huawei_cdc_ncm", "sierra_net", "mhi_net", "ipa", "rmnet", "cdc_wdm",
    ]
    /// Netlink link kinds of modem data links (WWAN framework, Qualcomm rmnet and qmimux).
    package static let cellularLinkKinds: Set<String> = ["wwan", "rmnet", "qmimux"]
    /// Drivers that phones use for USB tethering; such links are wired but usually metered.
    package static let tetherDrivers: Set<String> = ["rndis_host", "cdc_ether", "cdc_ncm", "ipheth"]

    /// The configured overrides, applied in order.
    package var overrides: [InterfaceOverride]

    /// A classifier that applies `overrides`, in order, after the built-in steps.
    package init(overrides: [InterfaceOverride] = []) {
        self.overrides = overrides
    }

    /// Classifies one link.
    package func classify(_ facts: LinkFacts) -> Classification {
        var result = Self.classifyByFacts(facts)
        for override in overrides where override.match.matches(facts.name) {
            if let type = override.type, type != result.type {
                result.classifiedBy.append("override \(override.match): type \(type)")
                result.type = type
                // A forced type carries its usual metered default unless metered is also forced.
                if override.metered == nil && result.meteredReason != .override {
                    result.isMetered = type == .cellular
                    result.meteredReason = type == .cellular ? .cellular : .default
                }
            }
            if let metered = override.metered {
                result.classifiedBy.append("override \(override.match): metered \(metered)")
                result.isMetered = metered
                result.meteredReason = .override
            }
            if let constrained = override.constrained {
                result.classifiedBy.append("override \(override.match): constrained \(constrained)")
                result.isConstrained = constrained
            }
        }
        return result
    }

    private static func wifi(_ f: LinkFacts) -> Classification {
        var facts: [String] = []
        if f.hasWirelessDirectory { facts.append("sysfs wireless/") }
        if f.hasPhy80211 { facts.append("sysfs phy80211") }
        if f.devType == "wlan" { facts.append("DEVTYPE=wlan") }
        return Classification(type: .wifi, kind: f.devType, driver: f.driver, classifiedBy: facts)
    }

    private static func classifyByFacts(_ f: LinkFacts) -> Classification {
        let driver = f.driver
        if f.arpType == ARPHardware.loopback {
            return Classification(type: .loopback, driver: driver, classifiedBy: ["arptype=772 (loopback)"])
        }
        // Modem links made by the kernel's WWAN framework or by rmnet/qmimux carry a link kind
        // like virtual links do, but they are the cellular uplink itself.
        if cellularLinkKinds.contains(f.linkKind) {
            return Classification(
                type: .cellular,
                kind: f.linkKind,
                driver: driver,
                isMetered: true,
                meteredReason: .cellular,
                classifiedBy: ["link kind \(f.linkKind) (WWAN)"]
            )
        }
        if !f.linkKind.isEmpty {
            return Classification(
                type: .other,
                kind: f.linkKind,
                driver: driver,
                classifiedBy: ["link kind \(f.linkKind)"]
            )
        }
        // cfg80211 adds `phy80211` and `wireless/` to every netdev of an nl80211 radio, and only to
        // those: that is the kernel saying "Wi-Fi", whatever bus the radio hangs off. Radios with
        // no bus device (mac80211_hwsim, which NetworkManager's own tests use) live under
        // devices/virtual, so this comes before that fallback.
        if f.hasWirelessDirectory || f.hasPhy80211 {
            return wifi(f)
        }
        if f.isVirtualPath {
            return Classification(
                type: .other,
                kind: f.devType,
                driver: driver,
                classifiedBy: ["sysfs device under devices/virtual"]
            )
        }
        if f.devType == "wlan" {
            return wifi(f)
        }
        if f.devType == "wwan" || f.arpType == ARPHardware.rawIP || cellularDrivers.contains(driver) {
            var facts: [String] = []
            if f.devType == "wwan" { facts.append("DEVTYPE=wwan") }
            if f.arpType == ARPHardware.rawIP { facts.append("arptype=519 (raw IP)") }
            if cellularDrivers.contains(driver) { facts.append("driver \(driver) (WWAN)") }
            return Classification(
                type: .cellular,
                kind: f.devType,
                driver: driver,
                isMetered: true,
                meteredReason: .cellular,
                classifiedBy: facts
            )
        }
        if tetherDrivers.contains(driver) {
            return Classification(
                type: .wired,
                kind: f.devType,
                driver: driver,
                isMetered: true,
                meteredReason: .tether,
                classifiedBy: ["driver \(driver) (USB tether)"]
            )
        }
        if f.arpType == ARPHardware.ether && f.hasDevice {
            return Classification(
                type: .wired,
                kind: f.devType,
                driver: driver,
                classifiedBy: ["arptype=1 (Ethernet) with a device" + (driver.isEmpty ? "" : " (driver \(driver))")]
            )
        }
        return Classification(
            type: .other,
            kind: f.devType,
            driver: driver,
            classifiedBy: ["arptype=\(f.arpType), no rule matched"]
        )
    }
}
