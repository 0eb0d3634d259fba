// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathCore
import TestSupport
import Testing

@testable import NetPathProbe

/// What netpath-probe's sandbox refuses, as the helper itself finds when it tries
/// (`--check-sandbox`): as root (it drops to nobody first) and as any other user.
struct ProbeSandboxTests {
    /// Starts the helper with a socketpair as fd 3 and returns everything it wrote there.
    static let driver = """
        import socket, subprocess, sys
        a, b = socket.socketpair()
        p = subprocess.Popen(["sh", "-c", 'exec 3<&%d %d<&- "$0" --mode http --check-sandbox' % (b.fileno(), b.fileno()), sys.argv[1]], pass_fds=(b.fileno(),))
        b.close()
        sys.stdout.write(a.makefile("rb").read().decode())
        sys.exit(p.wait())
        """

    @Test(
        "after setting up, the helper cannot open an AF_UNIX socket, write or create a file, fork, exec or become root"
    )
    func forbiddenCalls() throws {
        let result = try Command.run(["python3", "-c", Self.driver, BuiltProducts.path("netpath-probe")])
        let lines = result.stdout.split(separator: "\n").map { Array($0.utf8) }
        #expect(result.status == 2 && lines.count == 2, "\(result.stdout) \(result.stderr)")
        guard lines.count == 2 else { return }
        guard case .hello(let hello) = try ProbeWire.decodeHelperMessage(lines[0]),
            case .fatal(let report) = try ProbeWire.decodeHelperMessage(lines[1])
        else {
            Issue.record("expected hello and the check's report: \(result.stdout)")
            return
        }
        #expect(hello.uid != 0 && hello.effectiveCapabilities == 0)
        for check in [
            "unix_socket", "create_file", "open_for_writing", "mkdir", "setuid_0", "fork", "execve", "kill_init",
        ] {
            #expect(report.contains("\(check)=Operation not permitted"), "\(check): \(report)")
        }
        #expect(access("/tmp/netpath-probe-sandbox-check", F_OK) != 0)
    }
}
