// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathCore
import TestSupport
import Testing

/// `make deb`: what the package holds, what lintian says of it, and what installing, upgrading,
/// removing and purging it does, in a scratch root that is not this machine's.
@Suite(
    .serialSuite,
    .enabled(if: DebianPackage.testsEnabled, "needs root and make test-deps' tools (lintian, mandoc, …)")
)
struct DebianPackageTests {
    private static func text(_ path: String) throws -> String {
        String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
    }

    @Test("lintian finds no error and no warning in the package")
    func lintianIsClean() async throws {
        let package = try await DebianPackage.current()

        // --pedantic shows every tag; --fail-on makes errors and warnings (only) fail the run.
        let result = try Command.run(["lintian", "--pedantic", "--fail-on", "error,warning", package.path])

        let complaints = result.stdout.split(separator: "\n").filter { $0.hasPrefix("E: ") || $0.hasPrefix("W: ") }
        #expect(complaints.isEmpty, "lintian:\n\(complaints.joined(separator: "\n"))")
        #expect(result.status == 0, "lintian exited \(result.status):\n\(result.stdout)\(result.stderr)")
        // No override silences anything: there is none to explain.
        #expect(!FileManager.default.fileExists(atPath: "\(package.contents)/usr/share/lintian/overrides"))
    }

    @Test(
        "Version is NetPathVersion.current; Depends comes from the binaries (libnl, a libc6 that loads them; no Swift), and names systemd-sysusers"
    )
    func controlFields() async throws {
        let package = try await DebianPackage.current()

        let fields = try Command.check([
            "dpkg-deb", "--field", package.path, "Package", "Version", "Architecture", "Depends",
        ])

        #expect(fields.contains("Package: netpath\n"))
        #expect(fields.contains("Version: \(NetPathVersion.current)\n"))
        #expect(fields.contains("Architecture: \(try DebianPackage.architecture)\n"))
        let depends = fields.split(separator: "\n").first { $0.hasPrefix("Depends: ") }.map(String.init) ?? ""
        let names = Set(
            depends.dropFirst("Depends: ".count).split(separator: ",").map {
                $0.trimmingCharacters(in: .whitespaces).split(separator: " ")[0]
            }
        )
        for library in ["libc6", "libnl-3-200", "libnl-route-3-200", "libcurl4", "libseccomp2"] {
            #expect(names.contains(Substring(library)), "\(depends)")
        }
        #expect(!depends.lowercased().contains("swift"), "\(depends)")
        // The postinst runs systemd-sysusers (the probe helper's user), as dh_installsysusers's
        // dependency names it.
        #expect(depends.contains("systemd | systemd-standalone-sysusers | systemd-sysusers"), "\(depends)")
        // libc6's minimum covers every glibc version the binaries need, symbol or not
        // (GLIBC_ABI_DT_RELR has none, and dpkg-shlibdeps alone misses it): as libc6's
        // symbols file dates them.
        let minimum = try #require(depends.firstMatch(of: /libc6 \(>= ([^)]+)\)/)).1
        let symbols = try String(
            contentsOfFile: try Command.check(["dpkg-query", "--control-path", "libc6", "symbols"])
                .trimmingCharacters(in: .whitespacesAndNewlines),
            encoding: .utf8
        )
        for binary in ["usr/sbin/netpathd", "usr/bin/netpathctl", "usr/libexec/netpath/netpath-probe"] {
            let needs = try Command.check(["objdump", "-p", "\(package.contents)/\(binary)"])
                .components(separatedBy: "required from libc.so.6:\n").last!
                .split(separator: "\n").prefix { !$0.contains("required from") }
                .compactMap { $0.split(separator: " ").last.map(String.init) }.filter { $0.hasPrefix("GLIBC_") }
            #expect(needs.contains("GLIBC_ABI_DT_RELR"), "\(binary) needs \(needs)")
            for name in needs {
                let line = symbols.split(separator: "\n").first { $0.hasPrefix(" \(name)@\(name) ") }
                let since = try #require(line?.split(separator: " ").last, "\(name) is not in libc6's symbols file")
                let covered = try Command.run(["dpkg", "--compare-versions", String(minimum), "ge", String(since)])
                #expect(
                    covered.status == 0,
                    "\(binary) needs \(name) (libc6 \(since)), Depends has libc6 (>= \(minimum))"
                )
            }
        }
        let conffiles = try Command.check(["dpkg-deb", "--info", package.path, "conffiles"])
        #expect(conffiles == "/etc/netpath/netpath.toml\n")
    }

    @Test("the package holds the binaries, unit, configuration, docs, pages and completions, root's, and nothing else")
    func contents() async throws {
        let package = try await DebianPackage.current()
        let repository = DebianPackage.repository.path

        let listing = try Command.check(["dpkg-deb", "--contents", package.path])

        var entries: [String: String] = [:]  // path → "mode owner"
        for line in listing.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6 else { continue }
            let path = String(fields[5].dropFirst(2))  // "./usr/bin/…" → "usr/bin/…"
            if !path.isEmpty {
                entries[path.hasSuffix("/") ? String(path.dropLast()) : path] = "\(fields[0]) \(fields[1])"
            }
        }
        let executable = "-rwxr-xr-x root/root"
        let file = "-rw-r--r-- root/root"
        var expected: [String: String] = [
            "usr/sbin/netpathd": executable,
            "usr/bin/netpathctl": executable,
            "usr/libexec/netpath/netpath-probe": executable,
            "lib/systemd/system/netpathd.service": file,
            "lib/systemd/system/netpath-wait-online.service": file,
            "etc/netpath/netpath.toml": file,
            "etc/netpath/hooks.d": "drwxr-xr-x root/root",
            "usr/share/doc/netpath/copyright": file,
            "usr/share/doc/netpath/changelog.gz": file,
            "usr/share/man/man8/netpathd.8.gz": file,
            "usr/share/man/man8/netpathctl.8.gz": file,
            "usr/share/man/man5/netpath.toml.5.gz": file,
            "usr/share/man/man7/netpath-hooks.7.gz": file,
            "usr/lib/sysusers.d/netpath.conf": file,
        ]
        for tool in ["netpathd", "netpathctl"] {
            expected["usr/share/bash-completion/completions/\(tool)"] = file
            expected["usr/share/zsh/vendor-completions/_\(tool)"] = file
            expected["usr/share/fish/vendor_completions.d/\(tool).fish"] = file
        }
        for (source, target) in [("config/hooks.d", "hooks.d"), ("Examples/traces", "traces")] {
            for name in try FileManager.default.contentsOfDirectory(atPath: "\(repository)/\(source)") {
                let isExecutable = access("\(repository)/\(source)/\(name)", X_OK) == 0
                expected["usr/share/doc/netpath/examples/\(target)/\(name)"] = isExecutable ? executable : file
            }
        }
        let files = entries.filter { !$0.value.hasPrefix("d") || $0.key == "etc/netpath/hooks.d" }
        #expect(files == expected)
        // Every directory leads to one of those, and is root's and 0755.
        for (path, entry) in entries where entry.hasPrefix("d") {
            #expect(entry == "drwxr-xr-x root/root", "\(path)")
            #expect(expected.keys.contains { $0 == path || $0.hasPrefix(path + "/") }, "\(path) holds nothing expected")
        }

        // The unit starts the daemon where the package puts it; the rest is the repository's unit.
        let unit = try Self.text("\(package.contents)/lib/systemd/system/netpathd.service")
        #expect(unit.split(separator: "\n").filter { $0.hasPrefix("ExecStart=") } == ["ExecStart=/usr/sbin/netpathd"])
        #expect(
            unit
                == (try Self.text("\(repository)/config/netpathd.service")).replacingOccurrences(
                    of: "ExecStart=/usr/local/bin/netpathd",
                    with: "ExecStart=/usr/sbin/netpathd"
                ).replacingOccurrences(
                    of: "ExecReload=/usr/local/bin/netpathctl reload",
                    with: "ExecReload=/usr/bin/netpathctl reload"
                )
        )
        #expect(
            try Self.text("\(package.contents)/lib/systemd/system/netpath-wait-online.service")
                == (try Self.text("\(repository)/config/netpath-wait-online.service")).replacingOccurrences(
                    of: "ExecStart=/usr/local/bin/netpathctl wait-online",
                    with: "ExecStart=/usr/bin/netpathctl wait-online"
                )
        )
        #expect(
            try Self.text("\(package.contents)/etc/netpath/netpath.toml")
                == Self.text("\(repository)/config/netpath.toml")
        )
        #expect(try FileManager.default.contentsOfDirectory(atPath: "\(package.contents)/etc/netpath/hooks.d").isEmpty)
        #expect(
            try Self.text("\(package.contents)/usr/lib/sysusers.d/netpath.conf")
                == Self.text("\(repository)/packaging/debian/netpath.sysusers")
        )
    }

    @Test(
        "install enables the unit inside the root and creates the probe helper's user; an edited conffile survives the upgrade; purge leaves only that user"
    )
    func installUpgradeRemovePurge() async throws {
        try Privileges.requireRoot()
        let current = try await DebianPackage.current()
        let upgrade = try await DebianPackage.upgrade()
        let root = try ScratchRoot()
        defer { root.remove() }
        let before = root.tree
        let hostWants = "/etc/systemd/system/multi-user.target.wants/netpathd.service"
        let hostWasEnabled = FileManager.default.fileExists(atPath: hostWants)
        let wants = "\(root.path)/etc/systemd/system/multi-user.target.wants/netpathd.service"

        // Install: systemd does not run here (nor under --root), so the unit is enabled for
        // the next boot, inside the root, and nothing is started.
        try root.dpkg(["--install", current.path])
        #expect(try root.query("${Version} ${db:Status-Abbrev}") == "\(current.version) ii ")
        #expect(FileManager.default.isExecutableFile(atPath: "\(root.path)/usr/sbin/netpathd"))
        #expect(
            try FileManager.default.destinationOfSymbolicLink(atPath: wants) == "/lib/systemd/system/netpathd.service"
        )
        #expect(
            FileManager.default.fileExists(atPath: hostWants) == hostWasEnabled,
            "enabled on this machine, not in the root"
        )
        // netpath-wait-online is installed, not enabled: a boot must not start to wait for the
        // network without the administrator's choice.
        #expect(FileManager.default.fileExists(atPath: "\(root.path)/lib/systemd/system/netpath-wait-online.service"))
        #expect(
            !FileManager.default.fileExists(
                atPath: "\(root.path)/etc/systemd/system/network-online.target.wants/netpath-wait-online.service"
            )
        )
        #expect(try root.query("${Conffiles}").contains("/etc/netpath/netpath.toml "))
        // The probe helper's system user, made by systemd-sysusers inside the root.
        let probeUser = { () throws -> [String] in
            try Self.text("\(root.path)/etc/passwd").split(separator: "\n").map(String.init)
                .filter { $0.hasPrefix("netpath-probe:") }
        }
        let users = try probeUser()
        #expect(
            users.count == 1 && users[0].hasSuffix(":netpath connectivity probes:/nonexistent:/usr/sbin/nologin"),
            "\(users)"
        )
        let fields = try #require(users.first).split(separator: ":", omittingEmptySubsequences: false)
        let uid = try #require(Int(fields[2]))
        #expect(uid > 0 && uid < 1000, "a system user's uid: \(uid)")
        // And a group of its own, which is the user's group (the helper takes pw_gid).
        let groups = try Self.text("\(root.path)/etc/group").split(separator: "\n").filter {
            $0.hasPrefix("netpath-probe:")
        }
        #expect(
            groups.count == 1 && groups.first?.split(separator: ":", omittingEmptySubsequences: false)[2] == fields[3],
            "\(groups)"
        )
        var hooks = stat()
        #expect(stat("\(root.path)/etc/netpath/hooks.d", &hooks) == 0)
        #expect(hooks.st_mode & 0o7777 == 0o755 && hooks.st_uid == 0 && hooks.st_gid == 0)

        // The administrator edits the configuration and adds a hook.
        let config = "\(root.path)/etc/netpath/netpath.toml"
        let edited = try Self.text(config) + "# edited by the administrator\n"
        try edited.write(toFile: config, atomically: false, encoding: .utf8)
        try #require(
            FileManager.default.createFile(
                atPath: "\(root.path)/etc/netpath/hooks.d/50-local",
                contents: Data("#!/bin/sh\n".utf8),
                attributes: [.posixPermissions: 0o755]
            ),
            "cannot write the administrator's hook"
        )

        // Upgrade: the package's own copy did not change, so dpkg keeps the edit without asking.
        try root.dpkg(["--install", upgrade.path])
        #expect(try root.query("${Version} ${db:Status-Abbrev}") == "\(upgrade.version) ii ")
        #expect(try Self.text(config) == edited)
        #expect(try probeUser() == users, "the upgrade keeps the probe helper's user as it was")
        #expect(!root.tree.contains { $0.contains(".dpkg-") }, "\(root.tree.filter { $0.contains(".dpkg-") })")
        #expect(
            (try? FileManager.default.destinationOfSymbolicLink(atPath: wants))
                == "/lib/systemd/system/netpathd.service",
            "an upgrade keeps the unit enabled"
        )

        // Remove: the program goes, the administrator's files stay, the unit is masked.
        try root.dpkg(["--remove", "netpath"])
        #expect(!FileManager.default.fileExists(atPath: "\(root.path)/usr/sbin/netpathd"))
        #expect(try Self.text(config) == edited)
        #expect(FileManager.default.fileExists(atPath: "\(root.path)/etc/netpath/hooks.d/50-local"))
        #expect(
            try FileManager.default.destinationOfSymbolicLink(
                atPath: "\(root.path)/etc/systemd/system/netpathd.service"
            )
                == "/dev/null"
        )

        // Purge: nothing of netpath is left, not even the administrator's hook or the log
        // directory systemd made for the unit (LogsDirectory=, where event-log writes).
        try FileManager.default.createDirectory(
            atPath: "\(root.path)/var/log/netpath",
            withIntermediateDirectories: false
        )
        try Data("{}\n".utf8).write(to: URL(fileURLWithPath: "\(root.path)/var/log/netpath/events.jsonl"))
        try root.dpkg(["--purge", "netpath"])
        // The user stays, as Debian's packages leave theirs on purge (a uid may still own files
        // somewhere): the root's user database is all that is left.
        let userDatabase: Set<String> = ["etc/passwd", "etc/group", "etc/shadow", "etc/gshadow", "etc/.pwd.lock"]
        #expect(root.tree.subtracting(userDatabase) == before, "left behind: \(root.tree.subtracting(before).sorted())")
        let known = try Command.run(["dpkg-query", "--admindir=\(root.path)/var/lib/dpkg", "--show", "netpath"])
        #expect(known.status != 0, "dpkg still knows netpath after the purge: \(known.stdout)")
    }

    @Test(
        "a conffile changed both by the administrator and by the package: the administrator's stays, the new one beside it"
    )
    func conffileConflict() async throws {
        try Privileges.requireRoot()
        let current = try await DebianPackage.current()
        let root = try ScratchRoot()
        defer { root.remove() }
        // A later package whose default configuration changed: the upgrade package, unpacked and
        // rebuilt with one more line in netpath.toml (uncompressed: this is a test fixture).
        let unpacked = "\(root.path)-repack"
        defer { try? FileManager.default.removeItem(atPath: unpacked) }
        try Command.check(["dpkg-deb", "--raw-extract", current.path, unpacked])
        let shipped = try Self.text("\(unpacked)/etc/netpath/netpath.toml") + "# a new default\n"
        try shipped.write(toFile: "\(unpacked)/etc/netpath/netpath.toml", atomically: false, encoding: .utf8)
        let control = try Self.text("\(unpacked)/DEBIAN/control").replacingOccurrences(
            of: "Version: \(current.version)\n",
            with: "Version: \(DebianPackage.upgradeVersion)\n"
        )
        try control.write(toFile: "\(unpacked)/DEBIAN/control", atomically: false, encoding: .utf8)
        let changed = "\(unpacked).deb"
        defer { try? FileManager.default.removeItem(atPath: changed) }
        try Command.check(["dpkg-deb", "--root-owner-group", "-Znone", "--build", unpacked, changed])

        try root.dpkg(["--install", current.path])
        let config = "\(root.path)/etc/netpath/netpath.toml"
        let edited = try Self.text(config) + "# edited by the administrator\n"
        try edited.write(toFile: config, atomically: false, encoding: .utf8)

        // With no terminal, dpkg would ask; --force-confold gives the answer "keep mine".
        try root.dpkg(["--force-confold", "--install", changed])

        #expect(try Self.text(config) == edited)
        #expect(try Self.text(config + ".dpkg-dist") == shipped)

        try root.dpkg(["--purge", "netpath"])
        #expect(!FileManager.default.fileExists(atPath: "\(root.path)/etc/netpath"))
    }

    @Test(
        "the packaged binaries' code is laid out in build-support/netpath.order; a stale file only warns"
    )
    func codeOrder() async throws {
        // The package strips the binaries it takes from `make install-build`: those keep their symbols.
        _ = try await DebianPackage.current()
        let repository = DebianPackage.repository.path
        let order = try Self.text("\(repository)/build-support/netpath.order").split(separator: "\n")
            .filter { !$0.hasPrefix("#") }.map(String.init)
        #expect(order.count > 1000, "build-support/netpath.order lists only \(order.count) functions")

        // Function name → address, from each binary's symbol table.
        var symbols: [String: [String: UInt64]] = [:]
        for binary in ["netpathd", "netpathctl"] {
            var functions: [String: UInt64] = [:]
            let listing = try Command.check(["nm", "--defined-only", "\(repository)/.build/install/release/\(binary)"])
            for line in listing.split(separator: "\n") {
                let fields = line.split(separator: " ")
                guard fields.count == 3, "tTwW".contains(fields[1]), let address = UInt64(fields[0], radix: 16) else {
                    continue
                }
                functions[String(fields[2])] = address
            }
            symbols[binary] = functions
        }
        // A file recorded by another toolchain (which renames the runtime's functions) or before
        // much of the code changed costs memory, not correctness: a warning, never a failure.
        let known = symbols.values.reduce(into: Set<String>()) { $0.formUnion($1.keys) }
        let stale = order.filter { !known.contains($0) }
        guard Double(stale.count) <= 0.15 * Double(order.count) else {
            Issue.record(
                "\(stale.count) of the \(order.count) functions in build-support/netpath.order are in neither binary (e.g. \(stale.prefix(3))): record it anew with `make order` (as root)",
                severity: .warning
            )
            return
        }
        for (binary, functions) in symbols.sorted(by: { $0.key < $1.key }) {
            // Laid out in that order, the functions sit in few of the code's 64 KiB windows (the
            // unit the kernel maps code in); in the linker's own order they spread over most.
            let windows = Set(order.compactMap { functions[$0].map { $0 >> 16 } }).count
            let (first, last) = (try #require(functions.values.min()), try #require(functions.values.max()))
            let span = (last >> 16) - (first >> 16) + 1
            #expect(
                Double(windows) <= 0.6 * Double(span),
                "\(binary): the ordered functions are in \(windows) of \(span) 64 KiB windows: is the order applied?"
            )
        }
    }

    @Test("the installed binaries run with the Swift toolchain hidden: nothing in ldd or RUNPATH points into it")
    func binariesNeedNoToolchain() async throws {
        try Privileges.requireRoot()
        let package = try await DebianPackage.current()
        let root = try ScratchRoot()
        defer { root.remove() }
        try root.dpkg(["--install", package.path])
        // The toolchain's runtime libraries: where the test build's own netpathctl loads
        // libswiftCore.so from (its RUNPATH), e.g. /opt/swift/usr/lib/swift/linux.
        let debugLibraries = try Command.check(["ldd", BuiltProducts.path("netpathctl")])
        let core = try #require(
            debugLibraries.split(separator: "\n").first { $0.contains("libswiftCore.so => ") },
            "the test build's netpathctl does not load libswiftCore.so:\n\(debugLibraries)"
        )
        let runtime = URL(fileURLWithPath: String(core.split(separator: " ")[2])).deletingLastPathComponent().path
        let toolchain = try #require(runtime.range(of: "/usr/lib/swift").map { String(runtime[..<$0.lowerBound]) })
        #expect(!toolchain.isEmpty && toolchain != "/usr", "no toolchain directory in \(runtime)")

        for binary in ["usr/sbin/netpathd", "usr/bin/netpathctl", "usr/libexec/netpath/netpath-probe"] {
            let ldd = try Command.check(["ldd", "\(root.path)/\(binary)"])
            #expect(!ldd.contains(toolchain) && !ldd.contains("libswift"), "\(binary):\n\(ldd)")
            let dynamic = try Command.check(["readelf", "--dynamic", "\(root.path)/\(binary)"])
            let paths = dynamic.split(separator: "\n").filter { $0.contains("RUNPATH") || $0.contains("RPATH") }
            #expect(!paths.contains { $0.contains(toolchain) || $0.contains("swift") }, "\(binary): \(paths)")
        }

        // In a mount namespace of their own, with an empty directory over the runtime's, and
        // an empty environment (no LD_LIBRARY_PATH, no PATH into the toolchain).
        func hidden(_ command: [String]) throws -> Command.Result {
            try Command.run(
                [
                    "unshare", "--mount", "--propagation", "private", "sh", "-c",
                    "mount -t tmpfs none \"$0\" && exec \"$@\"", runtime,
                ]
                    + ["env", "-i"] + command
            )
        }
        let version = try hidden(["\(root.path)/usr/bin/netpathctl", "--version"])
        #expect(
            version.status == 0 && version.stdout == "\(NetPathVersion.current)\n",
            "\(version.stdout)\(version.stderr)"
        )
        let help = try hidden(["\(root.path)/usr/sbin/netpathd", "--help"])
        #expect(help.status == 0 && help.stdout.contains("--config <FILE>"), "\(help.stdout)\(help.stderr)")
        let check = try hidden([
            "\(root.path)/usr/bin/netpathctl", "check-config", "\(root.path)/etc/netpath/netpath.toml",
        ])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        // The control: hidden that way, a binary that needs the toolchain does not start.
        let needsToolchain = try hidden([BuiltProducts.path("netpathctl"), "--version"])
        #expect(needsToolchain.status != 0 && needsToolchain.stderr.contains("libswift"), "\(needsToolchain.stderr)")
    }
}
