// SPDX-License-Identifier: Apache-2.0

import Foundation
import Logging
import NetPathCore
import NetPathLinux
import NetPathPlugin
import Synchronization
import TestSupport

/// The agent's pipeline in miniature, for namespace tests: observer → tracker → plugin runner.
final class Pipeline: Sendable {
    let observer: SystemObserver
    let runner: PluginRunner
    private let pump = PumpBox()

    /// Starts observing `namespace`, sets the runner's state from the initial dump and returns
    /// once it is set. Startup events are delivered when `deliverStartup` is true.
    init(
        namespace: NetworkNamespace,
        overrides: [InterfaceOverride],
        policies: [PathPolicy],
        runner: PluginRunner,
        plugins: [String],
        deliverStartup: Bool = true
    ) async throws {
        observer = SystemObserver(
            engine: NetlinkEngine(options: .init(namespace: namespace.name)),
            builder: SystemStateBuilder(classifier: InterfaceClassifier(overrides: overrides))
        )
        self.runner = runner
        let observer = self.observer
        let snapshots = try observer.startEngine()
        let pump = self.pump
        await withCheckedContinuation { (ready: CheckedContinuation<Void, Never>) in
            pump.withLock {
                $0 = Task {
                    var tracker = PathTracker(policies: policies)
                    var started = false
                    for await snapshot in snapshots {
                        let update = observer.update(from: snapshot)
                        let events =
                            started
                            ? tracker.update(to: update.state, at: update.time)
                            : tracker.start(with: update.state, at: update.time)
                        runner.update(state: update.state, paths: tracker.paths)
                        if started || deliverStartup { for event in events { runner.deliver(event, to: plugins) } }
                        if !started { ready.resume() }
                        started = true
                    }
                    if !started { ready.resume() }
                }
            }
        }
    }

    func stop() {
        observer.stop()
        pump.withLock { $0?.cancel() }
    }
}

/// `ip -j` readings of a namespace's routes.
enum Routes {
    /// The device `ip route get DESTINATION` picks.
    static func device(for destination: String, in namespace: NetworkNamespace) throws -> String? {
        let family = destination.contains(":") ? "-6" : "-4"
        let text = try namespace.ip(family, "-j", "route", "get", destination)
        let json = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]]
        return json?.first?["dev"] as? String
    }

    /// `DEV metric` of each default route of `family` ("-4" or "-6").
    static func defaults(_ family: String, in namespace: NetworkNamespace) throws -> [String: Int] {
        let text = try namespace.ip(family, "-j", "route", "show", "default")
        let json = (try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]]) ?? []
        var result: [String: Int] = [:]
        for route in json {
            result[route["dev"] as? String ?? "?"] = route["metric"] as? Int ?? 0
        }
        return result
    }

    /// Polls until `device(for:)` is `expected`.
    static func waitForDevice(
        _ expected: String,
        for destination: String,
        in namespace: NetworkNamespace,
        timeout: Duration = .seconds(10)
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        var last: String?
        while ContinuousClock.now < deadline {
            last = try device(for: destination, in: namespace)
            if last == expected { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestFailure(
            "route get \(destination) picks \(last ?? "nothing"), expected \(expected); routes \(try defaults("-4", in: namespace)) \(try defaults("-6", in: namespace))"
        )
    }
}

/// Polls `ip -j route show default` (both families) in a tight loop on its own thread and counts
/// the readings that showed no default route of a family.
final class DefaultRoutePoller: @unchecked Sendable {
    // @unchecked: the thread and the test share only the Mutex-protected counters.
    private let counters = Mutex<(readings: Int, emptyIPv4: Int, emptyIPv6: Int, running: Bool)>((0, 0, 0, true))
    private let done = DispatchSemaphore(value: 0)

    init(namespace: NetworkNamespace) {
        let name = namespace.name
        let thread = Thread { [self] in
            while counters.withLock({ $0.running }) {
                let v4 = (try? Command.run(["ip", "-n", name, "-4", "route", "show", "default"]).stdout) ?? ""
                let v6 = (try? Command.run(["ip", "-n", name, "-6", "route", "show", "default"]).stdout) ?? ""
                counters.withLock { c in
                    c.readings += 1
                    if !v4.contains("default") { c.emptyIPv4 += 1 }
                    if !v6.contains("default") { c.emptyIPv6 += 1 }
                }
            }
            done.signal()
        }
        thread.start()
    }

    /// Stops the thread and returns the counts.
    func stop() -> (readings: Int, emptyIPv4: Int, emptyIPv6: Int) {
        counters.withLock { $0.running = false }
        done.wait()
        let c = counters.withLock { $0 }
        return (c.readings, c.emptyIPv4, c.emptyIPv6)
    }
}

/// The pipeline's pump task, shared with the task that sets it.
final class PumpBox: Sendable {
    private let task = Mutex<Task<Void, Never>?>(nil)
    func withLock<T>(_ body: (inout Task<Void, Never>?) -> T) -> T { task.withLock { body(&$0) } }
}
