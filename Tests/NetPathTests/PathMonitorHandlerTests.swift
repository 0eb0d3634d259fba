// SPDX-License-Identifier: Apache-2.0

import Dispatch
import Foundation
import NetPathTesting
import Synchronization
import TestSupport
import Testing

/// The handler, queue and notification delivery of PathMonitor, driven by the mock source.
struct PathMonitorHandlerTests {
    /// Records handler calls as an async sequence.
    final class Handled: Sendable {
        let paths: AsyncStream<NetworkPath>
        let continuation: AsyncStream<NetworkPath>.Continuation
        let recorder = Recorder<NetworkPath>()

        init(_ monitor: PathMonitor) async {
            (paths, continuation) = AsyncStream.makeStream()
            monitor.pathUpdateHandler = { [continuation] in continuation.yield($0) }
            await recorder.record(paths)
        }
    }

    @Test("start sets currentPath before returning and calls the handler with it, then with each change")
    func startDeliversCurrentThenChanges() async throws {
        let network = MockPathSource(.satisfied(via: .wired("eth0")))
        let monitor = PathMonitor(policy: .default, source: network)
        #expect(monitor.currentPath == nil)
        let handled = await Handled(monitor)
        monitor.start(queue: DispatchQueue(label: "test"))
        #expect(monitor.currentPath == .satisfied(via: .wired("eth0")))
        #expect(try await handled.recorder.next("the current path") == .satisfied(via: .wired("eth0")))

        network.send(.satisfied(via: .wired("eth0")))  // the same path: not delivered again
        network.send(.unsatisfied(.noRoute))
        #expect(try await handled.recorder.next("the change") == .unsatisfied(.noRoute))
        #expect(monitor.currentPath == .unsatisfied(.noRoute))
        #expect(await handled.recorder.all.count == 2)
        monitor.cancel()
    }

    @Test("cancel is idempotent, stops deliveries, and a cancelled monitor starts again")
    func cancelAndRestart() async throws {
        let network = MockPathSource(.unsatisfied())
        let monitor = PathMonitor(policy: .default, source: network)
        let handled = await Handled(monitor)
        let queue = DispatchQueue(label: "test")
        monitor.start(queue: queue)
        monitor.start(queue: queue)  // already started: nothing happens
        #expect(network.subscriberCount == 1)
        _ = try await handled.recorder.next("the first path")

        monitor.cancel()
        monitor.cancel()
        #expect(!monitor.isStarted && monitor.queue == nil)
        #expect(network.subscriberCount == 0)
        network.send(.satisfied(via: .wifi()))
        queue.sync {}  // anything queued before cancel has run
        #expect(await handled.recorder.all.count == 1, "nothing delivered while cancelled")

        monitor.start(queue: queue)
        #expect(monitor.currentPath == .satisfied(via: .wifi()))
        #expect(try await handled.recorder.next("the path at restart") == .satisfied(via: .wifi()))
        network.send(.unsatisfied())
        #expect(try await handled.recorder.next("a change after restart") == .unsatisfied())
        monitor.cancel()
    }

    @Test("each delivery posts pathDidChangeNotification with the path, on the given center")
    func postsNotifications() async throws {
        let center = NotificationCenter()
        let network = MockPathSource(.unsatisfied())
        let monitor = PathMonitor(policy: .default, source: network, notificationCenter: center)
        let (posted, continuation) = AsyncStream<NetworkPath>.makeStream()
        let observer = center.addObserver(forName: PathMonitor.pathDidChangeNotification, object: monitor, queue: nil) {
            note in
            if let path = note.networkPath { continuation.yield(path) }
        }
        defer { center.removeObserver(observer) }
        let recorder = Recorder<NetworkPath>()
        await recorder.record(posted)

        monitor.start(queue: DispatchQueue(label: "test"))
        #expect(try await recorder.next("the first notification") == .unsatisfied())
        network.send(.satisfied(via: .wired()))
        #expect(try await recorder.next("the change's notification") == .satisfied(via: .wired()))
        monitor.cancel()
    }

    @Test("a source that cannot start leaves the monitor stopped with the error; the iteration ends")
    func startFailureIsReported() async throws {
        let network = MockPathSource()
        network.failNextSubscriptions(with: MockPathSource.Failure("no agent"))
        let monitor = PathMonitor(policy: .default, source: network)
        monitor.start(queue: DispatchQueue(label: "test"))
        #expect(!monitor.isStarted && monitor.currentPath == nil)
        #expect((monitor.failure as? MockPathSource.Failure)?.description == "no agent")
        for await _ in monitor.paths { Issue.record("no path expected") }

        network.failNextSubscriptions(with: nil)
        monitor.start(queue: DispatchQueue(label: "test"))
        #expect(monitor.isStarted && monitor.failure == nil && monitor.currentPath != nil)
        monitor.cancel()
    }

    @Test("a source that ends stops the monitor and ends iterations, with the reason")
    func sourceEndIsReported() async throws {
        let network = MockPathSource()
        let monitor = PathMonitor(policy: .default, source: network)
        monitor.start(queue: DispatchQueue(label: "test"))
        let iteration = Task {
            var count = 0
            for await _ in monitor.paths { count += 1 }
            return count
        }
        try await network.waitForSubscribers(2)
        network.finish(throwing: MockPathSource.Failure("agent went away"))
        #expect(await iteration.value == 1)
        #expect(!monitor.isStarted)
        #expect((monitor.failure as? MockPathSource.Failure)?.description == "agent went away")
    }

    @Test("the Apple-style initialisers build the matching policies")
    func initialisersBuildPolicies() {
        #expect(
            PathMonitor(requiredInterfaceType: .wifi, source: MockPathSource()).policy
                == PathPolicy(name: "wifi", require: [.wifi])
        )
        #expect(
            PathMonitor(prohibitedInterfaceTypes: [.cellular, .other], source: MockPathSource()).policy
                == PathPolicy(name: "not-cellular-other", prohibit: [.cellular, .other])
        )
        #expect(PathMonitor(policy: .default, source: MockPathSource()).policy == .default)
    }
}
