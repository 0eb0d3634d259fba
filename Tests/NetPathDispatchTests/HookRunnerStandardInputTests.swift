// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathCore
import TestSupport
import Testing

@testable import NetPathDispatch

/// The hook's stdin, written after the spawn (HookInput): all of it, whatever its size, and
/// never a wait on a hook that does not read it.
extension HookRunnerTests {
    /// An interface event whose JSON line is `addresses` addresses long (~40 bytes each).
    static func largeEvent(addresses: Int) -> Event {
        var event = Events.interface(.up, "eth0")
        event.interfaceState?.addresses = (0..<addresses).map { index in
            InterfaceAddress(cidr: "10.\(index >> 16 & 255).\(index >> 8 & 255).\(index & 255)/32")!
        }
        return event
    }

    static func run(_ name: String, in dir: TemporaryDirectory, event: Event) async throws -> HookResult {
        let log = LogStore()
        let hooks = HookDirectory(path: dir.path, logger: log.logger)
        let invocation = HookInvocation(hook: name, event: event, rule: nil, timeout: .seconds(10))
        let runner = HookRunner(options: .init(), logger: log.logger, cgroup: noCgroup)
        return await runner.run(invocation, executing: try hooks.open(name))
    }

    @Test("a hook reads the event's whole JSON line and end of file, also when it is larger than a pipe holds")
    func wholeLine() async throws {
        try await TemporaryDirectory.with { dir in
            try dir.hook("10-cat", "cat > \(dir.path("stdin"))")
            for addresses in [1, 8_000] {
                let event = Self.largeEvent(addresses: addresses)
                let expected = try JSONCoding.lineBytes(event) + [UInt8(ascii: "\n")]
                if addresses > 1 { #expect(expected.count > 4 * 65536, "the line must not fit the pipe") }
                let result = try await Self.run("10-cat", in: dir, event: event)
                #expect(result.termination == .exited(0))
                let written = try #require(FileManager.default.contents(atPath: dir.path("stdin")))
                #expect(
                    Array(written) == expected,
                    "\(addresses) addresses: \(written.count) of \(expected.count) bytes"
                )
            }
        }
    }

    @Test("a hook that does not read its large stdin, or closes it part-way, still ends its run as it exits")
    func unreadInput() async throws {
        try await TemporaryDirectory.with { dir in
            // Exits with stdin unread; closes it unread (the writer then meets EPIPE while the
            // hook still runs); reads a little, then closes it.
            try dir.hook("10-ignore", "sleep 0.2; exit 4")
            try dir.hook("20-close", "exec 0<&-; sleep 0.2; exit 5")
            try dir.hook("30-partial", "head -c 1000 >/dev/null; exec 0<&-; sleep 0.2; exit 6")
            let event = Self.largeEvent(addresses: 8_000)
            for (name, status) in [("10-ignore", Int32(4)), ("20-close", 5), ("30-partial", 6)] {
                let result = try await Self.run(name, in: dir, event: event)
                #expect(result.termination == .exited(status), "\(name): \(result)")
                #expect(!result.timedOut, "\(name) ran into its timeout")
            }
        }
    }

    @Test("an event that cannot be encoded ends the hook before it acts, and the run says why")
    func unencodable() async throws {
        try await TemporaryDirectory.with { dir in
            // Acts as soon as its stdin ends: the agent must kill it before it can see that.
            try dir.hook("10-eof", "read -r line || touch \(dir.path("acted")); sleep 1; touch \(dir.path("acted"))")
            var event = Events.interface(.up, "eth0")
            event.interfaceState?.loss = .nan  // JSON has no NaN
            let result = try await Self.run("10-eof", in: dir, event: event)
            guard case .failedToStart(let reason) = result.termination else {
                Issue.record("expected failedToStart, got \(result)")
                return
            }
            #expect(reason.contains("cannot encode the event as JSON"), "\(reason)")
            // The run waited for the hook to end: had it not been killed, it would have acted.
            #expect(dir.read("acted") == nil, "the hook ran on after the encoding failed")
        }
    }
}
