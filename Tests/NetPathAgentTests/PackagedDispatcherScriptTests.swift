import Foundation
import TestSupport
import Testing

/// Scripts that Debian packages ship for NetworkManager-dispatcher, run unchanged by netpathd
/// from a copy of the package's own layout, doing their job against their daemon running in
/// the test's namespaces.
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

    @Test(
        "chrony's 20-chrony-onoffline and 20-chrony-dhcp, from the package's layout, put chronyd's source online on up and offline on down"
    )
    func chrony() async throws {
        let deb = try Self.package("chrony")
        try await NetworkNamespace.with(["chrony", "peer"]) { namespaces in
            let (ns, peer) = (namespaces[0], namespaces[1])
            let scratch = try ScratchDirectory.make("np-chrony")
            defer { try? FileManager.default.removeItem(at: scratch) }
            chmod(scratch.path, 0o755)
            let unpacked = scratch.appendingPathComponent("deb")
            try Command.check(["dpkg", "-x", deb.path, unpacked.path])
            // The package's own layout, symlinks included (networkd-dispatcher's point into
            // NetworkManager's directory), copied as dpkg would install it.
            let root = scratch.appendingPathComponent("root")
            try Command.check(["mkdir", "-p", root.appendingPathComponent("usr/lib").path])
            try Command.check(["chmod", "-R", "0755", root.path])
            for directory in ["NetworkManager", "networkd-dispatcher"] {
                try Command.check([
                    "cp", "-a", unpacked.appendingPathComponent("usr/lib/\(directory)").path,
                    root.appendingPathComponent("usr/lib/").path,
                ])
            }
            let dispatcher = root.appendingPathComponent("usr/lib/NetworkManager/dispatcher.d")
            let link = try FileManager.default.destinationOfSymbolicLink(
                atPath: root.appendingPathComponent("usr/lib/networkd-dispatcher/routable.d/chrony-onoffline").path
            )
            #expect(link == "../../NetworkManager/dispatcher.d/20-chrony-onoffline")

            // chronyd with one server, offline until told otherwise; its command socket where
            // chronyc looks for it (/run/chrony), in a private /run.
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
            // chronyc at /usr/bin/chronyc (the path the scripts call) through a read-only
            // overlay. Nothing is installed on the machine.
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
                config: """
                    [agent]
                    startup_events = false
                    [[hook_dir]]
                    path = "\(dispatcher.path)"
                    dialect = "networkmanager"
                    """,
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
            /// The agent's log line for `script`'s run on `event`; the hook lines so far on failure.
            func awaitRun(_ script: String, _ event: String) async throws -> String {
                do {
                    return try await agent.stderr.next("\(script) for \(event)") {
                        $0.contains("hook \(script) for \(event) up0")
                    }
                } catch {
                    let lines = await agent.stderr.all.filter { $0.contains("hook") }
                    throw TestFailure("\(error); hook lines: \(lines)")
                }
            }
            try await agent.awaitReady()
            let pid = try String(contentsOf: chronydPID, encoding: .utf8).trimmingCharacters(
                in: .whitespacesAndNewlines
            )
            func activity() throws -> String {
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

            try peer.ip("link", "set", "up0p", "up")
            for script in ["20-chrony-dhcp", "20-chrony-onoffline"] {
                let line = try await awaitRun(script, "up")
                #expect(line.contains(": exited 0 after"), "\(line)")
            }
            #expect(try activity().contains("1 sources online"), "after up")

            // Without its address the link has no route to the server (the connected route goes
            // too), so chronyc onoffline takes the source offline.
            try ns.ip("addr", "del", "192.0.2.10/24", "dev", "up0")
            _ = try await awaitRun("20-chrony-onoffline", "down")
            #expect(try activity().contains("0 sources online"), "after down")
        }
    }
}
