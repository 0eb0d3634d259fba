// SPDX-License-Identifier: Apache-2.0

import NetPathCore

/// Gathers the sysfs half of a link's ``LinkFacts`` from `ROOT/class/net/NAME/`.
///
/// What it reads, and why each is a classification signal (``InterfaceClassifier`` has the order):
/// - `uevent`'s `DEVTYPE=` (`wlan`, `wwan`, `bridge`, …), set by the driver;
/// - a `wireless/` directory and a `phy80211` link, which cfg80211 adds to every Wi-Fi netdev;
/// - a `device` link, present only when a bus device (PCI, USB, platform…) backs the link;
/// - whether `class/net/NAME` points under `devices/virtual/`, where the kernel parents every
///   software link (veth, bridge, tun, loopback, …);
/// - the driver: the last component of the `device/driver` link (`iwlwifi`, `qmi_wwan`, …).
///
/// The root is a parameter so tests classify fixture trees instead of the host's links:
///
/// ```swift
/// let facts = SysfsReader(root: fixtureRoot).facts(name: "wlp2s0", arpType: 1, linkKind: "")
/// let classification = InterfaceClassifier().classify(facts)   // .wifi, driver iwlwifi
/// ```
///
/// - Important: `/sys/class/net` shows the links of the network namespace that *mounted* sysfs,
///   not of the caller's (libnl-facts.md, "sysfs inside a namespace"). A process that only
///   `setns`-ed into a namespace reads the host's nodes; names then may not match, and a missing
///   node simply yields the netlink facts alone.
package struct SysfsReader: Sendable {
    /// The sysfs mount point as given.
    package let root: String
    /// `root` with symbolic links resolved once, so that link targets can be compared with it.
    private let resolvedRoot: String

    /// Creates a reader of the sysfs tree mounted at `root`.
    ///
    /// - Parameter root: the sysfs mount point; a fixture directory in tests.
    package init(root: String = "/sys") {
        self.root = root
        var trimmed = root
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        self.resolvedRoot = SmallFile.realPath(trimmed) ?? trimmed
    }

    /// The facts about the link `name`: the netlink ones passed in, plus whatever sysfs shows.
    ///
    /// Never fails: a missing or half-deleted node (the link went away between the netlink message
    /// and this read), an unreadable file or an odd name all yield facts with only the netlink
    /// fields, or with whatever part of sysfs could be read. Costs about ten syscalls.
    ///
    /// - Parameters:
    ///   - name: the interface name, as netlink reported it.
    ///   - arpType: the `ARPHRD_*` type from netlink.
    ///   - linkKind: `IFLA_INFO_KIND` from netlink; empty for hardware.
    package func facts(name: String, arpType: UInt16, linkKind: String) -> LinkFacts {
        var facts = LinkFacts(name: name, arpType: arpType, linkKind: linkKind)
        // Kernel names never contain "/" and are never "." or ".."; a name that does (from a trace
        // file, say) must not walk out of class/net.
        // The node is named by the kernel's bytes, not by their escaped form (InterfaceName). A
        // name that is not UTF-8 cannot be spelled as a Swift path: such a link keeps only its
        // netlink facts (classified by ARPHRD type and link kind).
        guard let kernelName = String(validating: InterfaceName.kernelBytes(name), as: UTF8.self),
            !kernelName.isEmpty, kernelName != ".", kernelName != "..", !kernelName.contains("/"),
            !kernelName.contains("\0")
        else {
            return facts
        }
        let classDirectory = resolvedRoot + "/class/net"
        let node = classDirectory + "/" + kernelName

        // class/net/NAME is a symlink into devices/ on every kernel since 2.6.27. Resolving it
        // lexically costs one readlink, where realpath(3) would readlink every component; it is
        // exact because nothing between the root and the target is itself a link in sysfs.
        // A link deleted since its netlink message leaves no node, or a class entry that dangles.
        guard SmallFile.isDirectory(node) else { return facts }
        let resolved: String
        if let target = SmallFile.linkTarget(node) {
            resolved = Self.normalize(target, relativeTo: classDirectory)
        } else {
            resolved = node  // a plain directory (CONFIG_SYSFS_DEPRECATED layouts): not provably virtual
        }
        facts.isVirtualPath = resolved.hasPrefix(resolvedRoot + "/devices/virtual/")

        if let uevent = SmallFile.read(node + "/uevent", limit: 4096) {
            facts.devType = Self.value(of: "DEVTYPE", inUevent: uevent) ?? ""
        }
        facts.hasWirelessDirectory = SmallFile.isDirectory(node + "/wireless")
        facts.hasPhy80211 = SmallFile.exists(node + "/phy80211")
        if let driverLink = SmallFile.linkTarget(node + "/device/driver") {
            // The target ends in .../drivers/NAME; its last component is the driver's name.
            facts.driver = driverLink.split(separator: "/").last.map(String.init) ?? ""
            facts.hasDevice = true
        } else {
            facts.hasDevice = SmallFile.exists(node + "/device")
        }
        return facts
    }

    /// The value of `KEY=value` in a uevent file (one assignment per line).
    static func value(of key: String, inUevent bytes: [UInt8]) -> String? {
        let prefix = key + "="
        for line in String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline) {
            if line.hasPrefix(prefix) {
                return String(line.dropFirst(prefix.count)).trimmingWhitespace()
            }
        }
        return nil
    }

    /// Joins `target` to `directory` unless it is absolute, and folds `.` and `..` away.
    static func normalize(_ target: String, relativeTo directory: String) -> String {
        let joined = target.hasPrefix("/") ? target : directory + "/" + target
        var parts: [Substring] = []
        for part in joined.split(separator: "/") {
            switch part {
            case ".": continue
            case "..": if !parts.isEmpty { parts.removeLast() }
            default: parts.append(part)
            }
        }
        return "/" + parts.joined(separator: "/")
    }
}

extension String {
    fileprivate func trimmingWhitespace() -> String {
        var slice = Substring(self)
        while let first = slice.first, first.isWhitespace { slice.removeFirst() }
        while let last = slice.last, last.isWhitespace { slice.removeLast() }
        return String(slice)
    }
}
