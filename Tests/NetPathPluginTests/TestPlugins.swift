// SPDX-License-Identifier: Apache-2.0

import Dispatch
import Foundation
import NetPathCore
import NetPathPlugin
import Synchronization
import TestSupport

/// What a test plugin saw: each event with the instant it arrived, and lifecycle calls.
final class Received: Sendable {
    struct Delivery: Sendable {
        var event: Event
        var at: ContinuousClock.Instant
        var state: SystemState
    }

    private let deliveries = Mutex<[Delivery]>([])
    private let calls = Mutex<[String]>([])

    func record(_ event: Event, context: PluginContext) {
        let delivery = Delivery(event: event, at: .now, state: context.state)
        deliveries.withLock { $0.append(delivery) }
    }

    func lifecycle(_ what: String) { calls.withLock { $0.append(what) } }

    var all: [Delivery] { deliveries.withLock { $0 } }
    var events: [Event] { all.map(\.event) }
    var lifecycleCalls: [String] { calls.withLock { $0 } }

    /// Waits until `predicate` holds for the events received, polling every 5 ms.
    @discardableResult
    func wait(
        _ what: String,
        timeout: Duration = .seconds(10),
        until predicate: ([Event]) -> Bool
    ) async throws -> [Event] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let events = self.events
            if predicate(events) { return events }
            if ContinuousClock.now >= deadline {
                throw TestFailure(
                    "timed out after \(timeout) waiting for \(what); got \(events.map { "\($0.name) \($0.subject)" })"
                )
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}

/// A plugin that records what it receives, optionally misbehaving per event.
struct RecordingPlugin: Plugin {
    static let name = "recording"

    enum Behaviour: Sendable {
        case normal
        case `throw`
        /// Never returns, ignoring cancellation.
        case hang
        /// Returns after this long, ignoring cancellation.
        case slow(Duration)
    }

    let received: Received
    let behaviour: @Sendable (Event) -> Behaviour

    init(received: Received, behaviour: @escaping @Sendable (Event) -> Behaviour = { _ in .normal }) {
        self.received = received
        self.behaviour = behaviour
    }

    init(configuration: PluginConfiguration) {
        self.init(received: Received())
    }

    func handle(_ event: Event, context: PluginContext) async throws {
        received.record(event, context: context)
        switch behaviour(event) {
        case .normal:
            return
        case .throw:
            throw TestFailure("refusing \(event.name)")
        case .hang:
            // A continuation nobody resumes: the call never returns and no thread is blocked.
            await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in }
        case .slow(let duration):
            // Dispatch's timer ignores task cancellation, like slow synchronous-minded code would.
            let nanoseconds =
                duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
            await withCheckedContinuation { continuation in
                DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(nanoseconds))) {
                    continuation.resume()
                }
            }
        }
    }

    func start(context: PluginContext) async throws { received.lifecycle("start") }
    func stop(context: PluginContext) async throws { received.lifecycle("stop") }
}

/// Events for tests that need no kernel.
enum Events {
    static let epoch = Date(timeIntervalSince1970: 1_700_000_000)

    static func interface(_ name: Event.Name, index: Int32, _ sequence: Int = 0, address: String? = nil) -> Event {
        let interface = Interface(index: index, name: "eth\(index)", type: .wired)
        return Event(
            time: epoch.addingTimeInterval(Double(sequence)),
            name: name,
            scope: .interface,
            interface: interface.name,
            interfaceType: .wired,
            interfaceState: interface,
            address: address.map { InterfaceAddress(IPAddress($0)!, prefixLength: 24) },
            changes: name == .changed ? ["mtu"] : []
        )
    }

    static func path(_ name: Event.Name, policy: String = "default", _ sequence: Int = 0) -> Event {
        Event(
            time: epoch.addingTimeInterval(Double(sequence)),
            name: name,
            scope: .path,
            policy: policy,
            path: NetworkPath(policy: policy, status: name == .unsatisfied ? .unsatisfied : .satisfied)
        )
    }
}

/// A recording plugin whose `start` waits for a gate, and whose `reload` adopts or declines:
/// for lifecycle work that a caller runs beside its deliveries.
struct GatedPlugin: Plugin {
    static let name = "gated"

    let received: Received
    let startGate: Gate?
    let adopts: Bool

    init(received: Received, startGate: Gate? = nil, adopts: Bool = false) {
        self.received = received
        self.startGate = startGate
        self.adopts = adopts
    }

    init(configuration: PluginConfiguration) {
        self.init(received: Received())
    }

    func handle(_ event: Event, context: PluginContext) async throws {
        received.record(event, context: context)
    }

    func start(context: PluginContext) async throws {
        received.lifecycle("start")
        await startGate?.wait()
        received.lifecycle("started")
    }

    func stop(context: PluginContext) async throws { received.lifecycle("stop") }

    func reload(configuration: PluginConfiguration, context: PluginContext) async throws -> Bool {
        received.lifecycle(adopts ? "reload: adopted" : "reload: declined")
        return adopts
    }
}

extension Received {
    /// Waits until a lifecycle call named `what` was recorded, polling every 5 ms.
    func waitForLifecycle(_ what: String, timeout: Duration = .seconds(10)) async throws {
        let deadline = ContinuousClock.now + timeout
        while !lifecycleCalls.contains(what) {
            if ContinuousClock.now >= deadline {
                throw TestFailure("timed out after \(timeout) waiting for \(what); calls: \(lifecycleCalls)")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}
