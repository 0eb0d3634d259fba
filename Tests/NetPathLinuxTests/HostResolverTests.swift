// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathCore
import NetPathLinux
import Synchronization
import TestSupport
import Testing

/// Host names resolved off the caller's thread: answers, failures, lifetimes and refreshes, with
/// a scripted lookup in place of `getaddrinfo`.
@Suite("HostResolver")
struct HostResolverTests {
    /// A lookup the test scripts: each call takes the next result for its name, waiting (on the
    /// resolver's thread) until the test provides one. Every call is announced on `calls`.
    final class ScriptedLookup: Sendable {
        private let results = Mutex<[String: [Result<[IPAddress], HostLookupError>]]>([:])
        /// When each call began and returned, on the resolver's thread, in call order.
        private let times = Mutex<[(called: ContinuousClock.Instant, returned: ContinuousClock.Instant?)]>([])
        private let semaphores = Mutex<[String: DispatchSemaphore]>([:])
        let calls = Recorder<String>()
        private let callStream: AsyncStream<String>.Continuation
        private let callSequence: AsyncStream<String>

        init() {
            (callSequence, callStream) = AsyncStream.makeStream(of: String.self)
        }

        func start() async { await calls.record(callSequence) }

        private func semaphore(_ host: String) -> DispatchSemaphore {
            semaphores.withLock { semaphores in
                if let semaphore = semaphores[host] { return semaphore }
                let semaphore = DispatchSemaphore(value: 0)
                semaphores[host] = semaphore
                return semaphore
            }
        }

        /// Lets one pending or future call for `host` return `result`.
        func answer(_ host: String, _ result: Result<[IPAddress], HostLookupError>) {
            results.withLock { $0[host, default: []].append(result) }
            semaphore(host).signal()
        }

        var lookup: HostResolver.Lookup {
            { [self] host in
                let index = times.withLock { times in
                    times.append((ContinuousClock.now, nil))
                    return times.count - 1
                }
                callStream.yield(host)
                semaphore(host).wait()
                let result = results.withLock { $0[host]!.removeFirst() }
                times.withLock { $0[index].returned = ContinuousClock.now }
                return result
            }
        }

        /// How long the resolver waited between call `index`'s return and the next call.
        func pause(after index: Int) -> Duration? {
            times.withLock { times in
                guard index + 1 < times.count, let returned = times[index].returned else { return nil }
                return times[index + 1].called - returned
            }
        }
    }

    static let failure = HostLookupError(
        host: "vpn.example.org",
        code: -3,
        reason: "Temporary failure in name resolution"
    )

    /// A resolver on `lookup`, whose change notifications arrive on the returned recorder.
    static func resolver(
        _ lookup: ScriptedLookup,
        answers: Duration = .seconds(60),
        failures: Duration = .seconds(10)
    ) async -> (HostResolver, Recorder<Void>) {
        let (changes, changed) = AsyncStream.makeStream(of: Void.self)
        let recorder = Recorder<Void>()
        await recorder.record(changes)
        await lookup.start()
        let resolver = HostResolver(
            options: .init(answerLifetime: answers, failureLifetime: failures),
            lookup: lookup.lookup
        ) { changed.yield() }
        return (resolver, recorder)
    }

    @Test("the answer is pending at once while the lookup blocks; the result arrives with a change notice")
    func pendingThenResolved() async throws {
        let lookup = ScriptedLookup()
        let (resolver, changes) = await Self.resolver(lookup)
        defer { resolver.stop() }
        resolver.follow(["vpn.example.org", "192.0.2.9"])
        _ = try await lookup.calls.next("the lookup of vpn.example.org") { $0 == "vpn.example.org" }
        let asked = ContinuousClock.now
        #expect(resolver.answer(for: "vpn.example.org") == .pending)
        // The lookup waits until the test answers: any wait here would never end.
        #expect(ContinuousClock.now - asked < .seconds(1), "answer(for:) must not wait for the lookup")
        #expect(resolver.answer(for: "192.0.2.9") == .resolved(["192.0.2.9"]), "a literal needs no lookup")

        lookup.answer("vpn.example.org", .success(["203.0.113.7"]))
        _ = try await changes.next("the change notice")
        #expect(resolver.answer(for: "vpn.example.org") == .resolved(["203.0.113.7"]))
        #expect(await lookup.calls.all == ["vpn.example.org"], "literals are never looked up")
    }

    @Test("a failure is the answer until a retry after the failure lifetime succeeds")
    func failureThenRetry() async throws {
        let lookup = ScriptedLookup()
        let (resolver, changes) = await Self.resolver(lookup, failures: .milliseconds(200))
        defer { resolver.stop() }
        resolver.follow(["vpn.example.org"])
        lookup.answer("vpn.example.org", .failure(Self.failure))
        _ = try await changes.next("the failure's change notice")
        #expect(resolver.answer(for: "vpn.example.org") == .failed(Self.failure))
        _ = try await lookup.calls.next("the first lookup") { $0 == "vpn.example.org" }
        _ = try await lookup.calls.next("the retry", timeout: .seconds(5)) { $0 == "vpn.example.org" }
        let pause = try #require(lookup.pause(after: 0))
        #expect(pause >= .milliseconds(190), "retried \(pause) after the failure, before its lifetime")
        lookup.answer("vpn.example.org", .success(["203.0.113.7"]))
        _ = try await changes.next("the answer's change notice")
        #expect(resolver.answer(for: "vpn.example.org") == .resolved(["203.0.113.7"]))
    }

    @Test(
        "refresh looks up again at once; a failed refresh keeps an answer that has not expired; the same answer notifies nothing"
    )
    func refreshKeepsAValidAnswer() async throws {
        let lookup = ScriptedLookup()
        let (resolver, changes) = await Self.resolver(lookup)
        defer { resolver.stop() }
        resolver.follow(["vpn.example.org"])
        lookup.answer("vpn.example.org", .success(["203.0.113.7"]))
        _ = try await changes.next("the first answer")
        _ = try await lookup.calls.next("the first lookup")

        resolver.refresh()
        _ = try await lookup.calls.next("the refresh's lookup")
        lookup.answer("vpn.example.org", .failure(Self.failure))
        resolver.refresh()
        _ = try await lookup.calls.next("the second refresh's lookup (after the failed one returned)")
        #expect(resolver.answer(for: "vpn.example.org") == .resolved(["203.0.113.7"]))
        lookup.answer("vpn.example.org", .success(["203.0.113.7"]))
        resolver.refresh()
        _ = try await lookup.calls.next("a third lookup: the second one has returned")
        #expect(await changes.all.count == 1, "neither the kept answer nor the same one again is a change")
        lookup.answer("vpn.example.org", .success(["203.0.113.8"]))
        _ = try await changes.next("the new answer's change notice")
        #expect(resolver.answer(for: "vpn.example.org") == .resolved(["203.0.113.8"]))
    }

    @Test("an answer expires after its lifetime: then a failure replaces it")
    func expiredAnswerGivesWayToAFailure() async throws {
        let lookup = ScriptedLookup()
        let (resolver, changes) = await Self.resolver(lookup, answers: .milliseconds(200))
        defer { resolver.stop() }
        resolver.follow(["vpn.example.org"])
        lookup.answer("vpn.example.org", .success(["203.0.113.7"]))
        _ = try await changes.next("the answer")
        _ = try await lookup.calls.next("the first lookup")
        _ = try await lookup.calls.next("the lookup at expiry", timeout: .seconds(5))
        let pause = try #require(lookup.pause(after: 0))
        #expect(pause >= .milliseconds(190), "looked up again \(pause) after the answer, before it expired")
        lookup.answer("vpn.example.org", .failure(Self.failure))
        _ = try await changes.next("the failure replacing the expired answer")
        #expect(resolver.answer(for: "vpn.example.org") == .failed(Self.failure))
    }

    @Test("a name whose lookup hangs delays no other; a name no longer followed is pending")
    func namesAreIndependent() async throws {
        let lookup = ScriptedLookup()
        let (resolver, changes) = await Self.resolver(lookup)
        defer {
            resolver.stop()
            // Lets the hung thread end.
            lookup.answer("hung.example.org", .failure(Self.failure))
        }
        resolver.follow(["hung.example.org", "fast.example.org"])
        lookup.answer("fast.example.org", .success(["198.51.100.1"]))
        _ = try await changes.next("fast.example.org's answer")
        #expect(resolver.answer(for: "fast.example.org") == .resolved(["198.51.100.1"]))
        #expect(resolver.answer(for: "hung.example.org") == .pending)

        resolver.follow(["hung.example.org"])
        #expect(resolver.answer(for: "fast.example.org") == .pending)
    }

    @Test(
        "with a resolver, an update never waits for DNS: a hung name is pending, and a default route change asks again"
    )
    func observerUsesTheResolver() async throws {
        let lookup = ScriptedLookup()
        let (resolver, _) = await Self.resolver(lookup)
        defer {
            resolver.stop()
            lookup.answer("vpn.example.org", .failure(Self.failure))
        }
        let observer = SystemObserver(
            builder: SystemStateBuilder(resolvConfPath: "/nonexistent/resolv.conf"),
            targets: ["vpn.example.org", "192.0.2.9"],
            hosts: resolver
        )
        _ = try await lookup.calls.next("the lookup started by the observer")
        let asked = ContinuousClock.now
        let first = observer.update(from: KernelSnapshot()).state
        #expect(ContinuousClock.now - asked < .seconds(1), "the update waited for the lookup")
        #expect(first.targets["vpn.example.org"]?.resolution == .pending)
        #expect(first.targets["192.0.2.9"]?.addresses == ["192.0.2.9"])

        lookup.answer("vpn.example.org", .success(["203.0.113.7"]))
        var routed = KernelSnapshot()
        routed.defaultRoutes = [2: [DefaultRoute(family: .ipv4, gateway: "192.0.2.1", metric: 100)]]
        _ = observer.update(from: routed)
        _ = try await lookup.calls.next("the lookup after the default route changed")
    }
}
