// SPDX-License-Identifier: Apache-2.0

import Foundation
import Glibc
import NetPathCore
import NetPathLinux
import TestSupport
import Testing

/// The observer on a real kernel: what reaches its updates besides netlink.
@Suite(.enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct SystemObserverTests {
    @Test("a change of resolv.conf alone is an update, with the new servers, and no netlink message behind it")
    func resolvConfChangeIsAnUpdate() async throws {
        let directory = try ScratchDirectory.make("observer-dns")
        defer { try? FileManager.default.removeItem(at: directory) }
        let resolvConf = directory.appendingPathComponent("resolv.conf").path
        try "# no servers yet\n".write(toFile: resolvConf, atomically: true, encoding: .utf8)

        try await NetworkNamespace.with(["observer-dns"]) { namespaces in
            let observer = SystemObserver(
                engine: NetlinkEngine(options: .init(namespace: namespaces[0].name)),
                builder: SystemStateBuilder(sysfs: SysfsReader(root: "/nonexistent"), resolvConfPath: resolvConf)
            )
            defer { observer.stop() }
            let updates = Recorder<SystemUpdate>()
            await updates.record(try observer.start())
            let first = try await updates.next("the initial dump")
            #expect(first.cause == .initialDump && first.state.dnsServers.isEmpty)

            // A DHCP client writes the servers after the address and route: nothing in the
            // namespace changes, and still the update comes.
            try "nameserver 192.0.2.53\n".write(toFile: resolvConf, atomically: false, encoding: .utf8)
            let written = try await updates.next("the servers written in place") {
                $0.state.dnsServers == ["192.0.2.53"]
            }
            #expect(written.cause == .watchedFile)
            #expect(written.statistics.messages == first.statistics.messages, "no netlink message was read")

            // resolvconf's way: a new file renamed over the old.
            let replacement = directory.appendingPathComponent("resolv.conf.new").path
            try "nameserver 192.0.2.54\nnameserver 2001:db8::53\n".write(
                toFile: replacement,
                atomically: false,
                encoding: .utf8
            )
            #expect(rename(replacement, resolvConf) == 0)
            let renamed = try await updates.next("the servers renamed in") {
                $0.state.dnsServers == ["192.0.2.54", "2001:db8::53"]
            }
            #expect(renamed.cause == .watchedFile)

            // `cat new > resolv.conf`: the open empties the file, and a kernel change comes before
            // the write. Its update still has the servers the file had: an emptied file is not
            // read before it is closed.
            await updates.skipAll()
            let since = await updates.all.count
            let fd = open(resolvConf, O_WRONLY | O_TRUNC)
            #expect(fd >= 0)
            try namespaces[0].ip("addr", "add", "192.0.2.9/32", "dev", "lo")
            let kernel = try await updates.next("the kernel's change during the write") { $0.cause == .update }
            #expect(kernel.state.dnsServers == ["192.0.2.54", "2001:db8::53"])
            let text = Array("nameserver 192.0.2.55\n".utf8)
            #expect(Glibc.write(fd, text, text.count) == text.count)
            #expect(close(fd) == 0)
            let closed = try await updates.next("the servers once the file is closed") {
                $0.state.dnsServers == ["192.0.2.55"]
            }
            #expect(closed.cause == .watchedFile)
            let during = await updates.all[since...]
            #expect(during.allSatisfy { !$0.state.dnsServers.isEmpty }, "never read empty")
        }
    }
}
