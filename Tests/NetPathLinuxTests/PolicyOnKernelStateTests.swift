// SPDX-License-Identifier: Apache-2.0

import NetPathCore
import NetPathLinux
import TestSupport
import Testing

/// Policies evaluated on states observed from a real kernel: two uplinks, a wired one and a
/// metered cellular one (typed by overrides, as veth links are `other` by themselves).
@Suite(.enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct PolicyOnKernelStateTests {
    static let overrides = [
        InterfaceOverride(match: try! Glob("wan0"), type: .wired),
        InterfaceOverride(match: try! Glob("wan1"), type: .cellular),
    ]

    func path(_ policy: PathPolicy, _ state: SystemState) -> NetworkPath {
        PathEvaluator(policy: policy).path(for: state)
    }

    @Test("primary follows the kernel's metric; prefer, metered avoid/deny, require and prohibit decide as specified")
    func twoUplinks() async throws {
        try await NetworkNamespace.with(["policy", "peer"]) { namespaces in
            let (ns, peer) = (namespaces[0], namespaces[1])
            for (n, link) in ["wan0", "wan1"].enumerated() {
                try ns.addVeth(link, peer: link + "p", in: peer)
                try ns.ip("link", "set", link, "up")
                try peer.ip("link", "set", link + "p", "up")
                try ns.ip("addr", "add", "10.\(n + 1).0.2/24", "dev", link)
            }
            try ns.ip("route", "add", "default", "via", "10.1.0.1", "dev", "wan0", "metric", "200")
            try ns.ip("route", "add", "default", "via", "10.2.0.1", "dev", "wan1", "metric", "100")

            let observer = SystemObserver(
                engine: NetlinkEngine(options: .init(namespace: ns.name)),
                builder: SystemStateBuilder(
                    classifier: InterfaceClassifier(overrides: Self.overrides),
                    sysfs: SysfsReader(root: "/nonexistent")
                )
            )
            defer { observer.stop() }
            let updates = Recorder<SystemUpdate>()
            await updates.record(try observer.start())
            var state = try await updates.next("both uplinks routable") { update in
                update.state["wan0"]?.isUsable == true && update.state["wan1"]?.isUsable == true
            }.state
            #expect(state["wan1"]?.isMetered == true && state["wan1"]?.meteredReason == .cellular)

            // No preference: the kernel's own choice, the lowest metric.
            #expect(path(PathPolicy(), state).primary?.name == "wan1")
            // prefer overrides the metric.
            #expect(path(PathPolicy(prefer: [.wired, .cellular]), state).primary?.name == "wan0")
            // avoid: unmetered first, whatever the metric.
            let avoid = path(PathPolicy(metered: .avoid), state)
            #expect(avoid.primary?.name == "wan0" && !avoid.isExpensive)
            #expect(avoid.availableInterfaces.map(\.name) == ["wan0", "wan1"])
            // require and prohibit.
            #expect(path(PathPolicy(require: [.cellular]), state).primary?.name == "wan1")
            let wifiOnly = path(PathPolicy(require: [.wifi]), state)
            #expect(wifiOnly.status == .unsatisfied && wifiOnly.unsatisfiedReason == .requiredTypeAbsent)
            #expect(path(PathPolicy(prohibit: [.cellular]), state).primary?.name == "wan0")

            // The kernel changes its mind: wan0 at a lower metric now.
            try ns.ip("route", "replace", "default", "via", "10.1.0.1", "dev", "wan0", "metric", "50")
            state = try await updates.next("wan0's new metric") {
                $0.state["wan0"]?.bestDefaultRoute(.ipv4)?.metric == 50
            }.state
            #expect(path(PathPolicy(), state).primary?.name == "wan0")

            // Wired loses carrier: only the metered modem is left.
            try peer.ip("link", "set", "wan0p", "down")
            state = try await updates.next("wan0 without carrier") { $0.state["wan0"]?.carrier == false }.state
            let avoided = path(PathPolicy(metered: .avoid), state)
            #expect(avoided.status == .satisfied && avoided.primary?.name == "wan1" && avoided.isExpensive)
            let denied = path(PathPolicy(metered: .deny), state)
            #expect(denied.status == .unsatisfied && denied.unsatisfiedReason == .meteredDenied)
            let noCellular = path(PathPolicy(prohibit: [.cellular]), state)
            #expect(noCellular.status == .unsatisfied && noCellular.unsatisfiedReason == .noInterface)
        }
    }
}
