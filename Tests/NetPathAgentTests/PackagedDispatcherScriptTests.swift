// SPDX-License-Identifier: Apache-2.0

import Foundation
import TestSupport
import Testing

/// Scripts that Debian packages ship for NetworkManager-dispatcher and networkd-dispatcher, run
/// unchanged by netpathd from a copy of the package's own layout, doing their job against their
/// daemon running in the test's namespaces.
@Suite(.enabled(if: Privileges.namespaceTestsEnabled, "needs root for network and mount namespaces"))
struct PackagedDispatcherScriptTests {
    /// `PACKAGE_*.deb` from Debian's archive through apt-get, kept under `.build/debs` so that
    /// later runs do not download it again.
    static func package(_ name: String) throws -> URL {
        let cache = BuiltProducts.directory.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("debs")
        try FileManager.default.createDirectory(at: cache, withIntermediateDirectories: true)
        func cached() -> URL? {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: cache.path)) ?? []
            return names.sorted().last { $0.hasPrefix(name + "_") && $0.hasSuffix(".deb") }
                .map { cache.appendingPathComponent($0) }
        }
        if let deb = cached() { return deb }
        let download = try Command.run(["sh", "-c", "cd \"$1\" && apt-get download \"$2\"", "sh", cache.path, name])
        guard download.status == 0, let deb = cached() else {
            throw TestFailure("apt-get download \(name) failed (status \(download.status)): \(download.stderr)")
        }
        return deb
    }

    /// What a chrony test gets: the agent, the namespaces, and chronyd's `chronyc activity`.
    struct Chrony {
        var agent: AgentHarness
        var ns: NetworkNamespace
        var peer: NetworkNamespace
        /// `chronyc activity` against the test's chronyd.
        var activity: () throws -> String

        /// The agent's log line for the next run of `script` on up0 (for `event`, when given);
        /// the hook lines so far on failure.
        func awaitRun(_ script: String, _ event: String? = nil) async throws -> String {
            let wanted = "hook \(script) for " + (event.map { "\($0) up0" } ?? "")
            do {
                return try await agent.stderr.next("\(script) for \(event ?? "any event")") {
                    $0.contains(wanted) && $0.contains(" up0:")
                }
            } catch {
                let lines = await agent.stderr.all.filter { $0.contains("hook") }
                throw TestFailure("\(error); hook lines: \(lines)")
            }
        }
    }

    /// chrony's package unpacked and its own layout copied under a scratch root, symlinks
    /// included (networkd-dispatcher's point into NetworkManager's directory), as dpkg would
    /// install it; chronyd running with one server (192.0.2.1, offline until told otherwise) in
    /// `ns`'s own mount namespace, where up0 (192.0.2.10/24, default route via the server) waits
    /// for its peer's carrier; and netpathd started there with `startup_events = false` and the
    /// `[[hook_dir]]` lines `hookDir` gives for the root. Nothing is installed on the machine.
    static func withChrony(hookDir: (URL) -> String, _ body: (Chrony) async throws -> Void) async throws {
        let deb = try Self.package("chrony")
        try await NetworkNamespace.with(["chrony", "peer"]) { namespaces in
            let (ns, peer) = (namespaces[0], namespaces[1])
            let scratch = try ScratchDirectory.make("np-chrony")
            defer { try? FileManager.default.removeItem(at: scratch) }
            chmod(scratch.path, 0o755)
            let unpacked = scratch.appendingPathComponent("deb")
            try Command.check(["dpkg", "-x", deb.path, unpacked.path])
            let root = scratch.appendingPathComponent("root")
            try Command.check(["mkdir", "-p", root.appendingPathComponent("usr/lib").path])
            try Command.check(["chmod", "-R", "0755", root.path])
            for directory in ["NetworkManager", "networkd-dispatcher"] {
                try Command.check([
                    "cp", "-a", unpacked.appendingPathComponent("usr/lib/\(directory)").path,
                    root.appendingPathComponent("usr/lib/").path,
                ])
            }
            let link = try FileManager.default.destinationOfSymbolicLink(
                atPath: root.appendingPathComponent("usr/lib/networkd-dispatcher/routable.d/chrony-onoffline").path
            )
            #expect(link == "../../NetworkManager/dispatcher.d/20-chrony-onoffline")

            // chronyd's command socket where chronyc looks for it (/run/chrony), in a private /run.
            let conf = scratch.appendingPathComponent("chrony.conf")
            try
                "server 192.0.2.1 offline minpoll 4\npidfile /run/chrony/chronyd.pid\nbindcmdaddress /run/chrony/chronyd.sock\ncmdport 0\n"
                .write(to: conf, atomically: true, encoding: .utf8)
            let chronydPID = scratch.appendingPathComponent("chronyd.pid")

            try ns.addVeth("up0", peer: "up0p", in: peer)
            try ns.ip("link", "set", "lo", "up")
            try ns.ip("link", "set", "up0", "up")
            try ns.ip("addr", "add", "192.0.2.10/24", "dev", "up0")
            try ns.ip("route", "add", "default", "via", "192.0.2.1", "dev", "up0")

            // A mount namespace of its own for netpathd, its hooks and chronyd: a fresh /run (the
            // test's scratch tree, itself under /run, moved back into it), and the package's
            // chronyc at /usr/bin/chronyc (the path the scripts call) through a read-only overlay.
            let tests = scratch.deletingLastPathComponent().path
            let setup = """
                set -e
                mount --rbind \(tests) /srv
                mount -t tmpfs -o mode=0755 tmpfs /run
                mkdir -p \(tests)
                mount --move /srv \(tests)
                mount -t overlay overlay -o lowerdir=\(unpacked.path)/usr/bin:/usr/bin /usr/bin
                \(unpacked.path)/usr/sbin/chronyd -n -x -u root -f \(conf.path) -l \(scratch.path)/chronyd.log </dev/null >/dev/null 2>&1 &
                echo $! > \(chronydPID.path)
                exec "$@"
                """
            let agent = try await AgentHarness(
                namespace: ns,
                config: "[agent]\nstartup_events = false\n" + hookDir(root),
                launcher: ["unshare", "--mount", "--propagation", "private", "sh", "-c", setup, "sh"]
            )
            defer {
                // chronyd first: it is not netpathd's child, and outlives it otherwise.
                if let text = try? String(contentsOf: chronydPID, encoding: .utf8),
                    let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
                {
                    kill(pid, SIGTERM)
                }
                agent.stop()
            }
            try await agent.awaitReady()
            let pid = try String(contentsOf: chronydPID, encoding: .utf8).trimmingCharacters(
                in: .whitespacesAndNewlines
            )
            let activity = {
                try Command.run(["nsenter", "-t", pid, "-m", "-n", "/usr/bin/chronyc", "activity"]).stdout
            }
            // chronyd opens its socket after it starts: a bounded wait with the reason on failure.
            let deadline = ContinuousClock.now + .seconds(10)
            while !(try activity()).contains("sources offline") {
                guard ContinuousClock.now < deadline else {
                    throw TestFailure("chronyd did not answer: \(try activity())")
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(try activity().contains("0 sources online"))
            try await body(Chrony(agent: agent, ns: ns, peer: peer, activity: activity))
        }
    }

    @Test(
        "chrony's 20-chrony-onoffline and 20-chrony-dhcp, from the package's layout, put chronyd's source online on up and offline on down"
    )
    func chrony() async throws {
        try await Self.withChrony(hookDir: { root in
            """
            [[hook_dir]]
            path = "\(root.appendingPathComponent("usr/lib/NetworkManager/dispatcher.d").path)"
            dialect = "networkmanager"
            """
        }) { chrony in
            try chrony.peer.ip("link", "set", "up0p", "up")
            for script in ["20-chrony-dhcp", "20-chrony-onoffline"] {
                let line = try await chrony.awaitRun(script, "up")
                #expect(line.contains(": exited 0 after"), "\(line)")
            }
            #expect(try chrony.activity().contains("1 sources online"), "after up")

            // Without its address the link has no route to the server (the connected route goes
            // too), so chronyc onoffline takes the source offline.
            try chrony.ns.ip("addr", "del", "192.0.2.10/24", "dev", "up0")
            _ = try await chrony.awaitRun("20-chrony-onoffline", "down")
            #expect(try chrony.activity().contains("0 sources online"), "after down")
        }
    }

    @Test(
        "chrony's networkd-dispatcher links, from the package's layout, put chronyd's source online on routable and offline on off"
    )
    func chronyNetworkd() async throws {
        try await Self.withChrony(hookDir: { root in
            // networkd-dispatcher's own search path, under the root; /etc's is absent, as on a
            // box where the administrator added nothing.
            """
            [[hook_dir]]
            path = ["\(root.appendingPathComponent("etc/networkd-dispatcher").path)", \
            "\(root.appendingPathComponent("usr/lib/networkd-dispatcher").path)"]
            dialect = "networkd"
            """
        }) { chrony in
            // Carrier: routable (and configured: the default route is there), so routable.d runs.
            try chrony.peer.ip("link", "set", "up0p", "up")
            let online = try await chrony.awaitRun("chrony-onoffline")
            #expect(online.contains(": exited 0 after"), "\(online)")
            #expect(try chrony.activity().contains("1 sources online"), "after routable")

            // Administratively down: off.d runs, and with the link down there is no route to the
            // server, so chronyc onoffline takes the source offline.
            try chrony.ns.ip("link", "set", "up0", "down")
            let offline = try await chrony.awaitRun("chrony-onoffline")
            #expect(offline.contains(": exited 0 after"), "\(offline)")
            #expect(try chrony.activity().contains("0 sources online"), "after off")
            let hooks = try Command.run([
                BuiltProducts.path("netpathctl"), "hooks", "--socket", chrony.agent.socketPath,
            ])
            #expect(hooks.stdout.contains("etc/networkd-dispatcher (networkd):"), "\(hooks.stdout)")
            #expect(hooks.stdout.contains("no such directory"), "\(hooks.stdout)")
            #expect(hooks.stdout.contains("usr/lib/networkd-dispatcher/off.d (networkd):"), "\(hooks.stdout)")
        }
    }
}
