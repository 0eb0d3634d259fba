// SPDX-License-Identifier: Apache-2.0

import NetPathCore
import Synchronization

/// A ``ConnectivityProbing`` whose verdicts a test sets per interface, to drive an agent's
/// connectivity without a network (`AgentOptions.connectivityProber`).
///
/// Every probe answers at once with the verdict set for its interface (the default otherwise),
/// unless the interface is held: then its probes wait until ``release(_:)``. Every request is
/// recorded and also sent on ``requests``.
///
/// ```swift
/// let prober = ScriptedConnectivityProber(default: .full)
/// prober.set("eth0", .portal, portalURL: "http://portal.test/login", evidence: "HTTP 302 to http://portal.test/login")
/// let options = AgentOptions(connectivityProber: { prober })
/// ```
package final class ScriptedConnectivityProber: ConnectivityProbing {
    private struct Verdict {
        var connectivity: Connectivity
        var portalURL: String?
        var roundTrip: Duration?
        var loss: Double?
        var evidence: String
    }

    private struct State {
        var verdicts: [String: Verdict] = [:]
        var held: Set<String> = []
        var waiting: [String: [CheckedContinuation<Void, Never>]] = [:]
        var counts: [String: Int] = [:]
    }

    private let state = Mutex(State())
    private let fallback: Verdict
    private let sink: AsyncStream<ProbeRequest>.Continuation

    /// Every probe request, in the order they were made (one consumer).
    package let requests: AsyncStream<ProbeRequest>

    /// A prober that answers `default` for every interface nothing was set for.
    package init(default connectivity: Connectivity = .full) {
        fallback = Verdict(
            connectivity: connectivity,
            roundTrip: .milliseconds(10),
            loss: 0,
            evidence: "scripted: \(connectivity)"
        )
        (requests, sink) = AsyncStream.makeStream(of: ProbeRequest.self)
    }

    /// Makes the probes of `interface` answer `connectivity` from now on.
    package func set(
        _ interface: String,
        _ connectivity: Connectivity,
        portalURL: String? = nil,
        roundTrip: Duration? = .milliseconds(10),
        loss: Double? = 0,
        evidence: String? = nil
    ) {
        let verdict = Verdict(
            connectivity: connectivity,
            portalURL: portalURL,
            roundTrip: roundTrip,
            loss: loss,
            evidence: evidence ?? "scripted: \(connectivity)"
        )
        state.withLock { $0.verdicts[interface] = verdict }
    }

    /// Makes the probes of `interface` wait, from now on, until ``release(_:)``.
    package func hold(_ interface: String) {
        state.withLock { _ = $0.held.insert(interface) }
    }

    /// Lets the waiting and future probes of `interface` answer.
    package func release(_ interface: String) {
        let waiting = state.withLock { state in
            state.held.remove(interface)
            return state.waiting.removeValue(forKey: interface) ?? []
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Lets every held probe answer (for a test's clean-up).
    package func releaseAll() {
        let names = state.withLock { Array($0.held) + Array($0.waiting.keys) }
        for name in Set(names) { release(name) }
    }

    /// How many probes of `interface` were asked for so far.
    package func probeCount(_ interface: String) -> Int {
        state.withLock { $0.counts[interface] ?? 0 }
    }

    /// Records `request`, waits while its interface is held, and answers the verdict set for it.
    package func probe(_ request: ProbeRequest) async -> ProbeResult {
        state.withLock { $0.counts[request.interface, default: 0] += 1 }
        sink.yield(request)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let wait = state.withLock { state in
                guard state.held.contains(request.interface) else { return false }
                state.waiting[request.interface, default: []].append(continuation)
                return true
            }
            if !wait { continuation.resume() }
        }
        let verdict = state.withLock { $0.verdicts[request.interface] } ?? fallback
        return ProbeResult(
            interface: request.interface,
            connectivity: verdict.connectivity,
            portalURL: verdict.portalURL,
            roundTrip: verdict.roundTrip,
            loss: verdict.loss,
            evidence: verdict.evidence
        )
    }
}
