// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathConfig
import TestSupport
import Testing

@testable import NetPathDispatch

/// A `[[hook_dir]]` search path on real files: precedence, masking, NetworkManager's
/// subdirectories and no-wait.d, networkd-dispatcher's state directories, and netpath's trust
/// checks on every script.
struct DialectHookDirectoryTests {
    static func networkManager(_ paths: [String]) -> DialectHookDirectory {
        DialectHookDirectory(
            setting: HookDirectorySetting(paths: paths, dialect: .networkmanager),
            logger: LogStore().logger
        )
    }

    static func networkd(_ paths: [String]) -> DialectHookDirectory {
        DialectHookDirectory(setting: HookDirectorySetting(paths: paths, dialect: .networkd), logger: LogStore().logger)
    }

    /// `dir/<state>.d`, mode 0755, as a ``TemporaryDirectory`` (removed with `dir`).
    static func stateDirectory(_ dir: TemporaryDirectory, _ state: String) throws -> TemporaryDirectory {
        try FileManager.default.createDirectory(atPath: dir.path(state + ".d"), withIntermediateDirectories: false)
        try dir.chmod(state + ".d", 0o755)
        return TemporaryDirectory(path: dir.path(state + ".d"))
    }

    @Test("/etc overrides /usr/lib by file name; the merged scripts run in lexical order")
    func earlierDirectoryWins() async throws {
        try await TemporaryDirectory.with { etc in
            try await TemporaryDirectory.with { lib in
                try lib.hook("10-a", "exit 0")
                try lib.hook("20-b", "exit 0")
                try etc.hook("20-b", "exit 0")
                try etc.hook("05-c", "exit 0")
                let directory = Self.networkManager([etc.path, lib.path])
                let scripts = directory.scripts()
                #expect(scripts.map(\.name) == ["05-c", "10-a", "20-b"])
                #expect(scripts.map(\.directory) == [etc.path, lib.path, etc.path])
                let entries = directory.entries()
                #expect(entries.map(\.path) == [etc.path, lib.path])
                #expect(
                    entries[0].entries == [
                        HookEntry(name: "05-c", status: .accepted), HookEntry(name: "20-b", status: .accepted),
                    ]
                )
                #expect(
                    entries[1].entries == [
                        HookEntry(name: "10-a", status: .accepted),
                        HookEntry(name: "20-b", status: .ignored(.overridden)),
                    ]
                )
                // The other order makes /usr/lib win: the order of `path` is the precedence.
                #expect(
                    Self.networkManager([lib.path, etc.path]).scripts().first { $0.name == "20-b" }?.directory
                        == lib.path
                )
            }
        }
    }

    @Test("a symlink to /dev/null in /etc masks the /usr/lib script: nothing of that name runs")
    func maskedByDevNull() async throws {
        try await TemporaryDirectory.with { etc in
            try await TemporaryDirectory.with { lib in
                try lib.hook("20-chrony", "exit 0")
                try FileManager.default.createSymbolicLink(
                    atPath: etc.path("20-chrony"),
                    withDestinationPath: "/dev/null"
                )
                let directory = Self.networkManager([etc.path, lib.path])
                #expect(directory.scripts().isEmpty)
                #expect(directory.entries()[0].entries == [HookEntry(name: "20-chrony", status: .ignored(.masked))])
                #expect(directory.entries()[1].entries == [HookEntry(name: "20-chrony", status: .ignored(.overridden))])
            }
        }
    }

    @Test(
        "no-wait.d, pre-up.d and pre-down.d are not scripts; a symlink into no-wait.d (relative or absolute) runs without waiting"
    )
    func networkManagerSubdirectories() async throws {
        try await TemporaryDirectory.with { dir in
            for sub in ["no-wait.d", "pre-up.d", "pre-down.d"] {
                try FileManager.default.createDirectory(atPath: dir.path(sub), withIntermediateDirectories: false)
                try dir.chmod(sub, 0o755)
            }
            try dir.hook("no-wait.d/10-fast", "exit 0")
            try dir.hook("no-wait.d/11-fast", "exit 0")
            try dir.hook("pre-up.d/10-never", "exit 0")
            try dir.hook("20-plain", "exit 0")
            try FileManager.default.createSymbolicLink(
                atPath: dir.path("10-fast"),
                withDestinationPath: "no-wait.d/10-fast"
            )
            try FileManager.default.createSymbolicLink(
                atPath: dir.path("11-fast"),
                withDestinationPath: dir.path("no-wait.d/11-fast")
            )
            let directory = Self.networkManager([dir.path])
            let scripts = directory.scripts()
            #expect(scripts.map(\.name) == ["10-fast", "11-fast", "20-plain"])
            #expect(scripts.map(\.noWait) == [true, true, false])
            let statuses = Dictionary(uniqueKeysWithValues: directory.entries()[0].entries.map { ($0.name, $0.status) })
            #expect(statuses["no-wait.d"] == .ignored(.dispatcherSubdirectory))
            #expect(statuses["pre-up.d"] == .ignored(.dispatcherSubdirectory))
            #expect(statuses["pre-down.d"] == .ignored(.dispatcherSubdirectory))
            #expect(statuses["10-fast"] == .accepted)
            // In a netpath-dialect directory the same names are ordinary files.
            let native = DialectHookDirectory(
                setting: HookDirectorySetting(paths: [dir.path], dialect: .netpath),
                logger: LogStore().logger
            )
            #expect(native.scripts().map(\.noWait) == [false, false, false, false, false, false])
        }
    }

    @Test(
        "every trust refusal applies to a NetworkManager script, with its specific reason, in every directory of the path",
        arguments: HookDirectoryTests.Unsafe.allCases.filter {
            $0 != .ownedByNobody || Privileges.namespaceTestsEnabled
        }
    )
    func refusal(_ unsafe: HookDirectoryTests.Unsafe) async throws {
        try await TemporaryDirectory.with { etc in
            try await TemporaryDirectory.with { outside in
                try unsafe.prepare(etc, outside: outside)
                let directory = Self.networkManager([etc.path])
                let expected = unsafe.expected(in: etc.path)
                #expect(directory.entries()[0].entries == [HookEntry(name: "50-hook", status: .refused(expected))])
                let script = try #require(directory.scripts().first)
                #expect(throws: expected) { try directory.directory(script.directory)?.open(script.name) }
            }
        }
    }

    @Test(
        "networkd: each state's scripts merge <path>/<state>.d over the search path, the earlier by name; the top directories hold none"
    )
    func networkdStateDirectories() async throws {
        try await TemporaryDirectory.with { etc in
            try await TemporaryDirectory.with { lib in
                let etcRoutable = try Self.stateDirectory(etc, "routable")
                let libRoutable = try Self.stateDirectory(lib, "routable")
                let libOff = try Self.stateDirectory(lib, "off")
                try etcRoutable.hook("50-vpn", "exit 0")
                try libRoutable.hook("50-vpn", "exit 0")
                try libRoutable.hook("10-ntp", "exit 0")
                try libOff.hook("10-ntp", "exit 0")
                try etc.hook("99-top", "exit 0")
                let directory = Self.networkd([etc.path, lib.path])
                let routable = directory.scripts(entering: "routable")
                #expect(routable.map(\.name) == ["10-ntp", "50-vpn"])
                #expect(routable.map(\.directory) == [libRoutable.path, etcRoutable.path])
                #expect(directory.scripts(entering: "off").map(\.directory) == [libOff.path])
                #expect(directory.scripts(entering: "degraded").isEmpty)
                #expect(directory.scripts().isEmpty, "a file in the top directory is no script")
                #expect(directory.allScriptNames() == ["10-ntp", "50-vpn"])
                #expect(directory.directory(etcRoutable.path)?.path == etcRoutable.path)

                let entries = directory.entries()
                #expect(entries.map(\.path) == [etc.path, etcRoutable.path, lib.path, libOff.path, libRoutable.path])
                #expect(entries[1].entries == [HookEntry(name: "50-vpn", status: .accepted)])
                #expect(
                    entries[4].entries == [
                        HookEntry(name: "10-ntp", status: .accepted),
                        HookEntry(name: "50-vpn", status: .ignored(.overridden)),
                    ]
                )
                // The other order makes /usr/lib win.
                #expect(
                    Self.networkd([lib.path, etc.path]).scripts(entering: "routable").map(\.directory)
                        == [libRoutable.path, libRoutable.path]
                )
            }
        }
    }

    @Test("networkd: a state netpath never enters lists its files as never run; a /dev/null link masks")
    func networkdNeverEnteredAndMasked() async throws {
        try await TemporaryDirectory.with { etc in
            try await TemporaryDirectory.with { lib in
                try Self.stateDirectory(etc, "enslaved").hook("10-bond", "exit 0")
                let etcOff = try Self.stateDirectory(etc, "off")
                try Self.stateDirectory(lib, "off").hook("20-chrony", "exit 0")
                try FileManager.default.createSymbolicLink(
                    atPath: etcOff.path("20-chrony"),
                    withDestinationPath: "/dev/null"
                )
                let directory = Self.networkd([etc.path, lib.path])
                #expect(directory.scripts(entering: "off").isEmpty)
                let entries = Dictionary(uniqueKeysWithValues: directory.entries().map { ($0.path, $0.entries) })
                #expect(
                    entries[etc.path("enslaved.d")] == [
                        HookEntry(name: "10-bond", status: .ignored(.stateNeverEntered))
                    ]
                )
                #expect(entries[etcOff.path] == [HookEntry(name: "20-chrony", status: .ignored(.masked))])
                #expect(entries[lib.path("off.d")] == [HookEntry(name: "20-chrony", status: .ignored(.overridden))])
            }
        }
    }

    @Test(
        "every trust refusal applies to a networkd script, with its specific reason",
        arguments: HookDirectoryTests.Unsafe.allCases.filter {
            $0 != .ownedByNobody || Privileges.namespaceTestsEnabled
        }
    )
    func networkdRefusal(_ unsafe: HookDirectoryTests.Unsafe) async throws {
        try await TemporaryDirectory.with { etc in
            try await TemporaryDirectory.with { outside in
                let routable = try Self.stateDirectory(etc, "routable")
                try unsafe.prepare(routable, outside: outside)
                let directory = Self.networkd([etc.path])
                let expected = unsafe.expected(in: routable.path)
                #expect(directory.entries()[1].entries == [HookEntry(name: "50-hook", status: .refused(expected))])
                let script = try #require(directory.scripts(entering: "routable").first)
                #expect(throws: expected) { try directory.directory(script.directory)?.open(script.name) }
            }
        }
    }
}
