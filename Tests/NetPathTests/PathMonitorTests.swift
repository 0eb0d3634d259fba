// SPDX-License-Identifier: Apache-2.0

import Dispatch
import Foundation
import NetPath
import Synchronization
import TestSupport
import Testing

/// PathMonitor on the real kernel, in namespaces the tests create and delete.
@Suite(.enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct PathMonitorTests {
    static func source(in namespace: NetworkNamespace) -> KernelPathSource {
        KernelPathSource(options: .init(namespace: namespace.name))
    }

    static func satisfied(_ path: NetworkPath) -> Bool { path.status == .satisfied && path.primary?.name == "up0" }
    static func unsatisfied(_ path: NetworkPath) -> Bool { path.status == .unsatisfied }

    @Test("iterating paths yields the current path at once, then a veth toggle's changes in order")
    func iterationFollowsToggle() async throws {
        try await NetworkNamespace.with(["mon", "peer"]) { namespaces in
            let uplink = try Uplink.make(namespaces[0], peer: namespaces[1])
            let monitor = PathMonitor(policy: .default, source: Self.source(in: uplink.namespace))
            let recorder = Recorder<NetworkPath>()
            await recorder.record(monitor.paths)
            defer { Task { await recorder.stop() } }

            // Nothing changes in the namespace until the first path is in: it cannot have waited
            // for a change. (No wall-clock bound here: under a full parallel test run the
            // cooperative pool can take seconds to schedule the recording task. The synchronous
            // start is timed in handlerRestartsAfterCancel.)
            let first = try await recorder.next("the initial path, with no change in the namespace")
            #expect(Self.satisfied(first), "\(first)")
            #expect(first.supportsIPv4 && first.gateways == ["192.0.2.1"])

            try uplink.setCarrier(false)
            let down = try await recorder.next("unsatisfied after carrier loss", where: Self.unsatisfied)
            #expect(down.unsatisfiedReason == .noInterface)
            try uplink.setCarrier(true)
            _ = try await recorder.next("satisfied again after carrier returns", where: Self.satisfied)

            let seen = await recorder.all.map(\.status)
            #expect(seen == [.satisfied, .unsatisfied, .satisfied], "every path, in order, no duplicates")
            #expect(monitor.currentPath.map(Self.satisfied) == true)
            await recorder.stop()
            try await NamespaceResources.waitUntil(uplink.namespace, are: .none)
        }
    }

    @Test("two concurrent iterations both receive every change, over one netlink subscription")
    func concurrentIterationsShareOneSubscription() async throws {
        try await NetworkNamespace.with(["two", "peer"]) { namespaces in
            let uplink = try Uplink.make(namespaces[0], peer: namespaces[1])
            let source = Self.source(in: uplink.namespace)
            let monitor = PathMonitor(policy: .default, source: source)
            let other = PathMonitor(requiredInterfaceType: .other, source: source)
            let recorders = [Recorder<NetworkPath>(), Recorder<NetworkPath>()]
            await recorders[0].record(monitor.paths)
            await recorders[1].record(other.paths)
            for recorder in recorders { _ = try await recorder.next("the initial path", where: Self.satisfied) }
            #expect(source.subscriberCount == 2)
            #expect(try NamespaceResources.of(uplink.namespace) == NamespaceResources(threads: 1, netlinkSockets: 2))
            #expect(
                try NamespaceResources.threadsInside(uplink.namespace) == 0,
                "a thread of ours entered the namespace"
            )

            for _ in 0..<2 {
                try uplink.setCarrier(false)
                for recorder in recorders { _ = try await recorder.next("unsatisfied", where: Self.unsatisfied) }
                try uplink.setCarrier(true)
                for recorder in recorders { _ = try await recorder.next("satisfied", where: Self.satisfied) }
            }
            for recorder in recorders {
                #expect(
                    await recorder.all.map(\.status) == [
                        .satisfied, .unsatisfied, .satisfied, .unsatisfied, .satisfied,
                    ]
                )
                await recorder.stop()
            }
            #expect(await recorders[1].all.first?.policy == "other")
            try await NamespaceResources.waitUntil(uplink.namespace, are: .none)
        }
    }

    @Test("cancelling the iteration closes the netlink subscription: no thread or socket left behind")
    func cancellingReleasesEverything() async throws {
        try await NetworkNamespace.with(["cancel", "peer"]) { namespaces in
            let uplink = try Uplink.make(namespaces[0], peer: namespaces[1])
            let source = Self.source(in: uplink.namespace)
            let before = try NamespaceResources.of(uplink.namespace)
            #expect(before == .none)

            let first = Mutex<NetworkPath?>(nil)
            let iteration = Task {
                for await path in PathMonitor(policy: .default, source: source).paths {
                    first.withLock { $0 = $0 ?? path }
                }
            }
            try await NamespaceResources.waitUntil(
                uplink.namespace,
                are: NamespaceResources(threads: 1, netlinkSockets: 2)
            )
            #expect(source.isRunning)
            let deadline = ContinuousClock.now + .seconds(30)
            while first.withLock({ $0 }) == nil && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(5))
            }

            iteration.cancel()
            await iteration.value
            try await NamespaceResources.waitUntil(uplink.namespace, are: before)
            #expect(!source.isRunning)
            #expect(source.subscriberCount == 0)
            #expect(first.withLock { $0 }.map(Self.satisfied) == true)

            // A new iteration starts a new engine, and lets it go again.
            var again = PathMonitor(policy: .default, source: source).paths.makeAsyncIterator()
            #expect(await again.next().map(Self.satisfied) == true)
            #expect(try NamespaceResources.of(uplink.namespace) == NamespaceResources(threads: 1, netlinkSockets: 2))
            _ = consume again
            try await NamespaceResources.waitUntil(uplink.namespace, are: before)
        }
    }

    @Test("leaving the loop early also ends the subscription")
    func breakingOutReleases() async throws {
        try await NetworkNamespace.with("break") { namespace in
            let source = Self.source(in: namespace)
            for await path in PathMonitor(policy: .default, source: source).paths {
                #expect(path.status == .unsatisfied)
                break
            }
            try await NamespaceResources.waitUntil(namespace, are: .none)
            #expect(source.subscriberCount == 0)
        }
    }

    @Test("start(queue:) sets currentPath before it returns; a cancelled monitor restarts")
    func handlerRestartsAfterCancel() async throws {
        try await NetworkNamespace.with(["restart", "peer"]) { namespaces in
            let uplink = try Uplink.make(namespaces[0], peer: namespaces[1])
            let source = Self.source(in: uplink.namespace)
            let monitor = PathMonitor(policy: .default, source: source)
            let (paths, continuation) = AsyncStream<NetworkPath>.makeStream()
            monitor.pathUpdateHandler = { continuation.yield($0) }
            let recorder = Recorder<NetworkPath>()
            await recorder.record(paths)

            let started = ContinuousClock.now
            monitor.start(queue: DispatchQueue(label: "restart"))
            let took = ContinuousClock.now - started
            #expect(monitor.currentPath.map(Self.satisfied) == true, "known as start returns")
            #expect(took < .seconds(2), "start (engine thread, netlink dump, first evaluation) took \(took)")
            _ = try await recorder.next("the handler's first path", where: Self.satisfied)

            monitor.cancel()
            monitor.cancel()
            #expect(!monitor.isStarted)
            try await NamespaceResources.waitUntil(uplink.namespace, are: .none)

            // While cancelled, the path changes: the restarted monitor starts from the new one.
            try uplink.setCarrier(false)
            monitor.start(queue: DispatchQueue(label: "restart-again"))
            #expect(monitor.isStarted)
            #expect(monitor.currentPath.map(Self.unsatisfied) == true)
            _ = try await recorder.next("the restarted monitor's first path", where: Self.unsatisfied)
            try uplink.setCarrier(true)
            _ = try await recorder.next("a change after the restart", where: Self.satisfied)
            #expect(await recorder.all.map(\.status) == [.satisfied, .unsatisfied, .satisfied])

            monitor.cancel()
            try await NamespaceResources.waitUntil(uplink.namespace, are: .none)
            continuation.finish()
        }
    }

}

/// The process-wide monitor (the test process's own namespace; no root needed).
struct SharedPathMonitorTests {
    @Test("PathMonitor.shared starts on first use, and its cancel() leaves it running")
    func sharedIgnoresCancel() async throws {
        let shared = PathMonitor.shared
        #expect(shared.isStarted)
        #expect(shared.currentPath != nil)
        #expect(KernelPathSource.shared.isRunning)
        shared.cancel()
        shared.cancel()
        #expect(shared.isStarted)
        #expect(shared.currentPath != nil)
        #expect(KernelPathSource.shared.isRunning)
        #expect(PathMonitor.shared === shared)
    }
}
