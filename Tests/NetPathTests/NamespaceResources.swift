// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathLinux
import TestSupport

/// What this test process holds for one network namespace: the engine threads that follow it
/// and the netlink sockets opened there. A kernel path source in a namespace runs exactly one
/// engine thread for it and opens exactly two netlink sockets there, so these counts are exact
/// even while other tests (in other namespaces) start and stop engines of their own.
struct NamespaceResources: Equatable, CustomStringConvertible {
    /// Engine threads following the test's namespace (``NetlinkEngine/threads(following:)``: the
    /// threads themselves stay in the process's own namespace, so `/proc` cannot count them).
    var threads: Int
    /// Netlink sockets of the test's namespace that `/proc/self/fd` holds: each once, however
    /// many descriptors hold it (the engine's filter keeps a second one of its event socket).
    var netlinkSockets: Int

    var description: String { "\(threads) thread(s), \(netlinkSockets) netlink socket(s)" }

    static let none = NamespaceResources(threads: 0, netlinkSockets: 0)

    /// Counts them now: the threads before and after the sockets, so that an engine starting or
    /// stopping while the sockets are counted (an `ip netns exec`, ~10 ms) is counted again
    /// rather than reported half before and half after (0 threads and 2 sockets, say). After
    /// five changing counts the last sample stands, mixed or not: the waits try again anyway.
    static func of(_ namespace: NetworkNamespace) throws -> NamespaceResources {
        var threads = NetlinkEngine.threads(following: namespace.name)
        var sockets = try netlinkSockets(namespace)
        // A few tries; should the count keep changing, the last sample is what the waits see.
        for _ in 0..<5 {
            let after = NetlinkEngine.threads(following: namespace.name)
            if after == threads { break }
            threads = after
            sockets = try netlinkSockets(namespace)
        }
        return NamespaceResources(threads: threads, netlinkSockets: sockets)
    }

    /// The netlink sockets of `namespace` that entries of `/proc/self/fd` hold.
    private static func netlinkSockets(_ namespace: NetworkNamespace) throws -> Int {
        var info = stat()
        guard stat("/run/netns/\(namespace.name)", &info) == 0 else {
            throw TestFailure("no /run/netns/\(namespace.name)")
        }
        let manager = FileManager.default

        // /proc/net/netlink read from inside the namespace lists that namespace's netlink sockets.
        let table = try Command.check(["ip", "netns", "exec", namespace.name, "cat", "/proc/net/netlink"])
        let inodes = Set(
            table.split(separator: "\n").dropFirst().compactMap { $0.split(separator: " ").last.map(String.init) }
        )
        let fds = try manager.contentsOfDirectory(atPath: "/proc/self/fd")
        let held = fds.compactMap { try? manager.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)") }
            .filter { $0.hasPrefix("socket:[") && inodes.contains(String($0.dropFirst(8).dropLast())) }
        return Set(held).count
    }

    /// Threads of this process that are inside `namespace` (`/proc/self/task/*/ns/net`): none
    /// should be, since an engine opens its sockets there from a thread that then ends, and any
    /// thread inside would pass the namespace on to every thread it starts.
    static func threadsInside(_ namespace: NetworkNamespace) throws -> Int {
        var info = stat()
        guard stat("/run/netns/\(namespace.name)", &info) == 0 else {
            throw TestFailure("no /run/netns/\(namespace.name)")
        }
        let link = "net:[\(info.st_ino)]"
        let manager = FileManager.default
        return try manager.contentsOfDirectory(atPath: "/proc/self/task").filter {
            (try? manager.destinationOfSymbolicLink(atPath: "/proc/self/task/\($0)/ns/net")) == link
        }.count
    }

    /// Polls (every 20 ms) until the namespace's resources equal `expected`, or fails at the deadline.
    ///
    /// The default deadline is generous because what is awaited runs as tasks: under `make
    /// test`'s parallel phase hundreds of tests share Swift's two pool threads, and many block
    /// them in `ip` commands, so an engine's start or stop can wait seconds for a thread (one CI
    /// run saw an iteration's engine start only after 10 s). A leak still fails, only later.
    static func waitUntil(
        _ namespace: NetworkNamespace,
        are expected: NamespaceResources,
        timeout: Duration = .seconds(30)
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        var seen = try of(namespace)
        while seen != expected {
            guard ContinuousClock.now < deadline else {
                throw TestFailure("after \(timeout): \(seen) in \(namespace.name), expected \(expected)")
            }
            try await Task.sleep(for: .milliseconds(20))
            seen = try of(namespace)
        }
    }
}

/// A namespace with one uplink, `up0`, whose far end is in a second namespace so the test can
/// take its carrier away: `up0` 192.0.2.10/24, default route via 192.0.2.1.
struct Uplink {
    let namespace: NetworkNamespace
    let peer: NetworkNamespace

    static func make(_ namespace: NetworkNamespace, peer: NetworkNamespace) throws -> Uplink {
        try namespace.addVeth("up0", peer: "up0p", in: peer)
        try namespace.ip("addr", "add", "192.0.2.10/24", "dev", "up0")
        try namespace.ip("link", "set", "up0", "up")
        try peer.ip("link", "set", "up0p", "up")
        try namespace.ip("route", "add", "default", "via", "192.0.2.1", "dev", "up0")
        return Uplink(namespace: namespace, peer: peer)
    }

    /// Takes the carrier away (the far end goes down) or gives it back.
    func setCarrier(_ up: Bool) throws {
        try peer.ip("link", "set", "up0p", up ? "up" : "down")
    }
}
