// SPDX-License-Identifier: Apache-2.0

import Foundation
import TestSupport
import Testing

/// `netpathd` started with its standard descriptors closed (by hand: `netpathd <&- >&- 2>&-`)
/// opens them on `/dev/null` before anything else, so none of its own descriptors takes 0, 1 or 2:
/// not its log's destination, and not a hook's pipe, which the spawn's `dup2`s onto 0, 1 and 2
/// would then move onto the wrong stream.
@Suite(.enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct AgentStandardDescriptorsTests {
    @Test(
        "started with descriptors 0, 1 and 2 closed, netpathd opens them on /dev/null, and a hook still gets its event on stdin and its own pipes"
    )
    func closedStandardDescriptors() async throws {
        try await NetworkNamespace.with("stdfd") { namespace in
            let scratch = try ScratchDirectory.make("np-stdfd")
            defer { try? FileManager.default.removeItem(at: scratch) }
            chmod(scratch.path, 0o755)
            // lo's startup event: the hook keeps its stdin and says where its (the shell's) 1 and 2 lead.
            let hook = """
                #!/bin/sh
                [ "$1" = lo ] || exit 0
                cat > \(scratch.path)/stdin
                out=$(readlink /proc/$$/fd/1) err=$(readlink /proc/$$/fd/2)
                printf '%s\\n%s\\n' "$out" "$err" > \(scratch.path)/streams
                """
            let agent = try await AgentHarness(
                namespace: namespace,
                config: "[agent]\nsettle = \"0s\"\nstartup_events = true\n",
                extraHooks: ["20-streams": hook],
                launcher: ["/bin/sh", "-c", "exec \"$@\" <&- >&- 2>&-", "sh"]
            )
            defer { agent.stop() }
            try await agent.awaitReady()

            // The agent's own 0, 1 and 2 (the launcher execs it: its pid is the process's).
            let pid = agent.process.processIdentifier
            #expect(try String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8) == "netpathd\n")
            for descriptor in 0...2 {
                let target = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(descriptor)")
                #expect(target == "/dev/null", "netpathd's descriptor \(descriptor) leads to \(target)")
            }

            // The agent writes no log line the harness could wake on (its stderr is /dev/null):
            // poll for the hook's file, bounded.
            let streamsFile = scratch.appendingPathComponent("streams").path
            var streams: [String] = []
            try await waitUntil("the hook wrote its descriptors") {
                streams = ((try? String(contentsOfFile: streamsFile, encoding: .utf8)) ?? "")
                    .split(separator: "\n").map(String.init)
                return streams.count == 2
            }
            #expect(streams.allSatisfy { $0.hasPrefix("pipe:[") }, "the hook's 1 and 2: \(streams)")
            #expect(streams[0] != streams[1], "the hook's stdout and stderr are one pipe: \(streams)")
            let line = try Data(contentsOf: scratch.appendingPathComponent("stdin"))
            let event = try #require(try JSONSerialization.jsonObject(with: line) as? [String: Any])
            #expect(event["interface"] as? String == "lo")
            #expect(["up", "down"].contains(event["event"] as? String), "the hook's stdin: \(event)")
        }
    }
}
