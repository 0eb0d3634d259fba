// SPDX-License-Identifier: Apache-2.0

import NetPathCore
import TestSupport
import Testing

@testable import NetPathLinux

/// 100,000 routes added in one `ip -batch`: the engine must end equal to the kernel on every
/// default route (ten of them, in ten tables, spread through the batch and ending it), recovering
/// from receive-buffer overruns by re-dumping when its buffer is too small, and keep none of the
/// other routes.
@Suite(.serialSuite, .enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"), .serialized)
struct RouteStormTests {
    static let routeCount = 100_000
    static let defaultRoutes = 10

    /// A namespace with an addressed uplink and the storm's batch lines: /32 routes, with a
    /// default route in table 1001…1010 after every 10,000th, the last one ending the batch.
    static func prepare(_ ns: NetworkNamespace) throws -> [String] {
        try ns.addVeth("s0", peer: "s1")
        try ns.ip("link", "set", "s0", "up")
        try ns.ip("link", "set", "s1", "up")
        try ns.ip("addr", "add", "198.18.0.2/24", "dev", "s0")
        var lines: [String] = []
        for i in 0..<routeCount {
            lines.append("route add 10.\(i >> 16).\((i >> 8) & 0xff).\(i & 0xff)/32 via 198.18.0.1 dev s0")
            if (i + 1) % (routeCount / defaultRoutes) == 0 {
                lines.append(
                    "route add default via 198.18.0.1 dev s0 table \(1000 + (i + 1) / (routeCount / defaultRoutes))"
                )
            }
        }
        return lines
    }

    @Test("with a tiny receive buffer, overruns are detected and the state still converges exactly")
    func tinyBufferOverrunsAndConverges() async throws {
        try await NetworkNamespace.with("storm-tiny") { ns in
            let lines = try Self.prepare(ns)
            // Without the kernel's filter, which would drop the /32s before they fill the buffer.
            let (engine, recorder) = try await NetlinkEngineTests.startEngine(
                in: ns,
                receiveBuffer: 4096,
                filtersRoutesInKernel: false
            )
            defer { engine.stop() }
            try await recorder.awaitMirror(of: ns, engine: engine, "setup")
            try ns.batch(lines)
            try await recorder.awaitMirror(of: ns, engine: engine, "the storm", timeout: .seconds(90))
            let statistics = engine.statistics
            #expect(statistics.overruns > 0, "a 4 KiB buffer should overrun under 100,000 routes")
            #expect(statistics.resyncs > 0)
            // The mirror holds the default routes only: the ten of the batch, none of the /32s.
            #expect(engine.table().routeCount == Self.defaultRoutes)
        }
    }

    /// The storm with the default receive buffer, the kernel's filter on or off: the engine's
    /// counters before and after, once its mirror equals the kernel's table of default routes.
    static func storm(_ prefix: String, filtered: Bool) async throws -> (
        before: EngineStatistics, after: EngineStatistics
    ) {
        try await NetworkNamespace.with(prefix) { ns in
            let lines = try Self.prepare(ns)
            let (engine, recorder) = try await NetlinkEngineTests.startEngine(in: ns, filtersRoutesInKernel: filtered)
            defer { engine.stop() }
            try await recorder.awaitMirror(of: ns, engine: engine, "setup")
            let before = engine.statistics
            try ns.batch(lines)
            try await recorder.awaitMirror(of: ns, engine: engine, "the storm", timeout: .seconds(90))
            // Only the default routes are held, the ten of the batch.
            #expect(engine.table().routeCount == Self.defaultRoutes)
            return (before, engine.statistics)
        }
    }

    @Test("without the kernel's filter, the default receive buffer holds the storm: no overrun")
    func defaultBufferHasNoOverrun() async throws {
        let (before, after) = try await Self.storm("storm-default", filtered: false)
        #expect(after.overruns == 0)
        // Every /32 was read and dropped unparsed.
        #expect(after.skippedRoutes - before.skippedRoutes >= UInt64(Self.routeCount))
    }

    @Test("with the kernel's filter, the engine reads the default routes of the storm and none of the rest")
    func filteredStormReachesOnlyDefaults() async throws {
        let (before, after) = try await Self.storm("storm-filtered", filtered: true)
        #expect(after.overruns == 0)
        #expect(after.messages - before.messages < 1_000, "read \(after.messages - before.messages) messages")
    }
}
