// SPDX-License-Identifier: Apache-2.0

import Dispatch
import Foundation
import NetPathTesting
import Synchronization
import Testing

/// Application code, as a user of the library would write it: backups run only on a satisfied,
/// unmetered path. It takes its monitor as a parameter, so tests hand it a mock.
final class BackupScheduler: Sendable {
    enum Decision: Equatable, Sendable {
        case run(via: String)
        case pause(String)
    }

    private let monitor: PathMonitor
    private let decisions = Mutex<[Decision]>([])
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(monitor: PathMonitor) { self.monitor = monitor }

    func start() {
        let task = Task { [monitor] in
            for await path in monitor.paths { self.decide(path) }
        }
        self.task.withLock { $0 = task }
    }

    func stop() { task.withLock { $0 }?.cancel() }

    var history: [Decision] { decisions.withLock { $0 } }

    private func decide(_ path: NetworkPath) {
        let decision: Decision =
            switch (path.status, path.isExpensive) {
            case (.satisfied, false): .run(via: path.primary?.name ?? "?")
            case (.satisfied, true): .pause("metered")
            default: .pause("offline")
            }
        decisions.withLock { $0.append(decision) }
    }
}

/// A consumer's unit tests, driven by `MockPathSource`: no network, no root, no namespace.
struct MockPathSourceTests {
    @Test("a consumer pauses backups on a metered path and resumes on wired, without a network")
    func consumerFollowsScriptedPaths() async throws {
        let network = MockPathSource(.satisfied(via: .wired("eth0")))
        let scheduler = BackupScheduler(monitor: PathMonitor(policy: .default, source: network))
        scheduler.start()
        try await network.waitForSubscribers(1)
        // The initial path is not sent: it is the subscription's first value. Wait for the
        // consumer to have taken it by delivering a repeat, which it drops.
        try await network.deliver(.satisfied(via: .wired("eth0")))
        #expect(scheduler.history == [.run(via: "eth0")])

        // Each delivery returns once the consumer's loop has handled the path: no polling.
        try await network.deliver(.satisfied(via: .cellular("wwan0")))
        #expect(scheduler.history.last == .pause("metered"))
        try await network.deliver(.unsatisfied(.noInterface))
        try await network.deliver(.unsatisfied(.noInterface))  // a repeat: not a new decision
        #expect(scheduler.history.last == .pause("offline"))
        try await network.deliver(.satisfied(via: .wired("eth0"), .cellular("wwan0")))
        #expect(scheduler.history == [.run(via: "eth0"), .pause("metered"), .pause("offline"), .run(via: "eth0")])

        scheduler.stop()
        try await waitUntil { network.subscriberCount == 0 }
        #expect(network.subscribedPolicies == [.default])
    }

    @Test("deliver returns only after a handler that is still running has returned")
    func deliverWaitsForTheHandler() async throws {
        let network = MockPathSource(.unsatisfied())
        let monitor = PathMonitor(policy: .default, source: network)
        let handled = Mutex<[NetworkPath.Status]>([])
        monitor.pathUpdateHandler = { path in
            // Slow on purpose: delivery must wait for this to return, not for the queue to take it.
            usleep(100_000)
            handled.withLock { $0.append(path.status) }
        }
        monitor.start(queue: DispatchQueue(label: "slow"))
        try await network.deliver(.satisfied(via: .wifi()))
        #expect(handled.withLock { $0 } == [.unsatisfied, .satisfied])
        monitor.cancel()
    }

    @Test("waitForDelivery fails, naming what is unhandled, when an iteration stops asking")
    func waitForDeliveryTimesOut() async throws {
        let network = MockPathSource(.unsatisfied())
        var paths = PathMonitor(policy: .default, source: network).paths.makeAsyncIterator()
        #expect(await paths.next()?.status == .unsatisfied)
        network.send(.satisfied(via: .wired()))  // buffered: nobody asks for it
        await #expect(
            throws: MockPathSource.Failure("timed out after 0.1 seconds waiting for 1 value(s) to be handled")
        ) {
            try await network.waitForDelivery(timeout: .milliseconds(100))
        }
        #expect(await paths.next()?.status == .satisfied, "it was there, unasked for")
    }

    @Test("a scripted system state is evaluated for each monitor's own policy")
    func stateIsEvaluatedPerPolicy() async throws {
        let eth0 = Interface(
            index: 2,
            name: "eth0",
            type: .wired,
            addresses: ["192.0.2.10/24"],
            defaultRoutes: [.init(via: "192.0.2.1", metric: 100)]
        )
        let wwan0 = Interface(
            index: 3,
            name: "wwan0",
            type: .cellular,
            isMetered: true,
            addresses: ["10.64.0.2/30"],
            defaultRoutes: [.init(via: "10.64.0.1", metric: 50)]
        )
        let network = MockPathSource(state: SystemState(interfaces: [eth0, wwan0]))
        let any = PathMonitor(policy: .default, source: network)
        let noCellular = PathMonitor(prohibitedInterfaceTypes: [.cellular], source: network)

        var anyPaths = any.paths.makeAsyncIterator()
        var wiredPaths = noCellular.paths.makeAsyncIterator()
        #expect(await anyPaths.next()?.primary?.name == "wwan0", "lowest metric wins with the default policy")
        #expect(await wiredPaths.next()?.primary?.name == "eth0")

        var unplugged = eth0
        unplugged.carrier = false
        network.send(SystemState(interfaces: [unplugged, wwan0]))
        #expect(await wiredPaths.next()?.status == .unsatisfied)
        #expect(await anyPaths.next()?.availableInterfaces.map(\.name) == ["wwan0"])
        network.send(SystemState(interfaces: [eth0]))
        #expect(await anyPaths.next()?.primary?.name == "eth0")
        #expect(await wiredPaths.next()?.primary?.name == "eth0")
    }

    @Test("host reachability is scripted per host; unknown hosts are unresolved")
    func reachabilityIsScripted() async throws {
        let network = MockPathSource()
        let api = HostMonitor(host: "api.example.com", source: network)
        var answers = api.updates.makeAsyncIterator()
        #expect(await answers.next()?.status == .unresolved)

        let via = NetworkPath.PathInterface.cellular("wwan0")
        network.send(
            HostReachability(host: "api.example.com", status: .reachable, address: "203.0.113.7", interface: via)
        )
        network.send(HostReachability(host: "other.example.com", status: .unreachable))
        let reachable = await answers.next()
        #expect(
            reachable?.isReachable == true && reachable?.isExpensive == true && reachable?.interfaceType == .cellular
        )
        #expect(network.subscribedHosts == ["api.example.com"])
    }

    func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(5)
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("condition not met within 5 s")
                return
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}
