// SPDX-License-Identifier: Apache-2.0

import Dispatch
import NetPathLinux
import NetPathTesting
import Synchronization
import TestSupport
import Testing

/// Querying without listening: a host's reachability now, with no monitor started.
struct HostMonitorQueryTests {
    @Test("a one-shot query answers for a host without leaving a subscription behind")
    func queryOnTheMock() async throws {
        let network = MockPathSource()
        let via = NetworkPath.PathInterface.wired("eth0")
        network.send(HostReachability(host: "192.0.2.80", status: .reachable, address: "192.0.2.80", interface: via))
        let answer = try await HostMonitor.reachability(of: "192.0.2.80", source: network)
        #expect(answer.isReachable && answer.interface == via)
        #expect(try await HostMonitor.reachability(of: "nowhere.example", source: network).status == .unresolved)
        #expect(network.subscribedHosts == ["192.0.2.80", "nowhere.example"])
        #expect(network.subscriberCount == 0, "nothing keeps following the host")
    }

    /// A source whose host name is being looked up: its initial answer says so, and the test
    /// decides what follows.
    final class LookingUpSource: ReachabilitySource {
        let sinks = Mutex<[SourceSink<HostReachability>]>([])
        let cancelled = Mutex(0)
        let subscribed = DispatchSemaphore(value: 0)
        /// When the query subscribed and cancelled, on its Dispatch threads: unlike the test's
        /// task, they do not wait for the cooperative pool, busy in a parallel run.
        let times = Mutex<(subscribed: ContinuousClock.Instant?, cancelled: ContinuousClock.Instant?)>((nil, nil))

        func subscribe(
            toHost host: String,
            sink: SourceSink<HostReachability>
        ) throws -> SourceSubscription<HostReachability> {
            sinks.withLock { $0.append(sink) }
            times.withLock { $0.subscribed = .now }
            subscribed.signal()
            let initial = HostReachability(host: host, status: .unresolved, unresolvedReason: .lookingUp)
            return SourceSubscription(initialValue: initial) { [self] in
                times.withLock { $0.cancelled = .now }
                cancelled.withLock { $0 += 1 }
            }
        }

        /// Waits (off the cooperative pool) until a query has subscribed, then sends it `value`.
        func send(_ value: HostReachability) async {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                DispatchQueue.global().async { [self] in
                    // Passed on: every later send also finds the query subscribed.
                    subscribed.wait()
                    subscribed.signal()
                    for sink in sinks.withLock({ $0 }) { sink.yield(value) }
                    done.resume()
                }
            }
        }
    }

    @Test("a one-shot query waits for a name's lookup to answer, then cancels its subscription")
    func queryWaitsForTheLookup() async throws {
        let source = LookingUpSource()
        let reachable = HostReachability(host: "api.example", status: .reachable, address: "192.0.2.80")
        async let answer = HostMonitor.reachability(of: "api.example", source: source, timeout: .seconds(30))
        // Still looking up: not an answer, so the query waits for the next value.
        await source.send(HostReachability(host: "api.example", status: .unresolved, unresolvedReason: .lookingUp))
        await source.send(reachable)
        #expect(try await answer == reachable)
        #expect(source.cancelled.withLock { $0 } == 1)
    }

    @Test(
        "a one-shot query whose lookup does not answer returns 'looking up' after its timeout",
        .timeLimit(.minutes(1))
    )
    func queryTimesOut() async throws {
        let source = LookingUpSource()
        let answer = try await HostMonitor.reachability(of: "api.example", source: source, timeout: .milliseconds(200))
        #expect(answer.status == .unresolved && answer.unresolvedReason == .lookingUp)
        #expect(source.cancelled.withLock { $0 } == 1)
        let (subscribed, cancelled) = source.times.withLock { $0 }
        if let subscribed, let cancelled {
            let waited = cancelled - subscribed
            #expect(waited >= .milliseconds(200) && waited < .seconds(5), "gave up after \(waited)")
        } else {
            Issue.record("not subscribed and cancelled: \(source.times.withLock { $0 })")
        }
    }

    @Test("a one-shot query ends with the source's error when the source ends while looking up")
    func queryEndsWithTheSourceError() async throws {
        struct Gone: Error, Equatable {}
        let source = LookingUpSource()
        async let answer = HostMonitor.reachability(of: "api.example", source: source, timeout: .seconds(30))
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                source.subscribed.wait()
                source.sinks.withLock { $0 }.forEach { $0.finish(throwing: Gone()) }
                done.resume()
            }
        }
        do {
            let value = try await answer
            Issue.record("answered \(value) instead of throwing")
        } catch {
            #expect(error is Gone, "\(error)")
        }
    }

    @Test(
        "a one-shot query answers from the kernel's routing table and stops the engine again",
        .enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces")
    )
    func queryOnTheKernel() async throws {
        try await NetworkNamespace.with(["query", "peer"]) { namespaces in
            let uplinks = try HostMonitorTests.TwoUplinks(namespaces[0], peer: namespaces[1])
            try uplinks.namespace.ip("route", "add", "203.0.113.0/24", "via", "198.51.100.1", "dev", "b0")
            let source = try uplinks.source()
            let answer = try await HostMonitor.reachability(of: "203.0.113.7", source: source)
            #expect(answer.status == .reachable && answer.interface?.name == "b0" && answer.isExpensive)
            #expect(answer.gateway == "198.51.100.1")
            let nowhere = try await HostMonitor.reachability(of: "233.252.0.1", source: source)
            #expect(nowhere.status == .unreachable)
            #expect(!source.isRunning && source.subscriberCount == 0, "no engine, no subscription left")
        }
    }
}
