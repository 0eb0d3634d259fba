// SPDX-License-Identifier: Apache-2.0

import NetPathCore
import Testing

struct LinkIgnoreListTests {
    static let noUdev: @Sendable (String, String) -> Bool = { _, _ in false }
    static let defaults = LinkIgnoreList(entries: LinkIgnoreList.containerDefaults)

    /// Names the runtimes give their links (docs/configuration.md lists the sources).
    @Test(arguments: [
        "veth3f9a2c1", "vethd81bc0e2", "docker0", "br-4c1f6a7e2b90", "cni0", "cni-podman0", "cali1a2b3c4d5e6",
        "tunl0", "vxlan.calico", "vxlan-v6.calico", "wireguard.cali", "wg-v6.cali", "lxc8d2e1f0a9b7c",
        "lxcbr0", "cilium_host", "cilium_net", "cilium_vxlan", "flannel.1", "flannel-wg", "podman0", "kube-ipvs0",
    ])
    func theDefaultsIgnoreWhatContainerRuntimesCreate(_ name: String) {
        #expect(Self.defaults.match(name: name, kind: "veth", udev: Self.noUdev) != nil)
    }

    /// Uplinks, including the veths a container's own uplink is, and bridges administrators name.
    @Test(arguments: ["eth0", "enp3s0", "wlan0", "wwan0", "br0", "br-lan", "br-wan", "up0", "lo", "wg0", "tailscale0"])
    func theDefaultsKeepUplinks(_ name: String) {
        #expect(Self.defaults.match(name: name, kind: "veth", udev: Self.noUdev) == nil)
    }

    @Test func theFirstMatchingEntryIsTheReasonAndUdevIsAskedOnlyWhenNothingElseMatched() throws {
        let list = LinkIgnoreList(entries: [
            .udev(property: "NM_UNMANAGED", value: "1"), .name(try Glob("pod*")), .kind("vxlan"),
        ])
        var asked: [String] = []
        let udev: (String, String) -> Bool = { property, value in
            asked.append("\(property)=\(value)")
            return true
        }
        #expect(list.match(name: "pod7", kind: "veth", udev: udev) == 1)
        #expect(list.match(name: "vx0", kind: "vxlan", udev: udev) == 2)
        #expect(asked.isEmpty)
        #expect(list.match(name: "eth1", kind: "", udev: udev) == 0)
        #expect(asked == ["NM_UNMANAGED=1"])
        #expect(list.match(name: "eth2", kind: "", udev: Self.noUdev) == nil)
        #expect(list.reason(entry: 1) == #"name matches "pod*" in [agent] ignore"#)
        #expect(list.reason(entry: 2) == #"link kind vxlan ("kind:vxlan" in [agent] ignore)"#)
        #expect(list.reason(entry: 0) == #"udev sets NM_UNMANAGED=1 ("udev:NM_UNMANAGED=1" in [agent] ignore)"#)
    }

    @Test func aKeptNameWinsOverEveryEntry() throws {
        let list = LinkIgnoreList(entries: [.name(try Glob("veth*")), .kind("veth")], kept: [try Glob("veth-up")])
        #expect(list.match(name: "veth-up", kind: "veth", udev: Self.noUdev) == nil)
        #expect(list.match(name: "veth-down", kind: "veth", udev: Self.noUdev) == 0)
    }

    @Test(arguments: ["veth*", "kind:vxlan", "udev:NM_UNMANAGED=1", "br-[0-9a-f]"])
    func anEntryIsWrittenBackAsItWasGiven(_ text: String) throws {
        #expect(try LinkIgnoreList.Entry(parsing: text).description == text)
    }
}

struct ResumeDetectorTests {
    @Test func theFirstReadingOnlySetsTheStart() {
        var detector = ResumeDetector()
        #expect(detector.observe(BootClocksReading(boottime: 100_000_000_000, monotonic: 40_000_000_000)) == nil)
    }

    @Test func bootTimeRunningAheadOfMonotonicTimeIsASuspendOfThatLength() {
        var detector = ResumeDetector(threshold: .seconds(2))
        let second: UInt64 = 1_000_000_000
        _ = detector.observe(BootClocksReading(boottime: 100 * second, monotonic: 40 * second))
        // Ten seconds awake: both clocks move alike.
        #expect(detector.observe(BootClocksReading(boottime: 110 * second, monotonic: 50 * second)) == nil)
        // Then 600 s asleep and 10 s awake: only boot time counts the sleep.
        #expect(
            detector.observe(BootClocksReading(boottime: 720 * second, monotonic: 60 * second)) == .seconds(600)
        )
        // Under the threshold: noise, not a suspend.
        #expect(detector.observe(BootClocksReading(boottime: 731 * second, monotonic: 70 * second)) == nil)
    }
}
