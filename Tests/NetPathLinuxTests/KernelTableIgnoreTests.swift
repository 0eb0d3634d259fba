// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathCore
import NetPathLinux
import Testing

/// Links `[agent] ignore` names are kept as a name and a reason only: nothing of them reaches a
/// snapshot, and their messages change nothing.
struct KernelTableIgnoreTests {
    static func link(_ index: Int32, _ name: String, kind: String = "veth", up: Bool = true) -> LinkRecord {
        LinkRecord(
            index: index,
            name: name,
            flags: up ? 0x10001 : 0,
            operState: 6,
            mtu: 1500,
            mac: "02:00:00:00:00:01",
            arpType: 1,
            kind: kind
        )
    }

    static func address(_ index: Int32, _ cidr: String) -> AddressRecord {
        AddressRecord(index: index, address: InterfaceAddress(cidr: cidr)!)
    }

    static let filter = LinkFilter(
        list: LinkIgnoreList(entries: [.name(try! Glob("veth*")), .kind("bridge")], kept: [try! Glob("veth-up")])
    )

    @Test func anIgnoredLinkAndItsMessagesChangeNothingASnapshotShows() {
        var table = KernelTable(filter: Self.filter)
        do {
            let changed = table.apply(.newLink(Self.link(2, "eth0", kind: "")))
            #expect(changed)
        }
        let routing = table.routingGeneration
        // 100 container links come, flap, get addresses, and go: no change at all.
        for index in Int32(10)..<110 {
            do {
                let changed = table.apply(.newLink(Self.link(index, "veth\(index)")))
                #expect(!changed)
            }
            do {
                let changed = table.apply(.newLink(Self.link(index, "veth\(index)", up: false)))
                #expect(!changed)
            }
            do {
                let changed = table.apply(.newAddress(Self.address(index, "fe80::\(index)/64")))
                #expect(!changed)
            }
        }
        do {
            let changed = table.apply(.newLink(Self.link(200, "docker0", kind: "bridge")))
            #expect(!changed)
        }
        #expect(table.ignoredLinks.count == 101)
        #expect(table.ignoredLinks[10] == IgnoredLink(name: "veth10", kind: "veth", entry: 0))
        #expect(table.ignoredLinks[200]?.entry == 1)
        #expect(table.links.keys.sorted() == [2])
        #expect(table.addressesByInterface().isEmpty)
        for index in Int32(10)..<110 {
            let changed = table.apply(.deleteLink(index: index))
            #expect(!changed)
        }
        #expect(table.ignoredLinks.count == 1)
        #expect(table.routingGeneration == routing)
        #expect(!table.needsDump)
    }

    @Test func aNameTheConfigurationKeepsIsMirrored() {
        var table = KernelTable(filter: Self.filter)
        do {
            let changed = table.apply(.newLink(Self.link(5, "veth-up")))
            #expect(changed)
        }
        do {
            let changed = table.apply(.newAddress(Self.address(5, "192.0.2.10/24")))
            #expect(changed)
        }
        #expect(table.links[5] != nil && table.ignoredLinks.isEmpty)
    }

    @Test func aMirroredLinkRenamedIntoTheListLeavesTheMirror() {
        var table = KernelTable(filter: Self.filter)
        table.apply(.newLink(Self.link(7, "eth7", kind: "veth")))
        table.apply(.newAddress(Self.address(7, "192.0.2.7/24")))
        do {
            let changed = table.apply(.newLink(Self.link(7, "veth7")))
            #expect(changed)
        }
        #expect(table.links[7] == nil && table.addressesByInterface()[7] == nil)
        #expect(table.ignoredLinks[7]?.name == "veth7")
    }

    @Test func anIgnoredLinkRenamedOutOfTheListAsksForADump() {
        var table = KernelTable(filter: Self.filter)
        table.apply(.newLink(Self.link(8, "veth8")))
        table.apply(.newAddress(Self.address(8, "192.0.2.8/24")))
        do {
            let changed = table.apply(.newLink(Self.link(8, "eth8", kind: "veth")))
            #expect(changed)
        }
        #expect(table.links[8] != nil && table.ignoredLinks.isEmpty)
        // Its address was dropped on arrival: only a dump has it.
        #expect(table.needsDump)
    }

    @Test func aUdevPropertyIsReadFromTheDatabaseByIndex() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("np-udev-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try "I:123\nE:ID_NET_DRIVER=veth\nE:NM_UNMANAGED=1\nG:systemd\n".write(
            to: directory.appendingPathComponent("n4"),
            atomically: true,
            encoding: .utf8
        )
        try "I:124\nE:ID_NET_DRIVER=e1000e\n".write(
            to: directory.appendingPathComponent("n3"),
            atomically: true,
            encoding: .utf8
        )
        // An uplink an administrator left to systemd-networkd: marked, but a real NIC.
        try "I:125\nE:NM_UNMANAGED=1\n".write(
            to: directory.appendingPathComponent("n6"),
            atomically: true,
            encoding: .utf8
        )
        let sysfs = directory.appendingPathComponent("sys")
        try FileManager.default.createDirectory(
            at: sysfs.appendingPathComponent("class/net/eno1/device"),
            withIntermediateDirectories: true
        )
        let filter = LinkFilter(
            list: LinkIgnoreList(entries: [.udev(property: "NM_UNMANAGED", value: "1")]),
            udev: UdevDatabase(directory: directory.path, sysfsRoot: sysfs.path)
        )
        var table = KernelTable(filter: filter)
        table.apply(.newLink(Self.link(3, "enp0s3", kind: "")))
        table.apply(.newLink(Self.link(4, "vmhost0")))
        // No entry: not processed by udev (yet), or another namespace's link.
        table.apply(.newLink(Self.link(5, "unseen0")))
        table.apply(.newLink(Self.link(6, "eno1", kind: "")))
        #expect(table.links.keys.sorted() == [3, 5, 6])
        #expect(table.ignoredLinks[4]?.name == "vmhost0")
    }
}
