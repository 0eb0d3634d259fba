// SPDX-License-Identifier: Apache-2.0
// netpath-probe: the sandboxed helper that makes netpathd's connectivity probes
// (docs/probe-helper.md). netpathd starts it with the agent's end of a socketpair as fd 3 and
// `--mode http` or `--mode icmp`; it confines itself before it reads anything from the network,
// then answers each `probe` line with a `result` line.
import CCurl
import CSeccomp
import Glibc
import NetPathCore
import NetPathProbe
import SystemPackage

/// The agent's end of the socketpair.
let channel: Int32 = 3

/// Writes one whole line to the agent; a short write on a socketpair means the agent is gone.
func send(_ line: String) {
    probeOutput.withLock { _ in
        do {
            try FileDescriptor(rawValue: channel).writeAll(line.utf8)
        } catch {
            exit(0)
        }
    }
}

/// Tells the agent why the helper gives up, and exits.
func fail(_ message: String) -> Never {
    send(ProbeWire.encodeFatal(message))
    exit(2)
}

var mode = "http"
var arguments = Array(CommandLine.arguments.dropFirst())
// --check-sandbox: set up as usual, then try what the sandbox must refuse and report it in a
// `fatal` line (the tests' proof that the filter holds; netpathd never passes it).
let checkSandbox = arguments.last == "--check-sandbox"
if checkSandbox { arguments.removeLast() }
if arguments.count == 2, arguments.first == "--mode", let value = arguments.last, value == "http" || value == "icmp" {
    mode = value
} else {
    let usage =
        "usage: netpath-probe --mode http|icmp [--check-sandbox] (started by netpathd with its socket as fd 3)\n"
    _ = usage.withCString { write(2, $0, strlen($0)) }
    exit(64)
}
var status = stat()
guard fstat(channel, &status) == 0, status.st_mode & S_IFMT == S_IFSOCK else {
    let message = "netpath-probe: fd 3 is not the agent's socket\n"
    _ = message.withCString { write(2, $0, strlen($0)) }
    exit(64)
}

// Nothing but the agent's socket stays open: whatever else the agent let leak (it should
// not: it opens everything close-on-exec) is closed, and 0, 1, 2 read and write /dev/null.
_ = netpath_close_range(UInt32(channel + 1), UInt32.max)
let null = open("/dev/null", O_RDWR)
if null >= 0 {
    for fd: Int32 in 0...2 { dup2(null, fd) }
    if null > 2 { close(null) }
}
_ = fcntl(channel, F_SETFD, FD_CLOEXEC)
// No core files (they would hold what the network sent), a few descriptors, no file growth.
var noCore = rlimit(rlim_cur: 0, rlim_max: 0)
setrlimit(Int32(RLIMIT_CORE.rawValue), &noCore)
setrlimit(Int32(RLIMIT_FSIZE.rawValue), &noCore)
var files = rlimit(rlim_cur: 256, rlim_max: 256)
setrlimit(Int32(RLIMIT_NOFILE.rawValue), &files)

// libcurl and OpenSSL read their configuration now, before the filter.
guard curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK else { fail("curl_global_init failed") }

let user = Sandbox.probeUser()
let keepRawSockets = mode == "icmp" && geteuid() == 0 && !Sandbox.pingSocketsAllowed(gid: user.gid)
do {
    try Sandbox.dropPrivileges(to: user, keepRawSockets: keepRawSockets)
    let capabilities = Sandbox.effectiveCapabilities()
    try Sandbox.confine()
    send(
        ProbeWire.encode(ProbeWire.Hello(uid: getuid(), gid: getgid(), effectiveCapabilities: capabilities, mode: mode))
    )
} catch {
    fail("sandbox: \(error)")
}

if checkSandbox { fail("check: \(Sandbox.attemptForbidden())") }
ProbeServer.run(mode: mode)
