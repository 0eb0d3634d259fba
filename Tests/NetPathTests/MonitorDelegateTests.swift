// SPDX-License-Identifier: Apache-2.0

import Dispatch
import NetPathTesting
import Synchronization
import Testing

/// The delegate style of delivery, for PathMonitor and HostMonitor, driven by the mock source.
struct MonitorDelegateTests {
    /// Records what a monitor told it and in which order relative to the handler.
    final class Listener: PathMonitorDelegate, HostMonitorDelegate {
        let log = Mutex<[String]>([])

        func pathMonitor(_ monitor: PathMonitor, didUpdate path: NetworkPath) {
            log.withLock { $0.append("delegate \(monitor.policy.name) \(path.status)") }
        }

        func hostMonitor(_ monitor: HostMonitor, didUpdate reachability: HostReachability) {
            log.withLock { $0.append("delegate \(monitor.host) \(reachability.status)") }
        }
    }

    @Test("a path monitor's delegate gets each path on the start queue, after the handler")
    func pathDelegate() async throws {
        let network = MockPathSource(.unsatisfied())
        let monitor = PathMonitor(policy: .default, source: network)
        let listener = Listener()
        let queue = DispatchQueue(label: "delegate")
        monitor.pathUpdateHandler = { path in
            dispatchPrecondition(condition: .onQueue(queue))
            listener.log.withLock { $0.append("handler \(path.status)") }
        }
        monitor.delegate = listener
        monitor.start(queue: queue)
        try await network.deliver(.satisfied(via: .wired()))
        #expect(
            listener.log.withLock { $0 } == [
                "handler unsatisfied", "delegate default unsatisfied", "handler satisfied",
                "delegate default satisfied",
            ]
        )
        monitor.cancel()
    }

    @Test("the delegate is held weakly: a released delegate is no longer called")
    func delegateIsWeak() async throws {
        let network = MockPathSource(.unsatisfied())
        let monitor = PathMonitor(policy: .default, source: network)
        var listener: Listener? = Listener()
        weak let released = listener
        monitor.delegate = listener
        monitor.start(queue: DispatchQueue(label: "weak"))
        try await network.deliver(.satisfied(via: .wired()))
        listener = nil
        #expect(released == nil && monitor.delegate == nil, "the monitor did not keep the delegate alive")
        try await network.deliver(.unsatisfied())
        monitor.cancel()
    }

    @Test("a host monitor's delegate gets each answer")
    func hostDelegate() async throws {
        let network = MockPathSource()
        let monitor = HostMonitor(host: "api.example.com", source: network)
        let listener = Listener()
        monitor.delegate = listener
        monitor.start(queue: DispatchQueue(label: "host-delegate"))
        try await network.deliver(HostReachability(host: "api.example.com", status: .unreachable))
        #expect(
            listener.log.withLock { $0 } == [
                "delegate api.example.com unresolved", "delegate api.example.com unreachable",
            ]
        )
        monitor.cancel()
    }
}
