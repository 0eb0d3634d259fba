// SPDX-License-Identifier: Apache-2.0

import NetPath
import TestSupport
import Testing

/// AgentPathSource against a socket that accepts but never answers (a stuck agent).
@Suite(.timeLimit(.minutes(1)))
struct AgentPathSourceStuckAgentTests {
    @Test("AgentPathSource reports a stuck agent as not responding, and does not fall back to local evaluation")
    func stuckAgentSource() throws {
        let server = try SilentServer()
        let source = AgentPathSource(
            socketPath: server.path,
            fallback: .local(KernelPathSource()),
            replyTimeout: .milliseconds(300)
        )
        do {
            _ = try source.currentPath(for: .init(name: "default"))
            Issue.record("a path came from a server that never writes")
        } catch let error as AgentPathSourceError {
            #expect(error.code == .notResponding, "\(error)")
            #expect(error.description.contains(server.path), "\(error)")
            #expect(error.description.contains("may be stuck"), "\(error)")
        }
        #expect(!source.isConnected)
    }
}
