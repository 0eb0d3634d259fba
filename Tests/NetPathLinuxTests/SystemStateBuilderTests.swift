import Foundation
import NetPathCore
import NetPathLinux
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
}
