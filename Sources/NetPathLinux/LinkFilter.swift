// SPDX-License-Identifier: Apache-2.0

import Glibc
import NetPathCore

/// Which links the engine mirrors: every link but those an ``LinkIgnoreList`` ignores, which it
/// keeps as an ``IgnoredLink`` only (their addresses and later messages are dropped unread).
package struct LinkFilter: Sendable, Hashable {
    /// What is ignored.
    package var list: LinkIgnoreList
    /// udev's database, where its entries belong to the links followed; `nil`: `udev:` entries
    /// match nothing.
    package var udev: UdevDatabase?

    /// A filter that ignores what `list` says, asking `udev` for `udev:` entries.
    package init(list: LinkIgnoreList = .none, udev: UdevDatabase? = nil) {
        self.list = list
        self.udev = udev
    }

    /// Ignores nothing.
    package static let none = LinkFilter()

    /// `list` for an engine that follows `namespace` (`nil`: this process's own), with udev's
    /// database only where it describes those links (``UdevDatabase/forCurrentNamespace(directory:)``).
    package static func following(_ list: LinkIgnoreList, namespace: String?) -> LinkFilter {
        LinkFilter(list: list, udev: namespace == nil && list.asksUdev ? UdevDatabase.forCurrentNamespace() : nil)
    }

    /// The ``LinkIgnoreList/entries`` index that ignores `link`, or `nil` when it is mirrored.
    func ignores(_ link: LinkRecord) -> UInt16? {
        guard !list.isEmpty else { return nil }
        let match = list.match(name: link.name, kind: link.kind) { property, value in
            udev?.marks(link, property, value) == true
        }
        return match.map { UInt16(clamping: $0) }
    }

    /// The ignored links as `status` and `explain` list them, by index.
    func report(_ ignored: [Int32: IgnoredLink]) -> [IgnoredInterface] {
        ignored.sorted { $0.key < $1.key }.map { index, link in
            IgnoredInterface(index: index, name: link.name, reason: list.reason(entry: Int(link.entry)))
        }
    }
}

/// A link the engine does not mirror: its name, and which `ignore` entry matched it. Nothing
/// else is kept (names of up to 15 bytes are stored inline in the `String`).
package struct IgnoredLink: Sendable, Hashable {
    package var name: String
    /// The kind, to tell a rename or a new link from the same link again.
    package var kind: String
    /// The index in ``LinkIgnoreList/entries`` of the entry that matched.
    package var entry: UInt16

    package init(name: String, kind: String, entry: UInt16) {
        self.name = name
        self.kind = kind
        self.entry = entry
    }
}

/// udev's database of network links: `DIR/n<ifindex>`, one `E:KEY=VALUE` line per property
/// (`/run/udev/data` on a host running systemd-udevd).
///
/// It speaks for software links only: a link backed by a bus device (`class/net/NAME/device` in
/// sysfs, a real NIC) is never marked. NetworkManager's own rules mark software links (veths,
/// VirtualBox and VMware host-only links), but administrators also set `NM_UNMANAGED=1` on the
/// uplinks they leave to systemd-networkd or ifupdown, and those are uplinks all the same.
///
/// Keyed by ifindex, and udev sees only the initial network namespace's links: in any other
/// namespace the same index names another link, so ``forCurrentNamespace()`` gives no
/// database there.
package struct UdevDatabase: Sendable, Hashable {
    /// The directory, `/run/udev/data` on a host; a fixture in tests.
    package var directory: String
    /// Where sysfs is mounted, to tell a real NIC; a fixture in tests.
    package var sysfsRoot: String

    package init(directory: String = "/run/udev/data", sysfsRoot: String = "/sys") {
        self.directory = directory
        self.sysfsRoot = sysfsRoot
    }

    /// The host's database when this process is in the initial network namespace (its
    /// `/proc/self/ns/net` is PID 1's) and the directory exists; `nil` otherwise.
    package static func forCurrentNamespace(directory: String = "/run/udev/data") -> UdevDatabase? {
        var own = stat()
        var initial = stat()
        guard stat("/proc/self/ns/net", &own) == 0, stat("/proc/1/ns/net", &initial) == 0,
            own.st_ino == initial.st_ino, own.st_dev == initial.st_dev, SmallFile.isDirectory(directory)
        else { return nil }
        return UdevDatabase(directory: directory)
    }

    /// Whether `link`'s entry sets `property` to `value`, and the link is a software one. A link
    /// udev has not processed yet has no entry: it counts as not set.
    func marks(_ link: LinkRecord, _ property: String, _ value: String) -> Bool {
        guard let bytes = SmallFile.read("\(directory)/n\(link.index)", limit: 65536) else { return false }
        let wanted = "E:\(property)=\(value)"
        guard String(decoding: bytes, as: UTF8.self).split(separator: "\n").contains(where: { $0 == wanted }) else {
            return false
        }
        // The name as the kernel spells it; one that cannot be a path component is no bus device's.
        let name = link.name
        guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else { return true }
        return !SmallFile.exists("\(sysfsRoot)/class/net/\(name)/device")
    }
}
