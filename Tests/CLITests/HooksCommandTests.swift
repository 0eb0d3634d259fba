// SPDX-License-Identifier: Apache-2.0

import Foundation
import TestSupport
import Testing

/// `netpathctl hooks --local` as an administrator reads it.
@Suite(.enabled(if: Privileges.namespaceTestsEnabled, "needs root: hooks must be root-owned to be accepted"))
struct HooksCommandTests {
    @Test("the listing names the unsafe directory and keeps a hostile file name on one line")
    func unsafeDirectoryAndHostileName() throws {
        let base = try ScratchDirectory.make("np-hookscli")
        defer { try? FileManager.default.removeItem(at: base) }
        let hooks = base.appendingPathComponent("hooks.d")
        let drop = base.appendingPathComponent("drop")
        for directory in [hooks, drop] {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        }
        chmod(hooks.path, 0o755)
        chmod(drop.path, 0o1777)
        for file in [
            hooks.appendingPathComponent("10-fine"), drop.appendingPathComponent("target"),
            hooks.appendingPathComponent("30-two\nlines"),
        ] {
            try "#!/bin/sh\nexit 0\n".write(to: file, atomically: false, encoding: .utf8)
            chmod(file.path, 0o755)
        }
        try FileManager.default.createSymbolicLink(
            atPath: hooks.appendingPathComponent("20-linked").path,
            withDestinationPath: drop.appendingPathComponent("target").path
        )
        let config = base.appendingPathComponent("netpath.toml")
        try "[agent]\nhooks_dir = \"\(hooks.path)\"\n".write(to: config, atomically: false, encoding: .utf8)

        let result = try Command.run([BuiltProducts.path("netpathctl"), "hooks", "--local", "--config", config.path])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == 4, "one header and one line per file: \(result.stdout)")
        #expect(lines.contains { $0.hasPrefix("10-fine") && $0.contains("accepted") })
        #expect(
            lines.contains {
                $0.hasPrefix("20-linked") && $0.contains("refused")
                    && $0.contains("directory \(drop.path) is writable by group or others (mode 1777)")
            },
            "\(result.stdout)"
        )
        #expect(lines.contains { $0.hasPrefix("30-two\\nlines") && $0.contains("refused") }, "\(result.stdout)")
    }

    @Test("with [[hook_dir]] every directory is listed under its path and dialect, with overridden and masked files")
    func everyDirectoryWithItsDialect() throws {
        let base = try ScratchDirectory.make("np-hookscli")
        defer { try? FileManager.default.removeItem(at: base) }
        let directories = ["hooks.d", "etc-nm", "lib-nm"].map { base.appendingPathComponent($0) }
        for directory in directories {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
            chmod(directory.path, 0o755)
        }
        let (hooks, etc, lib) = (directories[0], directories[1], directories[2])
        for file in [
            hooks.appendingPathComponent("10-native"), etc.appendingPathComponent("20-chrony"),
            lib.appendingPathComponent("20-chrony"), lib.appendingPathComponent("30-masked"),
        ] {
            try "#!/bin/sh\nexit 0\n".write(to: file, atomically: false, encoding: .utf8)
            chmod(file.path, 0o755)
        }
        try FileManager.default.createSymbolicLink(
            atPath: etc.appendingPathComponent("30-masked").path,
            withDestinationPath: "/dev/null"
        )
        let config = base.appendingPathComponent("netpath.toml")
        try """
        [agent]
        hooks_dir = "\(hooks.path)"
        [[hook_dir]]
        path = ["\(etc.path)", "\(lib.path)"]
        dialect = "networkmanager"
        """.write(to: config, atomically: false, encoding: .utf8)

        let result = try Command.run([BuiltProducts.path("netpathctl"), "hooks", "--local", "--config", config.path])
        #expect(result.status == 0, "\(result.stderr)")
        let sections = result.stdout.components(separatedBy: "\n\n")
        #expect(sections.count == 3, "\(result.stdout)")
        #expect(sections[0].hasPrefix("\(hooks.path) (netpath):\nHOOK"), "\(result.stdout)")
        #expect(sections[0].contains("10-native") && sections[0].contains("accepted"))
        #expect(sections[1].hasPrefix("\(etc.path) (networkmanager):\n"), "\(result.stdout)")
        #expect(sections[1].split(separator: "\n").contains { $0.hasPrefix("20-chrony") && $0.contains("accepted") })
        #expect(sections[1].split(separator: "\n").contains { $0.hasPrefix("30-masked") && $0.contains("masked") })
        #expect(sections[2].hasPrefix("\(lib.path) (networkmanager):\n"), "\(result.stdout)")
        #expect(
            sections[2].split(separator: "\n").contains { $0.hasPrefix("20-chrony") && $0.contains("overridden") },
            "\(result.stdout)"
        )

        let json = try Command.run([
            BuiltProducts.path("netpathctl"), "hooks", "--local", "--json", "--config", config.path,
        ])
        let reports = try #require(
            try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: String]]
        )
        #expect(
            reports.filter { $0["dialect"] == "networkmanager" }.compactMap { $0["name"] }
                == ["20-chrony", "30-masked", "20-chrony", "30-masked"]
        )
        #expect(reports.first { $0["name"] == "10-native" }?["directory"] == hooks.path)

        let check = try Command.run([BuiltProducts.path("netpathctl"), "check-config", config.path])
        #expect(
            check.stdout.hasSuffix("hooks in \(hooks.path) and \(etc.path):\(lib.path) (networkmanager)\n"),
            "\(check.stdout)"
        )
    }

    @Test("missing and empty directories are listed as such; a networkd directory by its state directories")
    func missingEmptyAndNetworkd() throws {
        let base = try ScratchDirectory.make("np-hookscli")
        defer { try? FileManager.default.removeItem(at: base) }
        for directory in ["hooks.d", "empty-nm", "nd", "nd/routable.d", "nd-empty", "nd-empty/off.d"] {
            let url = base.appendingPathComponent(directory)
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
            chmod(url.path, 0o755)
        }
        let script = base.appendingPathComponent("nd/routable.d/50-vpn")
        try "#!/bin/sh\nexit 0\n".write(to: script, atomically: false, encoding: .utf8)
        chmod(script.path, 0o755)
        let config = base.appendingPathComponent("netpath.toml")
        let path = { (name: String) in base.appendingPathComponent(name).path }
        try """
        [agent]
        hooks_dir = "\(path("hooks.d"))"
        [[hook_dir]]
        path = ["\(path("empty-nm"))", "\(path("gone-nm"))"]
        dialect = "networkmanager"
        [[hook_dir]]
        path = ["\(path("nd"))", "\(path("nd-empty"))", "\(path("nd-gone"))"]
        dialect = "networkd"
        """.write(to: config, atomically: false, encoding: .utf8)

        let result = try Command.run([BuiltProducts.path("netpathctl"), "hooks", "--local", "--config", config.path])
        #expect(result.status == 0, "\(result.stderr)")
        let sections = result.stdout.components(separatedBy: "\n\n")
        func section(_ heading: String) -> String? { sections.first { $0.hasPrefix(heading + ":\n") } }
        #expect(section("\(path("hooks.d")) (netpath)")?.contains("-     empty") == true, "\(result.stdout)")
        #expect(section("\(path("empty-nm")) (networkmanager)")?.contains("empty") == true, "\(result.stdout)")
        #expect(
            section("\(path("gone-nm")) (networkmanager)")?.contains("missing  no such directory") == true,
            "\(result.stdout)"
        )
        #expect(section("\(path("nd")) (networkd)") == nil, "listed by its state directory: \(result.stdout)")
        #expect(section("\(path("nd/routable.d")) (networkd)")?.contains("50-vpn") == true, "\(result.stdout)")
        #expect(
            section("\(path("nd-empty")) (networkd)")?.contains("no scripts in any state directory") == true,
            "\(result.stdout)"
        )
        #expect(section("\(path("nd-gone")) (networkd)")?.contains("missing") == true, "\(result.stdout)")
        #expect(sections.count == 6, "\(result.stdout)")

        // hooks_dir alone, missing: one line, as before [[hook_dir]].
        try "[agent]\nhooks_dir = \"\(path("nowhere"))\"\n".write(to: config, atomically: false, encoding: .utf8)
        let alone = try Command.run([BuiltProducts.path("netpathctl"), "hooks", "--local", "--config", config.path])
        #expect(alone.stdout == "no hooks in \(path("nowhere")) (missing)\n", "\(alone.stdout)")

        let check = try Command.run([BuiltProducts.path("netpathctl"), "check-config", config.path])
        #expect(check.status == 0)
    }
}
