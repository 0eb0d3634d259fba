// SPDX-License-Identifier: Apache-2.0

import Foundation
import TestSupport
import Testing

/// `netpathctl check-config` as an administrator runs it.
struct CheckConfigCommandTests {
    static func check(_ text: String?) throws -> (Command.Result, String) {
        guard let text else {
            return (
                try Command.run([BuiltProducts.path("netpathctl"), "check-config", "/nonexistent/netpath.toml"]),
                "/nonexistent/netpath.toml"
            )
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("np-check-\(UUID().uuidString).toml")
        try text.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        return (try Command.run([BuiltProducts.path("netpathctl"), "check-config", file.path]), file.path)
    }

    @Test("a valid file exits 0 with a one-line summary")
    func validFile() throws {
        let (result, path) = try Self.check(
            """
            [[policy]]
            name = "uplink"
            metered = "deny"
            [[rule]]
            name = "wired-up"
            on = ["up"]
            type = ["wired"]
            """
        )
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout == "\(path): valid: 1 policy, 1 rule, 0 interface overrides, hooks in /etc/netpath/hooks.d\n"
        )
    }

    @Test("the summary says when connectivity is probed, how and how often")
    func connectivitySummary() throws {
        let (result, path) = try Self.check("[connectivity]\nmethod = \"icmp\"\ninterval = \"30s\"\n")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout
                == "\(path): valid: 1 policy, no rules (dispatcher mode), 0 interface overrides, hooks in /etc/netpath/hooks.d, connectivity probed by icmp every 30s\n"
        )
    }

    @Test("an invalid file exits 1 and lists every error as FILE:LINE:COL: error: …")
    func invalidFile() throws {
        let (result, path) = try Self.check(
            """
            [agent]
            hook_timeout = "30 seconds"
            [[policy]]
            name = "uplink"
            metered = "never"
            [[rule]]
            name = "r"
            on = ["upp"]
            """
        )
        #expect(result.status == 1)
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(result.stderr)")
        #expect(lines.allSatisfy { $0.hasPrefix(path + ":") && $0.contains(": error: ") })
        #expect(lines[0].hasPrefix("\(path):2:"))
        #expect(
            lines[1] == "\(path):5:11: error: metered must be one of \"allow\", \"avoid\", \"deny\", found \"never\""
        )
        #expect(lines[2].hasPrefix("\(path):8:") && lines[2].contains("did you mean \"up\""))
    }

    @Test(
        "a networkd [[hook_dir]] is checked with FILE:LINE:COL; without path it searches networkd-dispatcher's default"
    )
    func networkdHookDirectory() throws {
        let (valid, path) = try Self.check("[[hook_dir]]\ndialect = \"networkd\"\n")
        #expect(valid.status == 0, "\(valid.stderr)")
        #expect(
            valid.stdout
                == "\(path): valid: 1 policy, no rules (dispatcher mode), 0 interface overrides, hooks in /etc/netpath/hooks.d and /etc/networkd-dispatcher:/usr/lib/networkd-dispatcher (networkd)\n"
        )
        let (result, broken) = try Self.check(
            """
            [[hook_dir]]
            path = ["/etc/networkd-dispatcher", "routable.d"]
            dialect = "networkd"
            [[hook_dir]]
            path = "/etc/networkd-dispatcher"
            dialect = "networkd-dispatcher"
            """
        )
        #expect(result.status == 1)
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(
            lines == [
                "\(broken):2:37: error: path must hold absolute directories, found \"routable.d\"",
                "\(broken):5:8: error: directory \"/etc/networkd-dispatcher\" is listed twice; first listed at 2:9",
                "\(broken):6:11: error: unknown dialect \"networkd-dispatcher\"; expected one of \"netpath\", \"networkmanager\", \"networkd\"",
            ],
            "\(result.stderr)"
        )
    }

    @Test("a file that is not UTF-8 exits 1 with FILE:LINE:COL of the bad byte")
    func invalidUTF8() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("np-check-\(UUID().uuidString).toml")
        // Line 2, column 15: `hooks_dir = "/` then a Latin-1 "é" (0xE9), as an editor in the wrong encoding saves it.
        try Data(Array("[agent]\nhooks_dir = \"/".utf8) + [0xE9] + Array("tc\"\n".utf8)).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try Command.run([BuiltProducts.path("netpathctl"), "check-config", file.path])
        #expect(result.status == 1)
        #expect(
            result.stderr
                == "\(file.path):2:15: error: byte 0xE9 (offset 22) is not valid UTF-8; the file must be UTF-8 text\n"
        )
    }

    @Test("absurd durations exit 1, each error naming the key's maximum")
    func absurdDurations() throws {
        let (result, path) = try Self.check(
            """
            [agent]
            hook_timeout = "99999999999h"
            settle = "2h"
            """
        )
        #expect(result.status == 1)
        #expect(
            result.stderr == """
                \(path):2:16: error: hook_timeout must be at most "24h", found "99999999999h"
                \(path):3:10: error: settle must be at most "1h", found "2h"

                """
        )
    }

    @Test("a missing file exits 1 naming the file as not found")
    func missingFile() throws {
        let (result, path) = try Self.check(nil)
        #expect(result.status == 1)
        #expect(result.stderr == "\(path): error: configuration file not found\n")
    }

    @Test("a metrics host name, which netpathd would refuse at start, is refused by the check at its line and column")
    func metricsHostName() throws {
        let (result, path) = try Self.check("[agent]\nmetrics = \"localhost:9479\"\n")
        #expect(result.status == 1)
        #expect(
            result.stderr
                == "\(path):2:11: error: metrics host must be an IP address, not a name (netpathd does not resolve it), found \"localhost:9479\"; use \"127.0.0.1:9479\" or \"[::1]:9479\"\n"
        )
    }

    @Test("control_group must name a group of this machine: an unknown one is an error at its value, root's is valid")
    func controlGroup() throws {
        let unknown = "nptest-no-such-group"
        #expect(getgrnam(unknown) == nil, "this machine has a group called \(unknown)")
        let (missing, path) = try Self.check("[agent]\ncontrol_group = \"\(unknown)\"\n")
        #expect(missing.status == 1)
        #expect(
            missing.stderr
                == "\(path):2:17: error: control_group: no group named \"\(unknown)\" on this machine; create it (groupadd --system \(unknown)) or remove control_group\n"
        )
        let (existing, _) = try Self.check("[agent]\ncontrol_group = \"root\"\n")
        #expect(existing.status == 0, "\(existing.stderr)")
    }

    @Test("without FILE, the embedded default is checked when /etc/netpath/netpath.toml is absent")
    func embeddedDefault() throws {
        try #require(access("/etc/netpath/netpath.toml", F_OK) != 0, "this host has its own /etc/netpath/netpath.toml")
        let result = try Command.run([BuiltProducts.path("netpathctl"), "check-config"])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("<embedded config/netpath.toml>: valid: 1 policy, no rules (dispatcher mode)"))
    }
}
