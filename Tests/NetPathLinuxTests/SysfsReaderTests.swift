// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathCore
import NetPathLinux
import Testing

/// The fixture sysfs trees in `Tests/Fixtures/sysfs/`, one machine per directory, laid out like
/// real kernels with relative symlinks (class/net → devices/…, device, device/driver, phy80211).
private let fixtures: String = {
    var parts = String(#filePath).split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(2)  // NetPathLinuxTests/SysfsReaderTests.swift
    return parts.joined(separator: "/") + "/Fixtures/sysfs"
}()

private func reader(_ fixture: String) -> SysfsReader {
    SysfsReader(root: fixtures + "/" + fixture)
}

/// One link in a fixture tree, the netlink facts a kernel would report for it, and the
/// classification ``InterfaceClassifier``'s order must give.
struct FixtureLink: Sendable, CustomTestStringConvertible {
    var fixture: String
    var name: String
    var arpType: UInt16
    var linkKind: String = ""
    var type: InterfaceType
    var kind: String = ""
    var driver: String = ""
    var isMetered: Bool = false
    var meteredReason: Interface.MeteredReason = .default

    var testDescription: String { "\(fixture)/\(name)" + (linkKind.isEmpty ? "" : " (kind \(linkKind))") }
}

@Suite("SysfsReader")
struct SysfsReaderTests {
    static let links: [FixtureLink] = [
        FixtureLink(fixture: "wifi", name: "wlp0s20f3", arpType: 1, type: .wifi, kind: "wlan", driver: "iwlwifi"),
        FixtureLink(
            fixture: "wwan",
            name: "wwp0s20f0u3i4",
            arpType: 519,
            type: .cellular,
            kind: "wwan",
            driver: "qmi_wwan",
            isMetered: true,
            meteredReason: .cellular
        ),
        FixtureLink(
            fixture: "tether-rndis",
            name: "enp0s20f0u2",
            arpType: 1,
            type: .wired,
            driver: "rndis_host",
            isMetered: true,
            meteredReason: .tether
        ),
        FixtureLink(
            fixture: "tether-ipheth",
            name: "enp0s20f0u1c4i2",
            arpType: 1,
            type: .wired,
            driver: "ipheth",
            isMetered: true,
            meteredReason: .tether
        ),
        FixtureLink(fixture: "ethernet", name: "enp0s31f6", arpType: 1, type: .wired, driver: "e1000e"),
        // A VM's NIC: the net device hangs off a virtio device below the PCI function.
        FixtureLink(fixture: "ethernet-virtio", name: "eth0", arpType: 1, type: .wired, driver: "virtio_net"),
        FixtureLink(fixture: "virtual", name: "veth0", arpType: 1, linkKind: "veth", type: .other, kind: "veth"),
        FixtureLink(fixture: "virtual", name: "br0", arpType: 1, linkKind: "bridge", type: .other, kind: "bridge"),
        FixtureLink(fixture: "virtual", name: "tun0", arpType: 65534, linkKind: "tun", type: .other, kind: "tun"),
        // Without the netlink kind, the devices/virtual parent alone still makes them virtual.
        FixtureLink(fixture: "virtual", name: "veth0", arpType: 1, type: .other),
        FixtureLink(fixture: "virtual", name: "br0", arpType: 1, type: .other, kind: "bridge"),
        FixtureLink(fixture: "loopback", name: "lo", arpType: 772, type: .loopback),
    ]

    @Test("fixture link classifies as its hardware", arguments: links)
    func fixtureLinkClassifiesAsItsHardware(_ link: FixtureLink) {
        let facts = reader(link.fixture).facts(name: link.name, arpType: link.arpType, linkKind: link.linkKind)
        let result = InterfaceClassifier().classify(facts)
        #expect(result.type == link.type)
        #expect(result.kind == link.kind)
        #expect(result.driver == link.driver)
        #expect(result.isMetered == link.isMetered)
        #expect(result.meteredReason == link.meteredReason)
        #expect(!result.classifiedBy.isEmpty)
    }

    @Test func wifiNodeReportsEveryWirelessSignal() {
        let facts = reader("wifi").facts(name: "wlp0s20f3", arpType: 1, linkKind: "")
        #expect(
            facts
                == LinkFacts(
                    name: "wlp0s20f3",
                    arpType: 1,
                    devType: "wlan",
                    hasWirelessDirectory: true,
                    hasPhy80211: true,
                    hasDevice: true,
                    isVirtualPath: false,
                    driver: "iwlwifi"
                )
        )
        #expect(
            InterfaceClassifier().classify(facts).classifiedBy == ["sysfs wireless/", "sysfs phy80211", "DEVTYPE=wlan"]
        )
    }

    @Test func usbModemNodeHasDeviceAndDriverButNoWirelessSignals() {
        let facts = reader("wwan").facts(name: "wwp0s20f0u3i4", arpType: 519, linkKind: "")
        #expect(facts.devType == "wwan")
        #expect(facts.hasDevice)
        #expect(facts.driver == "qmi_wwan")
        #expect(!facts.hasWirelessDirectory && !facts.hasPhy80211 && !facts.isVirtualPath)
    }

    @Test(arguments: ["veth0", "br0", "tun0"])
    func softwareLinkIsUnderDevicesVirtualWithoutDevice(_ name: String) {
        let facts = reader("virtual").facts(name: name, arpType: 1, linkKind: "")
        #expect(facts.isVirtualPath)
        #expect(!facts.hasDevice)
        #expect(facts.driver.isEmpty)
    }

    @Test func bridgeNodeCarriesDevtypeBridge() {
        #expect(reader("virtual").facts(name: "br0", arpType: 1, linkKind: "bridge").devType == "bridge")
        #expect(reader("virtual").facts(name: "veth0", arpType: 1, linkKind: "veth").devType == "")
    }

    @Test func physicalEthernetIsNotVirtual() {
        let facts = reader("ethernet").facts(name: "enp0s31f6", arpType: 1, linkKind: "")
        #expect(!facts.isVirtualPath)
        #expect(facts.hasDevice)
        #expect(facts.devType == "")
    }

    @Test func rootWithTrailingSlashReadsTheSameFacts() {
        let plain = reader("ethernet").facts(name: "enp0s31f6", arpType: 1, linkKind: "")
        let slashed = SysfsReader(root: fixtures + "/ethernet/").facts(name: "enp0s31f6", arpType: 1, linkKind: "")
        #expect(plain == slashed)
    }

    // MARK: Overrides

    @Test func overrideByGlobMarksModemUnmeteredWithOverrideProvenance() throws {
        let facts = reader("wwan").facts(name: "wwp0s20f0u3i4", arpType: 519, linkKind: "")
        let classifier = InterfaceClassifier(overrides: [InterfaceOverride(match: try Glob("wwp*"), metered: false)])
        let result = classifier.classify(facts)
        #expect(result.type == .cellular)
        #expect(!result.isMetered)
        #expect(result.meteredReason == .override)
        #expect(result.classifiedBy.contains("override wwp*: metered false"))
    }

    @Test func overrideByGlobTurnsTetherIntoUnmeteredWired() throws {
        let facts = reader("tether-rndis").facts(name: "enp0s20f0u2", arpType: 1, linkKind: "")
        let classifier = InterfaceClassifier(overrides: [
            InterfaceOverride(match: try Glob("enp0s20f0u*"), metered: false)
        ])
        let result = classifier.classify(facts)
        #expect(result.type == .wired)
        #expect(!result.isMetered)
        #expect(result.meteredReason == .override)
    }

    @Test func overrideByGlobRetypesVirtualLinkAndKeepsItsKind() throws {
        let facts = reader("virtual").facts(name: "veth0", arpType: 1, linkKind: "veth")
        let classifier = InterfaceClassifier(overrides: [InterfaceOverride(match: try Glob("veth[0-9]"), type: .wired)])
        let result = classifier.classify(facts)
        #expect(result.type == .wired)
        #expect(result.kind == "veth")
        #expect(!result.isMetered)
        #expect(result.classifiedBy.last == "override veth[0-9]: type wired")
    }

    @Test func overrideToCellularAndMeteredRecordsBothWithOverrideProvenance() throws {
        let facts = reader("ethernet").facts(name: "enp0s31f6", arpType: 1, linkKind: "")
        let classifier = InterfaceClassifier(overrides: [
            InterfaceOverride(match: try Glob("enp*"), type: .cellular, metered: true)
        ])
        let result = classifier.classify(facts)
        #expect(result.type == .cellular)
        #expect(result.isMetered)
        #expect(result.meteredReason == .override)
        #expect(result.classifiedBy.suffix(2) == ["override enp*: type cellular", "override enp*: metered true"])
    }

    @Test func overrideWhoseGlobDoesNotMatchChangesNothing() throws {
        let facts = reader("wifi").facts(name: "wlp0s20f3", arpType: 1, linkKind: "")
        let classifier = InterfaceClassifier(overrides: [InterfaceOverride(match: try Glob("wwan*"), type: .cellular)])
        #expect(classifier.classify(facts) == InterfaceClassifier().classify(facts))
    }

    // MARK: Missing and odd nodes

    @Test(arguments: [
        ("nosuch0", "a name with no node"),
        ("ghost0", "a class/net link whose target is gone"),
        ("../../etc", "a name that would walk out of class/net"),
        ("a/b", "a name with a slash"),
        ("..", "dot-dot"),
        ("", "an empty name"),
    ])
    func missingOrUnsafeNodeGivesOnlyNetlinkFacts(_ name: String, _ why: String) {
        let facts = reader("odd").facts(name: name, arpType: 1, linkKind: "macvlan")
        #expect(facts == LinkFacts(name: name, arpType: 1, linkKind: "macvlan"), "\(why)")
    }

    @Test func missingRootGivesOnlyNetlinkFacts() {
        let facts = SysfsReader(root: "/nonexistent/netpath-sysfs").facts(name: "eth0", arpType: 1, linkKind: "")
        #expect(facts == LinkFacts(name: "eth0", arpType: 1))
        #expect(InterfaceClassifier().classify(facts).type == .other)
    }

    @Test func plainDirectoryNodeIsReadButNotCalledVirtual() {
        let facts = reader("odd").facts(name: "plain0", arpType: 1, linkKind: "")
        #expect(facts == LinkFacts(name: "plain0", arpType: 1))
    }

    @Test func danglingDeviceLinkAndGarbageUeventStillGiveWhatCanBeRead() {
        let facts = reader("odd").facts(name: "odd0", arpType: 1, linkKind: "")
        // The first well-formed DEVTYPE= line wins; invalid UTF-8 on other lines is harmless.
        #expect(facts.devType == "wlan")
        // `wireless` is a regular file here, not the directory cfg80211 creates.
        #expect(!facts.hasWirelessDirectory)
        #expect(facts.hasDevice)
        #expect(facts.driver == "")
    }

    @Test func danglingDriverLinkStillNamesTheDriver() {
        let facts = reader("odd").facts(name: "half0", arpType: 1, linkKind: "")
        #expect(facts.hasDevice)
        #expect(facts.driver == "unloaded")
        #expect(InterfaceClassifier().classify(facts).type == .wired)
    }

    // MARK: The host

    /// Every link of this host's sysfs, read both by SysfsReader and by the shell's view of the
    /// same symlinks, must agree: the fixtures are only as good as their likeness to a kernel.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/sys/class/net")))
    func hostLinksAgreeWithTheirSymlinks() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: "/sys/class/net").sorted()
        #expect(!names.isEmpty)
        for name in names {
            let node = "/sys/class/net/" + name
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: node) else { continue }
            let facts = SysfsReader().facts(name: name, arpType: 1, linkKind: "")
            #expect(facts.isVirtualPath == target.contains("devices/virtual/"), "\(name) -> \(target)")
            let driverLink = try? FileManager.default.destinationOfSymbolicLink(atPath: node + "/device/driver")
            #expect(facts.driver == (driverLink?.split(separator: "/").last.map(String.init) ?? ""), "\(name)")
            #expect(facts.hasDevice == FileManager.default.fileExists(atPath: node + "/device"), "\(name)")
        }
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/sys/class/net/lo")))
    func hostLoopbackIsUnderDevicesVirtual() {
        let facts = SysfsReader().facts(name: "lo", arpType: ARPHardware.loopback, linkKind: "")
        #expect(facts.isVirtualPath)
        #expect(!facts.hasDevice)
        #expect(InterfaceClassifier().classify(facts).type == .loopback)
    }
}
