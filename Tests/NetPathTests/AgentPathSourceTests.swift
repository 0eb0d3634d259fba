// SPDX-License-Identifier: Apache-2.0

import Dispatch
import Foundation
import NetPath
import TestSupport
import Testing

/// AgentPathSource against a real netpathd, in namespaces the tests create and delete.
@Suite(.enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct AgentPathSourceTests {
    /// Two uplinks whose peers live in `peer`: `eth0` (metric 200) and `wlan0` (metric 100). Both
    /// are veths, classified `other` by the kernel; only the agent's overrides make them wired and
    /// wifi. So the agent's policy (prefer wired) picks eth0, while local evaluation without
    /// overrides picks the lower metric, wlan0.
    static func makeUplinks(_ namespace: NetworkNamespace, peer: NetworkNamespace) throws {
        for (name, subnet, metric) in [("eth0", "192.0.2", "200"), ("wlan0", "198.51.100", "100")] {
            try namespace.addVeth(name, peer: name + "p", in: peer)
            try peer.ip("link", "set", name + "p", "up")
            try namespace.ip("link", "set", name, "up")
            try namespace.ip("addr", "add", "\(subnet).10/24", "dev", name)
            try namespace.ip("route", "add", "default", "via", "\(subnet).1", "dev", name, "metric", metric)
        }
    }

    static let config = """
        [agent]
        settle = "0s"
        startup_events = false

        [[interface]]
        match = "eth*"
        type = "wired"

        [[interface]]
        match = "wlan*"
        type = "wifi"

        [[policy]]
        name = "default"
        prefer = ["wired", "wifi"]
        """

    static func via(_ name: String, _ type: InterfaceType) -> @Sendable (NetworkPath) -> Bool {
        { $0.status == .satisfied && $0.primary?.name == name && $0.primary?.type == type }
    }

    /// What an iteration produced: each path, then its end.
    enum Seen: Sendable {
        case path(NetworkPath)
        case ended

        var path: NetworkPath? {
            if case .path(let path) = self { return path }
            return nil
        }
    }

    /// Iterates `monitor.paths` in a task, recording each path and the end of the iteration.
    static func record(_ monitor: PathMonitor, into recorder: Recorder<Seen>) async -> Task<Void, Never> {
        let (stream, continuation) = AsyncStream<Seen>.makeStream()
        await recorder.record(stream)
        return Task {
            for await path in monitor.paths { continuation.yield(.path(path)) }
            continuation.yield(.ended)
            continuation.finish()
        }
    }

    static func error(_ body: () throws -> Void) -> AgentPathSourceError? {
        do {
            try body()
            return nil
        } catch {
            return error as? AgentPathSourceError
        }
    }

    @Test(
        "a monitor on the agent sees its policy's decision at once, follows it, and says clearly when the agent stops"
    )
    func followsTheAgent() async throws {
        try await NetworkNamespace.with(["follow", "peer"]) { namespaces in
            guard namespaces.count == 2 else { throw TestFailure("expected two namespaces, got \(namespaces.count)") }
            let (namespace, peer) = (namespaces[0], namespaces[1])
            try Self.makeUplinks(namespace, peer: peer)
            let local = KernelPathSource(options: .init(namespace: namespace.name))
            #expect(try local.currentPath(for: .default).primary?.name == "wlan0", "locally, the lower metric wins")

            let agent = try await AgentProcess(namespace: namespace, config: Self.config)
            defer { agent.stop() }
            try await agent.awaitReady()
            let source = AgentPathSource(socketPath: agent.socketPath)

            // A handler monitor first (it subscribes first, so it is also told first at the end).
            let handled = PathMonitor(policy: .init(name: "default"), source: source)
            let (handlerPaths, handlerContinuation) = AsyncStream<NetworkPath>.makeStream()
            defer { handlerContinuation.finish() }
            handled.pathUpdateHandler = { handlerContinuation.yield($0) }
            let handlerRecorder = Recorder<NetworkPath>()
            await handlerRecorder.record(handlerPaths)
            handled.start(queue: DispatchQueue(label: "follow-handler"))
            #expect(
                handled.currentPath.map(Self.via("eth0", .wired)) == true,
                "the agent's choice as start returns: \(String(describing: handled.currentPath))"
            )
            #expect(handled.failure == nil, "\(String(describing: handled.failure))")

            let monitor = PathMonitor(policy: .init(name: "default"), source: source)
            let recorder = Recorder<Seen>()
            let iteration = await Self.record(monitor, into: recorder)
            defer { iteration.cancel() }
            let first = try await recorder.next("the agent's path at once") { _ in true }
            #expect(first.path.map(Self.via("eth0", .wired)) == true, "\(first)")
            #expect(first.path?.policy == "default")
            #expect(source.isConnected)
            #expect(source.subscriberCount == 2)

            // Selected by name: the policy's other fields are the agent's business.
            let byName = try source.currentPath(for: PathPolicy(name: "default", require: [.cellular]))
            #expect(Self.via("eth0", .wired)(byName), "\(byName)")
            #expect(source.subscriberCount == 2, "a one-shot read does not stay subscribed")

            // A name the agent does not know: a clear error, or local evaluation when asked for.
            let unknown = Self.error {
                _ = try AgentPathSource(socketPath: agent.socketPath).currentPath(for: .init(name: "roaming"))
            }
            #expect(unknown?.code == .unknownPolicy)
            #expect(unknown?.knownPolicies == ["default"])
            #expect(
                unknown?.description.contains("no policy named \"roaming\"") == true,
                "\(String(describing: unknown))"
            )
            let unknownWhileFollowing = Self.error { _ = try source.currentPath(for: .init(name: "roaming")) }
            #expect(unknownWhileFollowing?.code == .unknownPolicy, "asked again on a followed source")
            #expect(source.isConnected && source.subscriberCount == 2)
            let fallback = AgentPathSource(socketPath: agent.socketPath, fallback: .local(local))
            let roaming = try fallback.currentPath(for: PathPolicy(name: "roaming", prefer: [.wired]))
            #expect(roaming.policy == "roaming" && roaming.primary?.name == "wlan0", "no overrides locally: \(roaming)")
            #expect(!fallback.isConnected && fallback.subscriberCount == 0)

            // A source whose last subscription ends closes its connection.
            let other = AgentPathSource(socketPath: agent.socketPath)
            var again = PathMonitor(policy: .init(name: "default"), source: other).paths.makeAsyncIterator()
            #expect(await again.next().map(Self.via("eth0", .wired)) == true)
            #expect(other.isConnected)
            _ = consume again
            #expect(!other.isConnected && other.subscriberCount == 0)

            // The wired link loses its carrier: the agent's policy falls back to wifi.
            try peer.ip("link", "set", "eth0p", "down")
            let wifi = try await recorder.next("the path via wifi after eth0 goes down") {
                $0.path.map(Self.via("wlan0", .wifi)) == true
            }
            #expect(wifi.path?.availableInterfaces.map(\.name) == ["wlan0"], "\(wifi)")
            _ = try await handlerRecorder.next("the handler's first path", where: Self.via("eth0", .wired))
            _ = try await handlerRecorder.next("the handler sees wifi too", where: Self.via("wlan0", .wifi))
            #expect(monitor.currentPath.map(Self.via("wlan0", .wifi)) == true)
            let paths = await recorder.all.compactMap(\.path).map { $0.primary?.name ?? "-" }
            #expect(paths == ["eth0", "wlan0"], "no path from before the subscription, none repeated")

            // The agent stops: the iteration ends, and the monitors say why.
            agent.process.send(SIGTERM)
            _ = try await recorder.next("the end of the iteration when netpathd stops") {
                if case .ended = $0 { return true }
                return false
            }
            let failure = monitor.failure as? AgentPathSourceError
            #expect(failure?.code == .agentStopped, "\(String(describing: monitor.failure))")
            #expect(
                failure?.description.contains("netpathd stopped (connection closed)") == true,
                "\(String(describing: failure))"
            )
            #expect(
                (handled.failure as? AgentPathSourceError)?.code == .agentStopped,
                "\(String(describing: handled.failure))"
            )
            #expect(!handled.isStarted)
            #expect(handled.currentPath.map(Self.via("wlan0", .wifi)) == true, "the last path seen is kept")
            #expect(!source.isConnected && source.subscriberCount == 0)
            handled.cancel()
        }
    }

    @Test("with no agent running, .fail throws a clear error and .local evaluates the policy locally")
    func noAgent() async throws {
        try await NetworkNamespace.with(["noagent", "peer"]) { namespaces in
            guard namespaces.count == 2 else { throw TestFailure("expected two namespaces, got \(namespaces.count)") }
            let (namespace, peer) = (namespaces[0], namespaces[1])
            try Self.makeUplinks(namespace, peer: peer)
            let missing = FileManager.default.temporaryDirectory.appendingPathComponent(
                "np-none-\(UUID().uuidString.prefix(8)).sock"
            ).path

            let strict = AgentPathSource(socketPath: missing, fallback: .fail)
            let error = Self.error { _ = try strict.currentPath(for: .init(name: "default")) }
            #expect(error?.code == .noAgent)
            #expect(error?.description.contains("start netpathd") == true, "\(String(describing: error))")
            #expect(error?.description.contains(missing) == true, "\(String(describing: error))")

            let failing = PathMonitor(policy: .init(name: "default"), source: strict)
            failing.start(queue: DispatchQueue(label: "no-agent"))
            #expect(!failing.isStarted && failing.currentPath == nil)
            #expect(
                (failing.failure as? AgentPathSourceError)?.code == .noAgent,
                "\(String(describing: failing.failure))"
            )
            var nothing = failing.paths.makeAsyncIterator()
            #expect(await nothing.next() == nil, "an iteration ends at once")

            let lenient = AgentPathSource(
                socketPath: missing,
                fallback: .local(KernelPathSource(options: .init(namespace: namespace.name)))
            )
            let monitor = PathMonitor(policy: PathPolicy(name: "default", prefer: [.wired, .wifi]), source: lenient)
            let recorder = Recorder<NetworkPath>()
            await recorder.record(monitor.paths)
            defer { Task { await recorder.stop() } }
            let path = try await recorder.next("the locally evaluated path")
            #expect(path.status == .satisfied)
            #expect(path.primary?.name == "wlan0", "local evaluation: no overrides, the lower metric: \(path)")
            #expect(path.primary?.type == .other)
            #expect(monitor.failure == nil)
            #expect(!lenient.isConnected && lenient.subscriberCount == 0)
            try peer.ip("link", "set", "wlan0p", "down")
            _ = try await recorder.next("the local path follows the kernel to eth0") { $0.primary?.name == "eth0" }
            await recorder.stop()
        }
    }
}
