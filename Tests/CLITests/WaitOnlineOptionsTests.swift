// SPDX-License-Identifier: Apache-2.0

import Foundation
import TestSupport
import Testing

/// `netpathctl wait-online`'s options as systemd-networkd-wait-online and nm-online users write
/// them; a bad one is exit status 2 (nm-online's "any other error"), not ArgumentParser's 64, and
/// the message says what was expected.
struct WaitOnlineOptionsTests {
    static func waitOnline(_ arguments: [String]) throws -> Command.Result {
        try Command.run([BuiltProducts.path("netpathctl"), "wait-online"] + arguments)
    }

    @Test(
        "a bad option is exit 2 with what was expected",
        arguments: [
            (["--connectivity", "none"], "--connectivity: \"none\" is not limited, portal or full"),
            (["-o", "online"], "\"online\" is not an operational state; expected one of missing, off, no-carrier"),
            (["-o", "routable:carrier"], "the minimum routable is above the maximum carrier"),
            (["-i", ":routable"], "expected IFACE[:MIN[:MAX]], the name is empty"),
            (["-i", "eth0:carrier:routable:off"], "expected MIN[:MAX], two operational states at most"),
            (["--timeout", "soon"], "--timeout: \"soon\" is neither a number of seconds nor a duration"),
            (["--ignore", "eth["], "--ignore: invalid glob \"eth[\""),
            (["--frobnicate"], "Unknown option '--frobnicate'"),
            (["--socket", "/x.sock", "--config", "/y.toml"], "--socket and --config exclude each other"),
        ]
    )
    func badOptions(_ arguments: [String], _ message: String) throws {
        let result = try Self.waitOnline(arguments)
        #expect(result.status == 2, "\(arguments): \(result.stderr)")
        #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
    }

    @Test("systemd-networkd-wait-online's spellings parse: -i, -o, -4, -6, --dns, --any, --ignore, --timeout, -q")
    func networkdSpellings() throws {
        // Nothing listens on the socket: a parsed command line waits for an agent and ends with
        // exit 2 at its timeout, where a bad one would fail at once with its usage.
        let result = try Self.waitOnline([
            "--socket", "/nonexistent-np/wait.sock", "-i", "eth0:degraded", "-i", "wlan0:routable:routable", "-o",
            "carrier", "-4", "-6", "--dns", "--any", "--ignore", "veth*", "--timeout", "1", "-q",
        ])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(
            result.stderr.contains("no netpathd answered on /nonexistent-np/wait.sock within 1 s"),
            "\(result.stderr)"
        )
        #expect(!result.stderr.contains("Usage:"), "\(result.stderr)")
    }

    @Test("--help explains what online means and the exit statuses")
    func help() throws {
        let result = try Self.waitOnline(["--help"])
        #expect(result.status == 0)
        // ArgumentParser wraps the text at 80 columns: compare with the words rejoined.
        let words = result.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for text in [
            "some policy of netpathd's configuration is satisfied", "Exit status: 0 once online; 1 when", "--timeout",
        ] {
            #expect(words.contains(text), "\(text)")
        }
    }
}
