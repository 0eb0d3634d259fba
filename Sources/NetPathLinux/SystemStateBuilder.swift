// SPDX-License-Identifier: Apache-2.0

import Glibc
import NetPathCore

/// Turns `KernelSnapshot`s into the core's ``SystemState``: classifies each link from netlink
/// and sysfs facts, attaches addresses and default routes, DNS servers, and target reachability.
///
/// sysfs is read once per link (and again after a rename), not on every change: the facts it
/// holds do not change while a link exists, and re-reading on the hot path would cost syscalls.
package struct SystemStateBuilder: Sendable {
    /// The classifier, with the configured overrides.
    package var classifier: InterfaceClassifier {
        didSet { classifierGeneration &+= 1 }
    }
    /// Where link facts are read (`/sys`, or a fixture tree in tests).
    package var sysfs: SysfsReader
    /// Where DNS servers come from.
    package var resolvConfPath: String
    /// Follows ``resolvConfPath`` (`SystemObserver` sets it, and its engine reads the events):
    /// with it, an update reads no file and makes no system call for DNS unless the file changed.
    package var resolvConfWatch: FileChangeWatch?
    /// Each link's sysfs facts and its classification by them, as of ``classifierGeneration``.
    private var known: [Int32: Known] = [:]
    /// Each link's interface as last made, and what from.
    private var built: [Int32: Built] = [:]
    /// Moves when the classifier (its overrides) is replaced: each link is classified again.
    private var classifierGeneration: UInt64 = 0

    private struct Known: Sendable {
        var facts: LinkFacts
        var classification: Classification
        var classifierGeneration: UInt64
    }

    /// An interface and what it was made from: while the kernel's records and the classifier
    /// are the same, the same interface is handed on instead of made again. Most changes touch
    /// one link; making every link's interface again on each (a copy of its facts out of
    /// ``known``, two sorts, every field) made every change pay for every link, most of this
    /// function's work on a host with a few dozen links (BENCHMARKS.md, "hosts with many links").
    /// Kept apart from ``known``, so that a link that did not change costs one lookup and no copy
    /// of its facts.
    private struct Built: Sendable {
        var link: LinkRecord
        var addresses: [InterfaceAddress]
        var defaultRoutes: [DefaultRoute]
        var classifierGeneration: UInt64
        var interface: Interface
    }
    private var dns = DNSCache()

    /// The nameservers, re-read only when the file changed: as the watch says, or, without a
    /// watch that can tell (``FileChangeWatch/Reading/unknown``), as the file's identity (inode,
    /// size, modification time) says, at the cost of a stat(2) per update. Even with one, the
    /// identity is looked at with the first update ``lookInterval`` after the last look: for the
    /// changes inotify cannot see (an ancestor directory renamed, a mount over the path).
    private struct DNSCache: Sendable {
        var inode: UInt = 0
        var size = -1
        var seconds = 0
        var nanoseconds = 0
        var servers: [IPAddress] = []
        /// When the identity was last looked at (``MonotonicClock/nanoseconds``); 0: never.
        var looked: UInt64 = 0

        static let lookInterval: UInt64 = 10_000_000_000

        mutating func servers(at path: String, watch: FileChangeWatch?) -> [IPAddress] {
            var changed = false
            if let watch, watch.path == path {
                switch watch.check() {
                case .unchanged:
                    if looked != 0 && MonotonicClock.nanoseconds &- looked < Self.lookInterval { return servers }
                case .changed: changed = true
                case .unknown: break
                }
            }
            looked = MonotonicClock.nanoseconds
            var info = stat()
            guard stat(path, &info) == 0 else {
                let previous = inode
                self = DNSCache()
                looked = MonotonicClock.nanoseconds
                // Gone unseen: what was on the way to it may be gone too.
                if previous != 0 && !changed { watch?.rearm() }
                return []
            }
            let key = (UInt(info.st_ino), Int(info.st_size), Int(info.st_mtim.tv_sec), Int(info.st_mtim.tv_nsec))
            if changed || (inode, size, seconds, nanoseconds) != key {
                (inode, size, seconds, nanoseconds) = key
                servers = ResolvConf.nameservers(path: path)
                // Changed unseen: what was missing on the way to the file may be there now.
                if !changed { watch?.rearm() }
            }
            return servers
        }
    }

    /// A builder with these sources; the defaults read the host's `/sys` and `/etc/resolv.conf`.
    package init(
        classifier: InterfaceClassifier = InterfaceClassifier(),
        sysfs: SysfsReader = SysfsReader(),
        resolvConfPath: String = "/etc/resolv.conf"
    ) {
        self.classifier = classifier
        self.sysfs = sysfs
        self.resolvConfPath = resolvConfPath
    }

    /// The system state for `snapshot`, with `targets` (from `TargetResolver`) attached.
    package mutating func state(from snapshot: KernelSnapshot, targets: [String: SystemState.TargetReachability] = [:])
        -> SystemState
    {
        var interfaces: [Interface] = []
        interfaces.reserveCapacity(snapshot.links.count)
        // Whether the links come in strictly ascending index order, as the engine lists them:
        // then their indices are distinct, and counting tells whether any link is gone.
        var ascending = true
        var previousIndex: Int32?
        for link in snapshot.links {
            if let previousIndex, previousIndex >= link.index { ascending = false }
            previousIndex = link.index
            let addresses = snapshot.addresses[link.index] ?? []
            let defaultRoutes = snapshot.defaultRoutes[link.index] ?? []
            if let kept = built[link.index], kept.classifierGeneration == classifierGeneration, kept.link == link,
                kept.addresses == addresses, kept.defaultRoutes == defaultRoutes
            {
                interfaces.append(kept.interface)
                continue
            }
            let entry: Known
            if var cached = known[link.index], cached.facts.name == link.name, cached.facts.linkKind == link.kind {
                // The same facts and overrides give the same classification: not redone per
                // update, so that matching the override globs is not on every change's way to
                // monitor --json's line.
                if cached.classifierGeneration != classifierGeneration {
                    cached.classification = classifier.classify(cached.facts)
                    cached.classifierGeneration = classifierGeneration
                    known[link.index] = cached
                }
                entry = cached
            } else {
                let facts = sysfs.facts(name: link.name, arpType: link.arpType, linkKind: link.kind)
                entry = Known(
                    facts: facts,
                    classification: classifier.classify(facts),
                    classifierGeneration: classifierGeneration
                )
                known[link.index] = entry
            }
            let classification = entry.classification
            let interface = Interface(
                index: link.index,
                name: link.name,
                type: classification.type,
                kind: classification.kind,
                driver: classification.driver,
                adminUp: link.adminUp,
                carrier: link.carrier,
                operState: link.operationalState,
                mtu: link.mtu,
                mac: link.mac,
                isMetered: classification.isMetered,
                meteredReason: classification.meteredReason,
                isConstrained: classification.isConstrained,
                addresses: addresses,
                defaultRoutes: defaultRoutes,
                classifiedBy: classification.classifiedBy
            )
            built[link.index] = Built(
                link: link,
                addresses: addresses,
                defaultRoutes: defaultRoutes,
                classifierGeneration: classifierGeneration,
                interface: interface
            )
            interfaces.append(interface)
        }
        // Links that are gone leave `known` and `built`. Kept in place otherwise: a dictionary
        // made anew on every change, and the old one freed, cost more than the rest of this
        // function. (Every link listed has an entry in both, so counting tells.)
        if !ascending || known.count != interfaces.count || built.count != interfaces.count {
            let present = Set(snapshot.links.map(\.index))
            known = known.filter { present.contains($0.key) }
            built = built.filter { present.contains($0.key) }
        }
        return SystemState(
            interfaces: interfaces,
            dnsServers: dns.servers(at: resolvConfPath, watch: resolvConfWatch),
            targets: targets,
            kernelRoutes: snapshot.kernelRoutes
        )
    }
}
