// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathCore
import NetPathLinux
import TestSupport
import Testing

/// What the builder keeps from one update to the next, and when it lets go of it.
@Suite("SystemStateBuilder")
struct SystemStateBuilderTests {
    static let uplink = LinkRecord(
        index: 2,
        name: "wan0",
        flags: 0x1,
        operState: 6,
        mtu: 1500,
        mac: "",
        arpType: 1,
        kind: "veth"
    )

    func snapshot(_ links: [LinkRecord]) -> KernelSnapshot { KernelSnapshot(links: links) }

    @Test("replaced overrides (a reload) classify a known link again at the next update; the same ones keep it")
    func replacedOverridesReclassify() throws {
        var builder = SystemStateBuilder(
            sysfs: SysfsReader(root: "/nonexistent"),
            resolvConfPath: "/nonexistent/resolv.conf"
        )
        var state = builder.state(from: snapshot([Self.uplink]))
        #expect(state["wan0"]?.type == .other && state["wan0"]?.isMetered == false)

        builder.classifier = InterfaceClassifier(overrides: [
            InterfaceOverride(match: try Glob("wan*"), type: .cellular)
        ])
        state = builder.state(from: snapshot([Self.uplink]))
        #expect(state["wan0"]?.type == .cellular && state["wan0"]?.isMetered == true)
        state = builder.state(from: snapshot([Self.uplink]))
        #expect(state["wan0"]?.type == .cellular, "kept while the overrides stay")

        builder.classifier = InterfaceClassifier(overrides: [InterfaceOverride(match: try Glob("wan*"), metered: false)]
        )
        state = builder.state(from: snapshot([Self.uplink]))
        #expect(state["wan0"]?.type == .other && state["wan0"]?.meteredReason == .override)
    }

    func withDirectory(_ body: (String) throws -> Void) throws {
        try TemporaryDirectory.with("netpath-builder", body)
    }

    @Test("with a resolv.conf watch no engine follows, each update looks at the file itself")
    func unfollowedWatchFallsBackToTheFile() throws {
        try withDirectory { directory in
            let path = directory + "/resolv.conf"
            try "nameserver 192.0.2.1\n".write(toFile: path, atomically: false, encoding: .utf8)
            var builder = SystemStateBuilder(sysfs: SysfsReader(root: "/nonexistent"), resolvConfPath: path)
            builder.resolvConfWatch = FileChangeWatch(path: path)
            #expect(builder.state(from: snapshot([])).dnsServers == ["192.0.2.1"])
            try "nameserver 192.0.2.22\n".write(toFile: path, atomically: false, encoding: .utf8)
            #expect(builder.state(from: snapshot([])).dnsServers == ["192.0.2.22"])
        }
    }

    @Test("a followed watch spares the file until it changes; a missing directory on the way is looked for each update")
    func followedWatchAndMissingDirectory() throws {
        try withDirectory { directory in
            #expect(mkdir(directory + "/etc", 0o755) == 0)
            let path = directory + "/etc/resolv.conf"
            #expect(symlink(directory + "/run/resolver/stub.conf", path) == 0)
            let watch = FileChangeWatch(path: path)
            watch.attach()
            var builder = SystemStateBuilder(sysfs: SysfsReader(root: "/nonexistent"), resolvConfPath: path)
            builder.resolvConfWatch = watch
            #expect(builder.state(from: snapshot([])).dnsServers.isEmpty)

            // The resolver starts: its directory and file appear, which no watch could see.
            #expect(mkdir(directory + "/run", 0o755) == 0)
            #expect(mkdir(directory + "/run/resolver", 0o755) == 0)
            try "nameserver 127.0.0.53\n".write(
                toFile: directory + "/run/resolver/stub.conf",
                atomically: false,
                encoding: .utf8
            )
            #expect(builder.state(from: snapshot([])).dnsServers == ["127.0.0.53"], "seen by looking at the file")
            #expect(watch.check() != .unknown, "and the watch covers the way now")

            // From now on the watch tells: a change nobody consumed is not read.
            try "nameserver 127.0.0.54\n".write(
                toFile: directory + "/run/resolver/stub.conf",
                atomically: false,
                encoding: .utf8
            )
            #expect(
                builder.state(from: snapshot([])).dnsServers == ["127.0.0.53"],
                "the engine has not read the events yet"
            )
            #expect(watch.consume())
            #expect(builder.state(from: snapshot([])).dnsServers == ["127.0.0.54"])
        }
    }

    @Test("a link renamed under the same index is classified by its new name")
    func renamedLinkIsClassifiedAnew() throws {
        var builder = SystemStateBuilder(
            classifier: InterfaceClassifier(overrides: [InterfaceOverride(match: try Glob("wwan*"), type: .cellular)]),
            sysfs: SysfsReader(root: "/nonexistent"),
            resolvConfPath: "/nonexistent/resolv.conf"
        )
        #expect(builder.state(from: snapshot([Self.uplink]))["wan0"]?.type == .other)
        var renamed = Self.uplink
        renamed.name = "wwan0"
        #expect(builder.state(from: snapshot([renamed]))["wwan0"]?.type == .cellular)
    }

    @Test("over a run of random changes, each state is the one a new builder makes: no interface is handed on stale")
    func handedOnInterfacesAreNeverStale() throws {
        var generator = SystemRandomNumberGenerator()
        let overrides = [
            InterfaceClassifier(),
            InterfaceClassifier(overrides: [InterfaceOverride(match: try Glob("wan*"), type: .cellular)]),
        ]
        var builder = SystemStateBuilder(sysfs: SysfsReader(root: "/nonexistent"), resolvConfPath: "/nonexistent/x")
        var links = (Int32(2)...6).map { index in
            var link = Self.uplink
            link.index = index
            link.name = "wan\(index)"
            return link
        }
        var addresses: [Int32: [InterfaceAddress]] = [:]
        var routes: [Int32: [DefaultRoute]] = [:]
        var nextIndex: Int32 = 7
        for step in 0..<600 {
            // One change, of one kind, to one link, as the kernel's messages make them.
            let position = Int.random(in: 0..<links.count, using: &generator)
            let index = links[position].index
            switch Int.random(in: 0..<10, using: &generator) {
            case 0: links[position].flags ^= 0x10000  // carrier
            case 1: links[position].flags ^= 0x1  // admin
            case 2: links[position].mtu = [1500, 1400, 9000].randomElement(using: &generator)!
            case 3: links[position].name = ["wan\(index)", "lan\(index)"].randomElement(using: &generator)!
            case 4:
                let address = InterfaceAddress(
                    IPAddress("192.0.2.\(Int.random(in: 1...9, using: &generator))")!,
                    prefixLength: 24
                )
                addresses[index, default: []] =
                    Bool.random(using: &generator) ? [address] : addresses[index, default: []] + [address]
            case 5:
                let route = DefaultRoute(
                    via: IPAddress(["192.0.2.254", "192.0.2.253"].randomElement(using: &generator)!)!,
                    metric: UInt32.random(in: 0...3, using: &generator) * 100,
                    table: [DefaultRoute.mainTable, 100].randomElement(using: &generator)!
                )
                routes[index] = Bool.random(using: &generator) ? [] : [route]
            case 6:
                // An address's flags change without the address: DAD finishes, the lifetime ends.
                if var list = addresses[index], !list.isEmpty {
                    list[0].isTentative.toggle()
                    list[0].isDeprecated = Bool.random(using: &generator)
                    addresses[index] = list
                }
            case 7:
                // A link goes (its records with it), or one comes, under a new index or an old one.
                if links.count > 1 && Bool.random(using: &generator) {
                    links.remove(at: position)
                    addresses[index] = nil
                    routes[index] = nil
                } else {
                    var link = Self.uplink
                    link.index = Bool.random(using: &generator) ? nextIndex : index + 100
                    link.name = "wan\(link.index)"
                    nextIndex += 1
                    if !links.contains(where: { $0.index == link.index }) {
                        links.append(link)
                        links.sort { $0.index < $1.index }
                    }
                }
            default:
                builder.classifier = overrides.randomElement(using: &generator)!
            }
            let snapshot = KernelSnapshot(links: links, addresses: addresses, defaultRoutes: routes)
            var fresh = SystemStateBuilder(
                classifier: builder.classifier,
                sysfs: SysfsReader(root: "/nonexistent"),
                resolvConfPath: "/nonexistent/x"
            )
            let kept = builder.state(from: snapshot)
            let made = fresh.state(from: snapshot)
            #expect(kept == made, "step \(step): the kept builder's state differs from a new builder's")
            if kept != made { return }
        }
    }
}
