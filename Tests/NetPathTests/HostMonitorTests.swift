// SPDX-License-Identifier: Apache-2.0

import Dispatch
import Foundation
import NetPath
import NetPathLinux
import Synchronization
import TestSupport
import Testing

/// HostMonitor on the real kernel: route lookups in a namespace with two uplinks.
@Suite(.enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct HostMonitorTests {
    /// A namespace with IPv6 off (so the kernel sends nothing of its own) and two uplinks:
    /// `a0` 192.0.2.10/24 (wired, as classified) and `b0` 198.51.100.10/24 (cellular, metered, by
    /// override), far ends in `peer`. No default route.
    struct TwoUplinks {
        let namespace: NetworkNamespace
        let peer: NetworkNamespace

        init(_ namespace: NetworkNamespace, peer: NetworkNamespace) throws {
            self.namespace = namespace
            self.peer = peer
            for ns in [namespace, peer] {
                try Command.check([
                    "ip", "netns", "exec", ns.name, "sysctl", "-q", "-w",
                    "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1",
                ])
            }
            for (link, address) in [("a0", "192.0.2.10/24"), ("b0", "198.51.100.10/24")] {
                try namespace.addVeth(link, peer: link + "p", in: peer)
                try namespace.ip("addr", "add", address, "dev", link)
                try namespace.ip("link", "set", link, "up")
                try peer.ip("link", "set", link + "p", "up")
            }
        }

        func source(resolve: @escaping @Sendable (String) -> [IPAddress] = { _ in [] }) throws -> KernelPathSource {
            let overrides = [
                InterfaceOverride(match: try Glob("a0"), type: .wired),
                InterfaceOverride(match: try Glob("b0"), type: .cellular, metered: true),
            ]
            return KernelPathSource(
                options: .init(namespace: namespace.name),
                builder: SystemStateBuilder(classifier: InterfaceClassifier(overrides: overrides)),
                resolve: resolve
            )
        }

        /// TX packet counters of the uplinks, from `ip -j -s link`.
        func transmitted() throws -> [String: Int] {
            var counts: [String: Int] = [:]
            for link in ["a0", "b0"] {
                let text = try namespace.ip("-j", "-s", "link", "show", "dev", link)
                guard let entries = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]],
                    let stats = entries.first?["stats64"] as? [String: Any],
                    let tx = stats["tx"] as? [String: Any], let packets = tx["packets"] as? Int
                else { throw TestFailure("no TX counter for \(link): \(text)") }
                counts[link] = packets
            }
            return counts
        }
    }

    @Test("an address routed via one uplink, then another, then nowhere; nothing is sent on the wire")
    func followsRouteChangesWithoutSending() async throws {
        try await NetworkNamespace.with(["host", "peer"]) { namespaces in
            let uplinks = try TwoUplinks(namespaces[0], peer: namespaces[1])
            let ns = uplinks.namespace
            try ns.ip("route", "add", "203.0.113.0/24", "via", "192.0.2.1", "dev", "a0")
            let before = try uplinks.transmitted()

            let monitor = HostMonitor(host: "203.0.113.7", source: try uplinks.source())
            let recorder = Recorder<HostReachability>()
            await recorder.record(monitor.updates)

            let first = try await recorder.next("reachable via a0")
            #expect(first.status == .reachable)
            #expect(first.interface?.name == "a0" && first.interfaceType == .wired && !first.isExpensive)
            #expect(first.gateway == "192.0.2.1" && first.address == "203.0.113.7" && first.prefixLength == 24)

            try ns.ip("route", "replace", "203.0.113.0/24", "via", "198.51.100.1", "dev", "b0")
            let second = try await recorder.next("reachable via b0") { $0.interface?.name == "b0" }
            #expect(second.status == .reachable && second.interfaceType == .cellular && second.isExpensive)
            #expect(second.gateway == "198.51.100.1")

            // A more specific route wins over the /24, as in the kernel.
            try ns.ip("route", "add", "203.0.113.7/32", "via", "192.0.2.1", "dev", "a0")
            let specific = try await recorder.next("the /32 via a0") { $0.interface?.name == "a0" }
            #expect(specific.prefixLength == 32)

            try ns.ip("route", "del", "203.0.113.7/32")
            _ = try await recorder.next("back to the /24 via b0") { $0.interface?.name == "b0" }
            try ns.ip("route", "del", "203.0.113.0/24")
            let gone = try await recorder.next("unreachable") { $0.status == .unreachable }
            #expect(gone.interface == nil && gone.addresses == ["203.0.113.7"])
            await recorder.stop()

            let statuses = await recorder.all.map { "\($0.status.rawValue) \($0.interface?.name ?? "-")" }
            #expect(statuses == ["reachable a0", "reachable b0", "reachable a0", "reachable b0", "unreachable -"])
            #expect(try uplinks.transmitted() == before, "the lookups sent no packet")
            try await NamespaceResources.waitUntil(ns, are: .none)
        }
    }

    @Test("a host behind `ip rule` is reached as `ip route get` says, past a longer prefix in main")
    func followsRules() async throws {
        try await NetworkNamespace.with(["rules", "peer"]) { namespaces in
            let uplinks = try TwoUplinks(namespaces[0], peer: namespaces[1])
            let ns = uplinks.namespace
            try ns.ip("route", "add", "203.0.113.0/24", "via", "192.0.2.1", "dev", "a0")
            try ns.ip("route", "add", "default", "via", "198.51.100.1", "dev", "b0", "table", "100")
            try ns.ip("rule", "add", "to", "203.0.113.7", "lookup", "100")
            #expect(try ns.ip("route", "get", "203.0.113.7").contains("dev b0"))

            let monitor = HostMonitor(host: "203.0.113.7", source: try uplinks.source())
            let recorder = Recorder<HostReachability>()
            await recorder.record(monitor.updates)
            let first = try await recorder.next("reachable via b0, table 100's default route")
            #expect(first.interface?.name == "b0" && first.gateway == "198.51.100.1" && first.prefixLength == 0)

            // The rule goes: the kernel, and the monitor, fall back to main's /24 via a0.
            try ns.ip("rule", "del", "to", "203.0.113.7", "lookup", "100")
            let second = try await recorder.next("reachable via a0") { $0.interface?.name == "a0" }
            #expect(second.gateway == "192.0.2.1" && second.prefixLength == 24)
            await recorder.stop()
        }
    }

    @Test("a host name is resolved once per path change; a name that does not resolve is unresolved, saying why")
    func resolvesOncePerPathChange() async throws {
        try await NetworkNamespace.with(["names", "peer"]) { namespaces in
            let uplinks = try TwoUplinks(namespaces[0], peer: namespaces[1])
            let ns = uplinks.namespace
            let lookups = Mutex<[String]>([])
            let source = try uplinks.source { name in
                lookups.withLock { $0.append(name) }
                return name == "service.test" ? ["203.0.113.7"] : []
            }
            try ns.ip("route", "add", "203.0.113.0/24", "via", "192.0.2.1", "dev", "a0")

            let monitor = HostMonitor(host: "service.test", source: source)
            let (answers, continuation) = AsyncStream<HostReachability>.makeStream()
            monitor.updateHandler = { continuation.yield($0) }
            monitor.start(queue: DispatchQueue(label: "names"))
            // Set when start returns: the lookup's answer, or that the lookup is under way.
            #expect(monitor.currentReachability != nil)
            let recorder = Recorder<HostReachability>()
            await recorder.record(answers)
            _ = try await recorder.next("the first answer") { $0.interface?.name == "a0" }
            #expect(lookups.withLock { $0 } == ["service.test"])

            // A route change that leaves the default path as it was: no new lookup.
            try ns.ip("route", "replace", "203.0.113.0/24", "via", "198.51.100.1", "dev", "b0")
            _ = try await recorder.next("via b0") { $0.interface?.name == "b0" }
            #expect(lookups.withLock { $0 } == ["service.test"])

            // A default route changes the path (unsatisfied → satisfied): one new lookup.
            try ns.ip("route", "add", "default", "via", "192.0.2.1", "dev", "a0")
            try await eventually("a second lookup after the path changed") { lookups.withLock { $0.count } == 2 }

            let missing = HostMonitor(host: "missing.test", source: source)
            let (missed, missedContinuation) = AsyncStream<HostReachability>.makeStream()
            missing.updateHandler = { missedContinuation.yield($0) }
            missing.start(queue: DispatchQueue(label: "missing"))
            #expect(missing.currentReachability?.status == .unresolved)
            let failures = Recorder<HostReachability>()
            await failures.record(missed)
            let failed = try await failures.next("the failed lookup") { $0.unresolvedReason != .lookingUp }
            #expect(failed.status == .unresolved && failed.addresses == [])
            #expect(failed.unresolvedReason == .failed(reason: "no address"))
            missing.cancel()
            missedContinuation.finish()
            await failures.stop()
            monitor.cancel()
            continuation.finish()
            await recorder.stop()
            try await NamespaceResources.waitUntil(ns, are: .none)
        }
    }

    /// Polls `condition` every 20 ms until it holds, or fails after `timeout`.
    func eventually(_ what: String, timeout: Duration = .seconds(10), _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else {
                throw TestFailure("timed out after \(timeout) waiting for \(what)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
