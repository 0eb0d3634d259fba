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
}
