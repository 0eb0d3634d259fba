// SPDX-License-Identifier: Apache-2.0

import Foundation

/// A `resolv.conf` for one namespace: `ip netns exec` bind-mounts `/etc/netns/NAME/resolv.conf`
/// over `/etc/resolv.conf` when it exists, so only processes started that way see it.
public struct ResolvConfOverride {
    /// `/etc/netns/NAME`.
    public let directory: URL
    private let createdParent: Bool

    /// Writes `contents` as the namespace's `resolv.conf`.
    public init(namespace: NetworkNamespace, _ contents: String) throws {
        let parent = URL(fileURLWithPath: "/etc/netns")
        createdParent = !FileManager.default.fileExists(atPath: parent.path)
        directory = parent.appendingPathComponent(namespace.name)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try contents.write(to: directory.appendingPathComponent("resolv.conf"), atomically: true, encoding: .utf8)
    }

    /// Removes the file and the directories this made.
    public func remove() {
        try? FileManager.default.removeItem(at: directory)
        // Only a parent this test made, and only when nobody else put anything there meanwhile.
        if createdParent { rmdir(directory.deletingLastPathComponent().path) }
    }
}
