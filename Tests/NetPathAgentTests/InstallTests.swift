// SPDX-License-Identifier: Apache-2.0

import Foundation
import TestSupport
import Testing

/// The repository: this file is Tests/NetPathAgentTests/InstallTests.swift.
private let repository = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// A scratch directory; `remove()` deletes it.
private struct Scratch {
    let url: URL
    var path: String { url.path }

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("netpath-install-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// `make VARIABLES… TARGET` in the repository, installing the executables the test bundle was built
/// with (NO_BUILD=1): no release build inside a test. An outer `make test` must not leak its
/// flags or jobserver into this make, hence the `env -u`.
@discardableResult
private func make(_ target: String, _ variables: [String]) async throws -> Command.Result {
    // Off the cooperative pool: a run of make takes seconds (see Command.runOffPool).
    let result = try await Command.runOffPool(
        [
            "env", "-u", "MAKEFLAGS", "-u", "MFLAGS", "-u", "MAKELEVEL", "make", "--no-print-directory", "-C",
            repository.path,
        ]
            + [target, "NO_BUILD=1", "INSTALL_BUILD_DIR=\(BuiltProducts.directory.path)"] + variables
    )
    guard result.status == 0 else {
        throw TestFailure(
            "make \(target) \(variables.joined(separator: " ")) exited \(result.status):\n\(result.stdout)\(result.stderr)"
        )
    }
    return result
}

private struct Entry: Equatable, CustomStringConvertible {
    enum Kind { case file, directory, other }
    var kind: Kind
    var mode: mode_t
    var uid: uid_t
    var gid: gid_t
    var description: String { "\(kind) \(String(mode, radix: 8)) \(uid):\(gid)" }
}

private func entry(_ path: String) throws -> Entry {
    var info = stat()
    guard lstat(path, &info) == 0 else { throw TestFailure("\(path): \(String(cString: strerror(errno)))") }
    let kind: Entry.Kind =
        switch info.st_mode & S_IFMT {
        case S_IFREG: .file
        case S_IFDIR: .directory
        default: .other
        }
    return Entry(kind: kind, mode: info.st_mode & 0o7777, uid: info.st_uid, gid: info.st_gid)
}

/// Every path under `root`, relative, directories included.
private func tree(_ root: String) -> Set<String> {
    Set(FileManager.default.enumerator(atPath: root)?.compactMap { $0 as? String } ?? [])
}

private func contents(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

private func text(_ path: String) throws -> String { String(decoding: try contents(path), as: UTF8.self) }

/// The example hooks in config/hooks.d (added by another change; possibly none yet).
private var exampleHooks: [String] {
    let directory = repository.appendingPathComponent("config/hooks.d").path
    return ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
        .filter { !$0.hasPrefix(".") }
        .filter { (try? entry("\(directory)/\($0)").kind) == .file }
        .sorted()
}

private var systemdAnalyzeAvailable: Bool {
    (try? Command.run(["sh", "-c", "command -v systemd-analyze"]).status) == 0
}

/// `systemd-analyze verify` on one unit file, only that unit's own problems
/// (`--recursive-errors=no`: not those of the host's targets it is ordered against).
/// Its exit status is 0 even for unknown keys and unparsable values, which it only prints,
/// so callers look at the output too.
private func verify(_ unit: String) throws -> (status: Int32, output: String) {
    let result = try Command.run(
        ["env", "-u", "SYSTEMD_LOG_LEVEL", "systemd-analyze", "verify", "--recursive-errors=no", "--no-pager", unit]
    )
    return (result.status, (result.stdout + result.stderr).trimmingCharacters(in: .whitespacesAndNewlines))
}

@Suite(.serialized) struct InstallTests {
    @Test func installLaysOutTheExpectedTreeWithSafeModes() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let root = scratch.path

        try await make("install", ["DESTDIR=\(root)"])

        let file0755 = Entry(kind: .file, mode: 0o755, uid: getuid(), gid: getgid())
        let file0644 = Entry(kind: .file, mode: 0o644, uid: getuid(), gid: getgid())
        let directory = Entry(kind: .directory, mode: 0o755, uid: getuid(), gid: getgid())
        var expected: [String: Entry] = [
            "usr/local/bin/netpathd": file0755,
            "usr/local/bin/netpathctl": file0755,
            "usr/local/libexec/netpath/netpath-probe": file0755,
            "lib/systemd/system/netpathd.service": file0644,
            "lib/systemd/system/netpath-wait-online.service": file0644,
            "usr/lib/sysusers.d/netpath.conf": file0644,
            "etc/netpath": directory,
            "etc/netpath/netpath.toml": file0644,
            "etc/netpath/hooks.d": directory,
        ]
        for hook in exampleHooks {
            let executable = access(repository.appendingPathComponent("config/hooks.d/\(hook)").path, X_OK) == 0
            expected["usr/local/share/netpath/examples/hooks.d/\(hook)"] = executable ? file0755 : file0644
        }
        for (path, want) in expected {
            #expect(try entry("\(root)/\(path)") == want, "\(path)")
        }
        // Nothing else but the directories leading to those, all 0755 and nobody else's.
        let parents = Set(
            expected.keys.flatMap { path in
                let parts = path.split(separator: "/")
                return (1..<parts.count).map { parts[..<$0].joined(separator: "/") }
            }
        )
        #expect(tree(root) == Set(expected.keys).union(parents))
        for path in parents.subtracting(expected.keys) {
            #expect(try entry("\(root)/\(path)") == directory, "\(path)")
        }
        if getuid() == 0 {
            #expect(try entry("\(root)/etc/netpath/hooks.d").uid == 0)
        }

        // The hooks directory is empty: examples are never enabled by installing.
        #expect(tree("\(root)/etc/netpath/hooks.d").isEmpty)
        for binary in ["netpathd", "netpathctl"] {
            #expect(try contents("\(root)/usr/local/bin/\(binary)") == contents(BuiltProducts.path(binary)))
        }
        #expect(
            try contents("\(root)/usr/local/libexec/netpath/netpath-probe")
                == contents(BuiltProducts.path("netpath-probe"))
        )
        #expect(
            try contents("\(root)/etc/netpath/netpath.toml")
                == contents(repository.appendingPathComponent("config/netpath.toml").path)
        )
        // The probe helper's user, declared as the Debian package declares it.
        #expect(
            try contents("\(root)/usr/lib/sysusers.d/netpath.conf")
                == contents(repository.appendingPathComponent("packaging/debian/netpath.sysusers").path)
        )
        // With the default PREFIX the installed units are the repository's, byte for byte.
        for unit in ["netpathd.service", "netpath-wait-online.service"] {
            #expect(
                try contents("\(root)/lib/systemd/system/\(unit)")
                    == contents(repository.appendingPathComponent("config/\(unit)").path),
                "\(unit)"
            )
        }
    }

    @Test func prefixIsWrittenIntoTheUnitsExecStart() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }

        try await make("install", ["DESTDIR=\(scratch.path)", "PREFIX=/usr"])

        #expect(try entry("\(scratch.path)/usr/bin/netpathd").kind == .file)
        let unit = try text("\(scratch.path)/lib/systemd/system/netpathd.service")
        let execStart = unit.split(separator: "\n").filter { $0.hasPrefix("ExecStart=") }
        #expect(execStart == ["ExecStart=/usr/bin/netpathd"])
        let original = try text(repository.appendingPathComponent("config/netpathd.service").path)
        #expect(
            unit
                == original.replacingOccurrences(
                    of: "ExecStart=/usr/local/bin/netpathd",
                    with: "ExecStart=/usr/bin/netpathd"
                ).replacingOccurrences(
                    of: "ExecReload=/usr/local/bin/netpathctl reload",
                    with: "ExecReload=/usr/bin/netpathctl reload"
                )
        )
    }

    // The Debian package's layout: the daemon in /usr/sbin, the tool in /usr/bin, and the unit
    // starting the daemon where it is.
    @Test func sbindirTakesTheDaemonAndTheUnitsExecStart() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }

        try await make("install", ["DESTDIR=\(scratch.path)", "PREFIX=/usr", "SBINDIR=/usr/sbin"])

        #expect(try entry("\(scratch.path)/usr/sbin/netpathd").kind == .file)
        #expect(try entry("\(scratch.path)/usr/bin/netpathctl").kind == .file)
        let binaries = tree(scratch.path).filter { $0.hasSuffix("/netpathd") || $0.hasSuffix("/netpathctl") }
        #expect(binaries == ["usr/sbin/netpathd", "usr/bin/netpathctl"])
        // Where SandboxedProbe looks for the helper (HelperLocation.installed).
        #expect(try entry("\(scratch.path)/usr/libexec/netpath/netpath-probe").kind == .file)
        let unit = try text("\(scratch.path)/lib/systemd/system/netpathd.service")
        #expect(unit.split(separator: "\n").filter { $0.hasPrefix("ExecStart=") } == ["ExecStart=/usr/sbin/netpathd"])
        let waitUnit = try text("\(scratch.path)/lib/systemd/system/netpath-wait-online.service")
        #expect(
            waitUnit.split(separator: "\n").filter { $0.hasPrefix("ExecStart=") } == [
                "ExecStart=/usr/bin/netpathctl wait-online"
            ]
        )

        try await make("uninstall", ["DESTDIR=\(scratch.path)", "PREFIX=/usr", "SBINDIR=/usr/sbin"])
        #expect(!tree(scratch.path).contains { $0.hasSuffix("/netpathd") || $0.hasSuffix("/netpathctl") })
    }

    @Test func secondInstallKeepsTheAdministratorsConfigAndHooks() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let etc = "\(scratch.path)/etc/netpath"
        try await make("install", ["DESTDIR=\(scratch.path)"])
        let edited = Data("# edited by the administrator\n[agent]\nsettle = \"2s\"\n".utf8)
        try edited.write(to: URL(fileURLWithPath: "\(etc)/netpath.toml"))
        chmod("\(etc)/netpath.toml", 0o600)
        try Data("#!/bin/sh\n".utf8).write(to: URL(fileURLWithPath: "\(etc)/hooks.d/50-local"))
        chmod("\(etc)/hooks.d/50-local", 0o700)
        chmod("\(etc)/hooks.d", 0o700)

        let second = try await make("install", ["DESTDIR=\(scratch.path)"])

        #expect(try contents("\(etc)/netpath.toml") == edited)
        #expect(try entry("\(etc)/netpath.toml").mode == 0o600)
        #expect(
            try contents("\(etc)/netpath.toml.default")
                == contents(repository.appendingPathComponent("config/netpath.toml").path)
        )
        #expect(try entry("\(etc)/netpath.toml.default").mode == 0o644)
        #expect(second.stdout.contains("\(etc)/netpath.toml.default"))
        #expect(try entry("\(etc)/hooks.d").mode == 0o700)
        #expect(try entry("\(etc)/hooks.d/50-local").mode == 0o700)
        #expect(tree("\(etc)/hooks.d") == ["50-local"])
    }

    @Test func uninstallRemovesWhatInstallAddedButLeavesEtc() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        try await make("install", ["DESTDIR=\(scratch.path)"])

        try await make("uninstall", ["DESTDIR=\(scratch.path)"])

        let left = tree(scratch.path)
        #expect(left.contains("etc/netpath/netpath.toml"))
        #expect(left.contains("etc/netpath/hooks.d"))
        #expect(!left.contains { $0.hasSuffix("netpathd") || $0.hasSuffix("netpathctl") || $0.hasSuffix(".service") })
        #expect(!left.contains { $0.hasPrefix("usr/local/share/netpath") || $0.hasPrefix("usr/local/libexec/netpath") })
        #expect(!left.contains("usr/lib/sysusers.d/netpath.conf"))
    }

    // systemd-analyze verify checks ExecStart= against the real filesystem, so the unit is
    // installed with a PREFIX inside the scratch directory (no DESTDIR): the file verified is
    // exactly what make install writes, pointing at a binary that exists. (--root= would need
    // stand-ins for sysinit.target and basic.target inside the root.)
    @Test(.enabled(if: systemdAnalyzeAvailable || ProcessInfo.processInfo.environment["CI"] == "true"))
    func installedUnitPassesSystemdAnalyzeVerifyWithoutAWord() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let prefix = "\(scratch.path)/prefix"
        try await make(
            "install",
            [
                "PREFIX=\(prefix)", "UNITDIR=\(scratch.path)/units", "SYSCONFDIR=\(scratch.path)/etc",
                "SYSUSERSDIR=\(scratch.path)/sysusers.d",
            ]
        )
        let unit = "\(scratch.path)/units/netpathd.service"
        #expect(try text(unit).contains("\nExecStart=\(prefix)/bin/netpathd\n"))
        // The reload is the package's own client, at the installed path: /bin/kill is not on a
        // minimal Debian (procps), and a signal cannot report a rejected configuration.
        #expect(try text(unit).contains("\nExecReload=\(prefix)/bin/netpathctl reload\n"))

        let result = try verify(unit)

        #expect(result.status == 0, "\(result.output)")
        #expect(result.output == "", "systemd-analyze verify complained:\n\(result.output)")

        // netpath-wait-online beside it: its ExecStart at the installed netpathctl, its
        // Requires=netpathd.service found in the same directory.
        let waitUnit = "\(scratch.path)/units/netpath-wait-online.service"
        #expect(try text(waitUnit).contains("\nExecStart=\(prefix)/bin/netpathctl wait-online\n"))
        let waitResult = try verify(waitUnit)
        #expect(waitResult.status == 0, "\(waitResult.output)")
        #expect(waitResult.output == "", "systemd-analyze verify complained:\n\(waitResult.output)")
    }

    // The control for the test above: an empty output means something only if verify does
    // print the warnings a broken unit deserves.
    @Test(.enabled(if: systemdAnalyzeAvailable || ProcessInfo.processInfo.environment["CI"] == "true"))
    func systemdAnalyzeVerifyReportsAFlawedCopyOfTheUnit() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let unit = try text(repository.appendingPathComponent("config/netpathd.service").path)
            .replacingOccurrences(of: "ExecStart=/usr/local/bin/netpathd", with: "ExecStart=/bin/true")
            .replacingOccurrences(
                of: "LockPersonality=yes",
                with: "LockPersonality=yes\nProtectEverything=yes\nRestrictAddressFamilies=AF_BOGUS"
            )
        let path = "\(scratch.path)/netpathd.service"
        try Data(unit.utf8).write(to: URL(fileURLWithPath: path))

        let result = try verify(path)

        #expect(result.output.contains("ProtectEverything"), "\(result.output)")
        #expect(result.output.contains("AF_BOGUS"), "\(result.output)")
    }
}
