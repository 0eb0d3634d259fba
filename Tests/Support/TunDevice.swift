// SPDX-License-Identifier: Apache-2.0

import Foundation

/// A tun link with carrier: the stand-in for a WireGuard or OpenVPN tunnel, which this kernel
/// cannot create. A tun link has carrier only while a process holds it open, so a small helper
/// process attaches it (TUNSETIFF) and keeps it until ``close()``.
public final class TunDevice: Sendable {
    public let name: String
    private let holder: RunningProcess
    private let output = Recorder<String>()

    /// The attaching helper: creates tun `argv[1]` (IFF_TUN | IFF_NO_PI), says "ready", and holds it.
    private static let script = """
        import fcntl, os, struct, sys, time
        fd = os.open("/dev/net/tun", os.O_RDWR)
        fcntl.ioctl(fd, 0x400454ca, struct.pack("16sH", sys.argv[1].encode(), 0x0001 | 0x1000))
        print("ready", flush=True)
        while True:
            time.sleep(3600)
        """

    /// Creates tun link `name` in `namespace`, attached and admin up.
    public init(_ name: String, in namespace: NetworkNamespace) async throws {
        self.name = name
        holder = try RunningProcess(["ip", "netns", "exec", namespace.name, "python3", "-c", Self.script, name])
        await output.record(holder.stdoutLines)
        do {
            _ = try await output.next("tun \(name) attached in \(namespace.name)", timeout: .seconds(10)) {
                $0 == "ready"
            }
            try namespace.ip("link", "set", name, "up")
        } catch {
            holder.terminate()
            throw error
        }
    }

    /// Ends the holder: the link goes away with it.
    public func close() { holder.terminate() }
}
