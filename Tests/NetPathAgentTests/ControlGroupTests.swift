// SPDX-License-Identifier: Apache-2.0

import Foundation
import TestSupport
import Testing

/// `control_group`: its members may ask the agent everything but `reload`; everyone else is
/// told "permission denied" and how to get in.
@Suite(.enabled(if: Privileges.namespaceTestsEnabled, "needs root for namespaces, groups and other users"))
struct ControlGroupTests {
    /// A system group made for one test, deleted afterwards.
    struct TemporaryGroup {
        let name: String
        let id: UInt32

        init() throws {
            name = "nptest-\(UInt32.random(in: 0...UInt32.max) & 0xffffff)"
            try Command.check(["groupadd", "--system", name])
            guard let entry = getgrnam(name) else { throw TestFailure("groupadd made no group \(name)") }
            id = UInt32(entry.pointee.gr_gid)
        }

        func remove() { _ = try? Command.run(["groupdel", name]) }
    }

    /// `netpathctl ARGS` as uid 65534, with primary group `primary` and supplementary `groups`.
    static func netpathctl(primary: UInt32 = 65534, groups: [UInt32] = [], _ arguments: [String]) -> [String] {
        let supplementary =
            groups.isEmpty ? "--clear-groups" : "--groups=" + groups.map(String.init).joined(separator: ",")
        return ["setpriv", "--reuid=65534", "--regid=\(primary)", supplementary, BuiltProducts.path("netpathctl")]
            + arguments
    }

    @Test(
        "a user in the reading group gets status and monitor; one outside it gets permission denied; neither can reload"
    )
    func readingGroup() async throws {
        let group = try TemporaryGroup()
        defer { group.remove() }
        try await NetworkNamespace.with(["cgroup", "peer"]) { namespaces in
            try AgentLifecycleTests.uplink(namespaces)
            let agent = try await AgentHarness(
                namespace: namespaces[0],
                config: "[agent]\ncontrol_group = \"\(group.name)\"\nstartup_events = false\n"
            )
            defer { agent.stop() }
            try await agent.awaitReady()
            var info = stat()
            #expect(stat(agent.socketPath, &info) == 0)
            #expect(info.st_uid == 0 && info.st_gid == group.id, "owner \(info.st_uid):\(info.st_gid)")
            #expect(info.st_mode & 0o777 == 0o660)

            // Members find the agent through a configuration naming its socket (--config decides it).
            let clientConfig = agent.directory.appendingPathComponent("client.toml")
            try "[agent]\ncontrol_socket = \"\(agent.socketPath)\"\n".write(
                to: clientConfig,
                atomically: false,
                encoding: .utf8
            )
            chmod(clientConfig.path, 0o644)
            let config = ["--config", clientConfig.path]

            // A member by a supplementary group, and one by its primary group.
            for (primary, groups) in [(UInt32(65534), [group.id]), (group.id, [])] {
                let status = try Command.run(
                    Self.netpathctl(primary: primary, groups: groups, ["status", "--json"] + config)
                )
                #expect(status.status == 0, "member \(primary)/\(groups): \(status.stderr)")
                #expect(status.stdout.contains("\"up0\""), "\(status.stdout)")
            }
            let monitor = try RunningProcess(Self.netpathctl(groups: [group.id], ["monitor", "--json"] + config))
            defer { monitor.terminate() }
            let events = Recorder<String>()
            await events.record(monitor.stdoutLines)
            let monitorLog = Recorder<String>()
            await monitorLog.record(monitor.stderrLines)
            _ = try await monitorLog.next("the member's monitor starting") {
                $0 == "monitoring netpathd on \(agent.socketPath); Ctrl-C to stop"
            }
            try namespaces[1].ip("link", "set", "up0p", "down")
            _ = try await events.next("the member's monitor seeing up0 go down") { $0.contains(#""event":"down""#) }

            // Outside the group: refused by the socket's permissions, and told so with the way in.
            let outsider = try Command.run(Self.netpathctl(["status"] + config))
            #expect(outsider.status != 0)
            #expect(outsider.stderr.contains("permission denied on \(agent.socketPath)"), "\(outsider.stderr)")
            #expect(outsider.stderr.contains("control_group"), "\(outsider.stderr)")
            #expect(!outsider.stderr.contains("no netpathd is answering"), "\(outsider.stderr)")

            // Neither may reload; root may (so the refusals are about who asks).
            let memberReload = try Command.run(
                Self.netpathctl(groups: [group.id], ["reload", "--socket", agent.socketPath])
            )
            #expect(memberReload.status != 0)
            #expect(
                memberReload.stderr.contains("only root may reload netpathd (your uid is 65534)"),
                "\(memberReload.stderr)"
            )
            let outsiderReload = try Command.run(Self.netpathctl(["reload", "--socket", agent.socketPath]))
            #expect(outsiderReload.status != 0)
            #expect(outsiderReload.stderr.contains("permission denied"), "\(outsiderReload.stderr)")
            let rootReload = try Command.run([BuiltProducts.path("netpathctl"), "reload", "--socket", agent.socketPath])
            #expect(rootReload.status == 0, "\(rootReload.stderr)")
        }
    }
}
