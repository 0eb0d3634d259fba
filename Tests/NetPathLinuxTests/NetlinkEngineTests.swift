// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathCore
import TestSupport
import Testing

@testable import NetPathLinux

/// The engine against the real kernel, in namespaces the tests create and delete.
@Suite(.enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct NetlinkEngineTests {
    /// Starts an engine in `namespace` and records its snapshots.
    static func startEngine(
        in namespace: NetworkNamespace,
        receiveBuffer: Int? = nil,
        filtersRoutesInKernel: Bool = true
    ) async throws -> (NetlinkEngine, Recorder<KernelSnapshot>) {
        var options = NetlinkEngine.Options(namespace: namespace.name)
        if let receiveBuffer { options.receiveBufferSize = receiveBuffer }
        options.filtersRoutesInKernel = filtersRoutesInKernel
        let engine = NetlinkEngine(options: options)
        let recorder = Recorder<KernelSnapshot>()
        await recorder.record(try engine.start())
        return (engine, recorder)
    }

    @Test("the mirrored state equals `ip -j` after every kind of kernel change")
    func mirrorFollowsEveryChange() async throws {
        try await NetworkNamespace.with(["truth", "peer"]) { namespaces in
            let (ns, peer) = (namespaces[0], namespaces[1])
            try ns.addVeth("wan0", peer: "wan0p", in: peer)
            try ns.addVeth("wan1", peer: "wan1p", in: peer)
            let (engine, recorder) = try await Self.startEngine(in: ns)
            defer { engine.stop() }
            try await recorder.awaitMirror(of: ns, engine: engine, "the initial dump")

            let steps: [(String, () throws -> Void)] = [
                (
                    "admin up",
                    {
                        try ns.ip("link", "set", "wan0", "up"); try ns.ip("link", "set", "wan1", "up")
                    }
                ),
                (
                    "carrier up",
                    {
                        try peer.ip("link", "set", "wan0p", "up"); try peer.ip("link", "set", "wan1p", "up")
                    }
                ),
                (
                    "IPv4 address add",
                    {
                        try ns.ip("addr", "add", "192.0.2.10/24", "dev", "wan0");
                        try ns.ip("addr", "add", "198.51.100.10/24", "dev", "wan1")
                    }
                ),
                (
                    "IPv6 address add",
                    {
                        try ns.ip("addr", "add", "2001:db8:1::10/64", "dev", "wan0", "nodad");
                        try ns.ip("addr", "add", "2001:db8:2::10/64", "dev", "wan1", "nodad")
                    }
                ),
                (
                    "IPv4 default route add with metrics",
                    {
                        try ns.ip("route", "add", "default", "via", "192.0.2.1", "dev", "wan0", "metric", "100");
                        try ns.ip("route", "add", "default", "via", "198.51.100.1", "dev", "wan1", "metric", "200")
                    }
                ),
                (
                    "IPv4 default route replace",
                    { try ns.ip("route", "replace", "default", "via", "192.0.2.254", "dev", "wan0", "metric", "100") }
                ),
                (
                    "same-metric IPv4 defaults on two links",
                    { try ns.ip("route", "append", "default", "via", "198.51.100.1", "dev", "wan1", "metric", "100") }
                ),
                (
                    "IPv6 default routes",
                    {
                        try ns.ip(
                            "-6",
                            "route",
                            "add",
                            "default",
                            "via",
                            "2001:db8:1::1",
                            "dev",
                            "wan0",
                            "metric",
                            "100"
                        );
                        try ns.ip(
                            "-6",
                            "route",
                            "add",
                            "default",
                            "via",
                            "2001:db8:2::1",
                            "dev",
                            "wan1",
                            "metric",
                            "200"
                        )
                    }
                ),
                (
                    "IPv6 default route replace",
                    {
                        try ns.ip(
                            "-6",
                            "route",
                            "replace",
                            "default",
                            "via",
                            "2001:db8:1::fe",
                            "dev",
                            "wan0",
                            "metric",
                            "100"
                        )
                    }
                ),
                (
                    "IPv6 same-metric defaults merge into multipath",
                    {
                        try ns.ip(
                            "-6",
                            "route",
                            "append",
                            "default",
                            "via",
                            "2001:db8:2::1",
                            "dev",
                            "wan1",
                            "metric",
                            "100"
                        )
                    }
                ),
                (
                    "IPv4 default route delete",
                    { try ns.ip("route", "del", "default", "via", "198.51.100.1", "dev", "wan1", "metric", "200") }
                ),
                (
                    "IPv6 default route delete",
                    {
                        try ns.ip(
                            "-6",
                            "route",
                            "del",
                            "default",
                            "via",
                            "2001:db8:2::1",
                            "dev",
                            "wan1",
                            "metric",
                            "200"
                        )
                    }
                ),
                ("carrier down (routes stay)", { try peer.ip("link", "set", "wan0p", "down") }),
                ("carrier up again", { try peer.ip("link", "set", "wan0p", "up") }),
                ("admin down (IPv4 routes flushed silently)", { try ns.ip("link", "set", "wan0", "down") }),
                ("admin up again", { try ns.ip("link", "set", "wan0", "up") }),
                (
                    "IPv4 address remove (last one flushes routes)",
                    { try ns.ip("addr", "del", "198.51.100.10/24", "dev", "wan1") }
                ),
                ("IPv6 address remove", { try ns.ip("addr", "del", "2001:db8:2::10/64", "dev", "wan1") }),
                (
                    "bridge add",
                    {
                        try ns.ip("link", "add", "br0", "type", "bridge"); try ns.ip("link", "set", "br0", "up")
                    }
                ),
                ("enslave to bridge", { try ns.ip("link", "set", "wan1", "master", "br0") }),
                ("release from bridge", { try ns.ip("link", "set", "wan1", "nomaster") }),
                (
                    "link delete",
                    {
                        try ns.ip("link", "del", "wan1"); try ns.ip("link", "del", "br0")
                    }
                ),
                (
                    "tun add and delete",
                    {
                        try ns.ip("tuntap", "add", "dev", "tun0", "mode", "tun"); try ns.ip("link", "set", "tun0", "up")
                    }
                ),
            ]
            for (name, change) in steps {
                try change()
                try await recorder.awaitMirror(of: ns, engine: engine, name)
            }
            #expect(engine.statistics.overruns == 0)
        }
    }

    @Test("the first snapshot is the initial dump and holds every link")
    func firstSnapshotIsTheDump() async throws {
        try await NetworkNamespace.with("dump") { ns in
            try ns.addVeth("a0", peer: "a1")
            let (engine, recorder) = try await Self.startEngine(in: ns)
            defer { engine.stop() }
            let first = try await recorder.next("the initial dump")
            #expect(first.cause == .initialDump)
            #expect(Set(first.links.map(\.name)) == ["lo", "a0", "a1"])
        }
    }

    @Test("an admin toggle is coalesced into few snapshots, and stop ends the stream")
    func burstsAreCoalesced() async throws {
        try await NetworkNamespace.with(["burst", "peer"]) { namespaces in
            let (ns, peer) = (namespaces[0], namespaces[1])
            try ns.addVeth("b0", peer: "b0p", in: peer)
            try peer.ip("link", "set", "b0p", "up")
            try ns.ip("addr", "add", "192.0.2.10/24", "dev", "b0")
            // Without the kernel's filter: the toggle's routes (prefix, local, broadcast) are
            // among its messages.
            let (engine, recorder) = try await Self.startEngine(in: ns, filtersRoutesInKernel: false)
            _ = try await recorder.next("the initial dump")
            try ns.ip("link", "set", "b0", "up")
            _ = try await recorder.next("the snapshot with b0 up and carrier") { snapshot in
                snapshot.links.contains { $0.name == "b0" && $0.adminUp && $0.carrier }
            }
            let messages = engine.statistics.messages
            let snapshots = await recorder.all.count - 1
            // One toggle produces several messages (link, routes, addresses); publishing one
            // snapshot per message would make every consumer diff each of them.
            #expect(messages > UInt64(snapshots), "messages \(messages), snapshots \(snapshots)")
            engine.stop()
            await #expect(throws: TestFailure.self) {
                _ = try await recorder.next("nothing: the stream has ended", timeout: .seconds(5)) { _ in false }
            }
            #expect(!engine.isRunning)
        }
    }

    /// An addressed, up veth end `f0` with a default route via 198.18.0.1.
    static func addUplink(to ns: NetworkNamespace) throws {
        try ns.addVeth("f0", peer: "f1")
        try ns.ip("link", "set", "f0", "up")
        try ns.ip("link", "set", "f1", "up")
        try ns.ip("addr", "add", "198.18.0.2/24", "dev", "f0")
        try ns.ip("route", "add", "default", "via", "198.18.0.1", "dev", "f0")
    }

    /// 10,000 /32 routes via f0, then a default route in table 7: once that is read, so were they.
    static func addSpecificRoutes(to ns: NetworkNamespace) throws {
        try ns.batch(
            (0..<10_000).map { "route add 10.9.\($0 >> 8).\($0 & 0xff)/32 via 198.18.0.1 dev f0" }
                + ["route add default via 198.18.0.1 dev f0 table 7"]
        )
    }

    @Test(
        "without the kernel's filter, 10,000 specific routes are read, counted and dropped: the table holds only the default routes"
    )
    func specificRoutesAreNotRetained() async throws {
        try await NetworkNamespace.with("flat") { ns in
            try Self.addUplink(to: ns)
            let (engine, recorder) = try await Self.startEngine(in: ns, filtersRoutesInKernel: false)
            defer { engine.stop() }
            try await recorder.awaitMirror(of: ns, engine: engine, "setup")
            let held = engine.table().routeCount
            let before = engine.statistics
            try Self.addSpecificRoutes(to: ns)
            _ = try await recorder.next("the snapshot after all 10,001 routes were read") { snapshot in
                snapshot.statistics.messages >= before.messages + 10_001
            }
            #expect(engine.table().routeCount == held + 1, "held \(held) before, \(engine.table().routeCount) after")
            #expect(engine.statistics.skippedRoutes - before.skippedRoutes >= 10_000)
            // A fresh dump of the same table drops them too.
            engine.stop()
            let (again, _) = try await Self.startEngine(in: ns)
            defer { again.stop() }
            #expect(again.table().routeCount == held + 1)
            #expect(again.statistics.skippedRoutes >= 10_000)
        }
    }

    @Test(
        "with the kernel's filter, 10,000 specific routes never reach the engine; a default route and a target's covering route do"
    )
    func kernelDropsSpecificRoutes() async throws {
        try await NetworkNamespace.with("filtered") { ns in
            try Self.addUplink(to: ns)
            let (engine, recorder) = try await Self.startEngine(in: ns)
            defer { engine.stop() }
            try await recorder.awaitMirror(of: ns, engine: engine, "setup")
            // A target: its address is watched from the question on.
            let target: IPAddress = "203.0.113.7"
            #expect(engine.targetRoutes(to: target).first?.prefixLength == 0)
            let held = engine.table().routeCount
            let before = engine.statistics
            try Self.addSpecificRoutes(to: ns)
            _ = try await recorder.next("the snapshot with table 7's default route") { snapshot in
                snapshot.routeCount == held + 1
            }
            let after = engine.statistics
            // The default route, and none of the /32s (a few other messages may come along).
            #expect(after.messages - before.messages < 100, "read \(after.messages - before.messages) messages")
            #expect(after.skippedRoutes == before.skippedRoutes)
            #expect(after.overruns == 0)
            #expect(engine.table().routeCount == held + 1)
            // A route that covers the target passes the filter (and is dropped unparsed by the
            // engine's walk, which notes that it covers the target): routing moves on, and the
            // answer with it.
            let skipped = engine.statistics.skippedRoutes
            try ns.ip("route", "add", "203.0.113.0/24", "via", "198.18.0.1", "dev", "f0")
            _ = try await recorder.next("the snapshot after the route covering the target reached the engine") {
                snapshot in snapshot.statistics.skippedRoutes > skipped
            }
            #expect(engine.targetRoutes(to: target).first?.prefixLength == 24)
        }
    }

    @Test("starting in a namespace that does not exist fails with a namespace error")
    func missingNamespaceFails() throws {
        try Privileges.requireRoot()
        let engine = NetlinkEngine(options: .init(namespace: "np-does-not-exist-\(UInt32.random(in: 0...UInt32.max))"))
        do {
            _ = try engine.start()
            Issue.record("start() succeeded in a missing namespace")
        } catch {
            #expect(error.code == .namespace)
            #expect(error.description.contains("No such file"))
        }
    }
}
