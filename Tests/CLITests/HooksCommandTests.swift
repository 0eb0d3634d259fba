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
}
