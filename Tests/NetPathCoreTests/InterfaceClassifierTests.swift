// SPDX-License-Identifier: Apache-2.0

import NetPathCore
import Testing

/// One set of facts and the classification ``InterfaceClassifier``'s order gives it.
struct ClassifierCase: Sendable, CustomTestStringConvertible {
    var label: String
    var facts: LinkFacts
    var type: InterfaceType
    var kind: String = ""
    var isMetered: Bool = false
    var meteredReason: Interface.MeteredReason = .default

    var testDescription: String { label }
}

@Suite("InterfaceClassifier")
struct InterfaceClassifierTests {
    static let ordered: [ClassifierCase] = [
        ClassifierCase(
            label: "loopback by arptype, even with a kind and a virtual path",
            facts: LinkFacts(name: "lo", arpType: 772, linkKind: "dummy", isVirtualPath: true),
            type: .loopback
        ),
        ClassifierCase(
            label: "netlink kind beats wireless signals (macvlan on a Wi-Fi parent)",
            facts: LinkFacts(name: "mv0", linkKind: "macvlan", devType: "wlan", hasWirelessDirectory: true),
            type: .other,
            kind: "macvlan"
        ),
        ClassifierCase(
            label: "devices/virtual beats a bare DEVTYPE=wlan",
            facts: LinkFacts(name: "wlan9", devType: "wlan", isVirtualPath: true),
            type: .other,
            kind: "wlan"
        ),
        ClassifierCase(
            label: "cfg80211's phy80211 beats devices/virtual (a mac80211_hwsim station)",
            facts: LinkFacts(
                name: "wlan0",
                devType: "wlan",
                hasWirelessDirectory: true,
                hasPhy80211: true,
                isVirtualPath: true
            ),
            type: .wifi,
            kind: "wlan"
        ),
        ClassifierCase(
            label: "devices/virtual with no kind keeps DEVTYPE as kind",
            facts: LinkFacts(name: "br0", devType: "bridge", isVirtualPath: true),
            type: .other,
            kind: "bridge"
        ),
        ClassifierCase(
            label: "Wi-Fi by wireless/ alone",
            facts: LinkFacts(name: "wlan0", hasWirelessDirectory: true, hasDevice: true),
            type: .wifi
        ),
        ClassifierCase(
            label: "Wi-Fi by phy80211 alone",
            facts: LinkFacts(name: "wlan0", hasPhy80211: true, hasDevice: true),
            type: .wifi
        ),
        ClassifierCase(
            label: "Wi-Fi by DEVTYPE=wlan alone",
            facts: LinkFacts(name: "wlan0", devType: "wlan"),
            type: .wifi,
            kind: "wlan"
        ),
        ClassifierCase(
            label: "Wi-Fi beats a WWAN driver",
            facts: LinkFacts(name: "wlan0", hasPhy80211: true, driver: "qmi_wwan"),
            type: .wifi
        ),
        ClassifierCase(
            label: "cellular by DEVTYPE=wwan alone",
            facts: LinkFacts(name: "wwan0", devType: "wwan", hasDevice: true),
            type: .cellular,
            kind: "wwan",
            isMetered: true,
            meteredReason: .cellular
        ),
        ClassifierCase(
            label: "cellular by ARPHRD_RAWIP alone",
            facts: LinkFacts(name: "wwan0", arpType: 519, hasDevice: true),
            type: .cellular,
            isMetered: true,
            meteredReason: .cellular
        ),
        ClassifierCase(
            label: "cellular by WWAN driver alone",
            facts: LinkFacts(name: "wwan0", hasDevice: true, driver: "cdc_mbim"),
            type: .cellular,
            isMetered: true,
            meteredReason: .cellular
        ),
        ClassifierCase(
            label: "huawei_cdc_ncm is a modem, not a cdc_ncm tether",
            facts: LinkFacts(name: "wwan0", hasDevice: true, driver: "huawei_cdc_ncm"),
            type: .cellular,
            isMetered: true,
            meteredReason: .cellular
        ),
        ClassifierCase(
            label: "cellular beats a tether driver",
            facts: LinkFacts(name: "usb0", devType: "wwan", hasDevice: true, driver: "cdc_ether"),
            type: .cellular,
            kind: "wwan",
            isMetered: true,
            meteredReason: .cellular
        ),
        ClassifierCase(
            label: "plain Ethernet with a device",
            facts: LinkFacts(name: "eth0", hasDevice: true, driver: "igb"),
            type: .wired
        ),
        ClassifierCase(
            label: "Ethernet without a device or virtual path",
            facts: LinkFacts(name: "eth9"),
            type: .other
        ),
        ClassifierCase(
            label: "a device that is not Ethernet (ARPHRD_NONE)",
            facts: LinkFacts(name: "ib0", arpType: 65534, hasDevice: true),
            type: .other
        ),
    ]

    @Test(arguments: ordered)
    func firstMatchingStepDecides(_ c: ClassifierCase) {
        let result = InterfaceClassifier().classify(c.facts)
        #expect(result.type == c.type)
        #expect(result.kind == c.kind)
        #expect(result.isMetered == c.isMetered)
        #expect(result.meteredReason == c.meteredReason)
        #expect(result.driver == c.facts.driver)
        #expect(!result.classifiedBy.isEmpty)
    }

    @Test(arguments: ["rndis_host", "cdc_ether", "cdc_ncm", "ipheth"])
    func tetherDriverIsWiredAndGuessedMetered(_ driver: String) {
        let result = InterfaceClassifier().classify(LinkFacts(name: "usb0", hasDevice: true, driver: driver))
        #expect(result.type == .wired)
        #expect(result.isMetered)
        #expect(result.meteredReason == .tether)
        #expect(result.classifiedBy == ["driver \(driver) (USB tether)"])
    }

    @Test func classifiedByListsEveryWifiSignalInOrder() {
        let facts = LinkFacts(name: "wlan0", devType: "wlan", hasWirelessDirectory: true, hasPhy80211: true)
        #expect(
            InterfaceClassifier().classify(facts).classifiedBy == ["sysfs wireless/", "sysfs phy80211", "DEVTYPE=wlan"]
        )
    }

    // MARK: Overrides

    @Test func typeOverrideToCellularBringsCellularMeteredDefault() throws {
        let classifier = InterfaceClassifier(overrides: [InterfaceOverride(match: try Glob("usb*"), type: .cellular)])
        let result = classifier.classify(LinkFacts(name: "usb0", hasDevice: true, driver: "r8152"))
        #expect(result.type == .cellular)
        #expect(result.isMetered)
        #expect(result.meteredReason == .cellular)
        #expect(result.classifiedBy.last == "override usb*: type cellular")
    }

    @Test func typeOverrideAwayFromCellularDropsItsMeteredDefault() throws {
        let classifier = InterfaceClassifier(overrides: [InterfaceOverride(match: try Glob("wwan0"), type: .wired)])
        let result = classifier.classify(LinkFacts(name: "wwan0", devType: "wwan"))
        #expect(result.type == .wired)
        #expect(!result.isMetered)
        #expect(result.meteredReason == .default)
    }

    @Test func meteredOverrideSetsProvenanceOverride() throws {
        let classifier = InterfaceClassifier(overrides: [InterfaceOverride(match: try Glob("eth*"), metered: true)])
        let result = classifier.classify(LinkFacts(name: "eth0", hasDevice: true))
        #expect(result.type == .wired)
        #expect(result.isMetered)
        #expect(result.meteredReason == .override)
        #expect(result.classifiedBy.last == "override eth*: metered true")
    }

    @Test func meteredOverrideSurvivesALaterTypeOverride() throws {
        let classifier = InterfaceClassifier(overrides: [
            InterfaceOverride(match: try Glob("usb0"), metered: false),
            InterfaceOverride(match: try Glob("usb*"), type: .cellular),
        ])
        let result = classifier.classify(LinkFacts(name: "usb0", hasDevice: true, driver: "rndis_host"))
        #expect(result.type == .cellular)
        #expect(!result.isMetered)
        #expect(result.meteredReason == .override)
    }

    @Test func laterOverrideWinsForTheFieldItSets() throws {
        let classifier = InterfaceClassifier(overrides: [
            InterfaceOverride(match: try Glob("*"), type: .wifi, metered: true),
            InterfaceOverride(match: try Glob("eth*"), metered: false),
        ])
        let result = classifier.classify(LinkFacts(name: "eth0", hasDevice: true))
        #expect(result.type == .wifi)
        #expect(!result.isMetered)
        #expect(result.meteredReason == .override)
    }

    @Test func constrainedOverrideMarksOnlyMatchingLinks() throws {
        let classifier = InterfaceClassifier(overrides: [InterfaceOverride(match: try Glob("wwan*"), constrained: true)]
        )
        #expect(classifier.classify(LinkFacts(name: "wwan0", devType: "wwan")).isConstrained)
        #expect(!classifier.classify(LinkFacts(name: "eth0", hasDevice: true)).isConstrained)
    }

    @Test func overrideOfTheSameTypeRecordsNothing() throws {
        let classifier = InterfaceClassifier(overrides: [InterfaceOverride(match: try Glob("eth0"), type: .wired)])
        let facts = LinkFacts(name: "eth0", hasDevice: true)
        #expect(classifier.classify(facts) == InterfaceClassifier().classify(facts))
    }

    @Test func virtualLinkCanBeRetypedAndKeepsItsKind() throws {
        let classifier = InterfaceClassifier(overrides: [InterfaceOverride(match: try Glob("wg*"), type: .wired)])
        let result = classifier.classify(LinkFacts(name: "wg0", arpType: 65534, linkKind: "wireguard"))
        #expect(result.type == .wired)
        #expect(result.kind == "wireguard")
        #expect(result.classifiedBy == ["link kind wireguard", "override wg*: type wired"])
    }
}

extension InterfaceClassifierTests {
    @Test(arguments: ["wwan", "rmnet", "qmimux"])
    func wwanLinkKindIsCellularNotVirtual(_ kind: String) {
        let c = InterfaceClassifier().classify(LinkFacts(name: "wwan0", arpType: ARPHardware.rawIP, linkKind: kind))
        #expect(c.type == .cellular)
        #expect(c.kind == kind)
        #expect(c.isMetered && c.meteredReason == .cellular)
    }
}
