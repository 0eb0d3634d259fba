import NetPathCore
import NetPathLinux
import TestSupport
import Testing

/// 100,000 routes added in one `ip -batch`: the engine must end equal to the kernel, recovering
/// from receive-buffer overruns by re-dumping when its buffer is too small.
@Suite(.enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"), .serialized)
struct RouteStormTests {
    static let routeCount = 100_000

    /// A namespace with an addressed uplink and the storm's batch lines.
    static func prepare(_ ns: NetworkNamespace) throws -> [String] {
        try ns.addVeth("s0", peer: "s1")
        try ns.ip("link", "set", "s0", "up")
        try ns.ip("link", "set", "s1", "up")
        try ns.ip("addr", "add", "198.18.0.2/24", "dev", "s0")
        return (0..<routeCount).map { i in
            "route add 10.\(i >> 16).\((i >> 8) & 0xff).\(i & 0xff)/32 via 198.18.0.1 dev s0"
        }
    }

    @Test("with a tiny receive buffer, overruns are detected and the state still converges exactly")
    func tinyBufferOverrunsAndConverges() async throws {
        try await NetworkNamespace.with("storm-tiny") { ns in
            let lines = try Self.prepare(ns)
            let (engine, recorder) = try await NetlinkEngineTests.startEngine(in: ns, receiveBuffer: 4096)
            defer { engine.stop() }
            try await recorder.awaitMirror(of: ns, engine: engine, "setup")
            try ns.batch(lines)
            try await recorder.awaitMirror(of: ns, engine: engine, "the storm", timeout: .seconds(90))
            let statistics = engine.statistics
            #expect(statistics.overruns > 0, "a 4 KiB buffer should overrun under 100,000 routes")
            #expect(statistics.resyncs > 0)
            #expect(engine.table().routeCount >= Self.routeCount)
        }
    }

    @Test("with the default receive buffer, the storm causes no overrun")
    func defaultBufferHasNoOverrun() async throws {
        try await NetworkNamespace.with("storm-default") { ns in
            let lines = try Self.prepare(ns)
            let (engine, recorder) = try await NetlinkEngineTests.startEngine(in: ns)
            defer { engine.stop() }
            try await recorder.awaitMirror(of: ns, engine: engine, "setup")
            try ns.batch(lines)
            try await recorder.awaitMirror(of: ns, engine: engine, "the storm", timeout: .seconds(90))
            #expect(engine.statistics.overruns == 0)
            #expect(engine.table().routeCount >= Self.routeCount)
        }
    }
}
