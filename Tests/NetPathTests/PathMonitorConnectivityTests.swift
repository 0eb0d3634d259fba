// SPDX-License-Identifier: Apache-2.0

import NetPath
import NetPathTesting
import Testing

/// `PathMonitor.waitForConnectivity`: waits for a verdict, not for any satisfied path.
struct PathMonitorConnectivityTests {
    static func path(_ connectivity: Connectivity, status: NetworkPath.Status = .satisfied) -> NetworkPath {
        var path = NetworkPath.satisfied(via: .wired("eth0"))
        path.status = status
        path.connectivity = connectivity
        if connectivity == .portal { path.portalURL = "http://portal.test/login" }
        return path
    }

    @Test("a satisfied path with unknown, then portal connectivity does not end the wait; full does")
    func waitsForFull() async throws {
        let source = MockPathSource(Self.path(.unknown))
        let monitor = PathMonitor(policy: .default, source: source)
        let waiting = Task { try await monitor.waitForConnectivity(.full, timeout: .seconds(20)) }
        try await source.waitForSubscribers()
        try await source.deliver(Self.path(.portal))
        // Sent, not delivered: the wait ends on it and stops listening before it could confirm.
        source.send(Self.path(.full))
        let path = try await waiting.value
        #expect(path.connectivity == .full)
        #expect(path.primary?.name == "eth0")
    }

    @Test("portal is enough when asked for; an unsatisfied path is never enough")
    func portalAccepted() async throws {
        let source = MockPathSource(Self.path(.full, status: .unsatisfied))
        let monitor = PathMonitor(policy: .default, source: source)
        let waiting = Task { try await monitor.waitForConnectivity(.portal, timeout: .seconds(20)) }
        try await source.waitForSubscribers()
        source.send(Self.path(.portal))
        #expect(try await waiting.value.portalURL == "http://portal.test/login")
    }

    @Test("the timeout ends the wait with an error that says what was seen")
    func timesOut() async throws {
        let source = MockPathSource(Self.path(.limited))
        let monitor = PathMonitor(policy: .default, source: source)
        let error = await #expect(throws: PathMonitor.ConnectivityWaitError.self) {
            try await monitor.waitForConnectivity(.full, timeout: .milliseconds(300))
        }
        #expect(error?.lastPath?.connectivity == .limited)
        #expect(error?.description.contains("with connectivity limited") == true, "\(String(describing: error))")
    }
}
