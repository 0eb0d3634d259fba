import Foundation
import NetPathConfig
import TestSupport
import Testing

@testable import NetPathDispatch

/// A `[[hook_dir]]` search path on real files: precedence, masking, NetworkManager's
/// subdirectories and no-wait.d, and netpath's trust checks on every script.
struct DialectHookDirectoryTests {
    static func networkManager(_ paths: [String]) -> DialectHookDirectory {
        DialectHookDirectory(
            setting: HookDirectorySetting(paths: paths, dialect: .networkmanager),
            logger: LogStore().logger
        )
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
}
