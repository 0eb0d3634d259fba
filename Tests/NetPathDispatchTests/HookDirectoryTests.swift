// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathDispatch
import TestSupport
import Testing

/// Discovery and trust on real files with real modes and owners. As a user other than root the
/// hooks are that user's (the agent's own user is trusted); chowning to another user needs root.
struct HookDirectoryTests {
    @Test("hooks are the directory's files in byte order, without ignored names")
    func lexicalOrderWithoutIgnoredNames() async throws {
        try await TemporaryDirectory.with { dir in
            for name in [
                "20-b", "10-a", "B", "a", "10-a~", ".hidden", "30-c.dpkg-old", "30-c.dpkg-dist", "40-d.rpmnew",
                "40-d.rpmsave",
            ] {
                try dir.hook(name, "exit 0")
            }
            let hooks = HookDirectory(path: dir.path, logger: LogStore().logger)
            #expect(hooks.hookNames() == ["10-a", "20-b", "B", "a"])
            let entries = Dictionary(uniqueKeysWithValues: hooks.entries().map { ($0.name, $0.status) })
            #expect(entries["10-a"] == .accepted)
            #expect(entries[".hidden"] == .ignored(.dotfile))
            #expect(entries["10-a~"] == .ignored(.backup))
            #expect(entries["30-c.dpkg-old"] == .ignored(.dpkg))
            #expect(entries["30-c.dpkg-dist"] == .ignored(.dpkg))
            #expect(entries["40-d.rpmnew"] == .ignored(.rpm))
            #expect(entries["40-d.rpmsave"] == .ignored(.rpm))
            #expect(
                hooks.entries().map(\.name)
                    == hooks.entries().map(\.name).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            )
        }
    }

    /// Each refusal reason, for a file set up just so; every other property of the file is safe.
    enum Unsafe: String, CaseIterable, CustomTestStringConvertible {
        case ownedByNobody, groupWritable, otherWritable, setuid, setgid, notExecutable, directory, fifo,
            symlinkToUnsafeFile, danglingSymlink, directoryWritableByOthers, directoryWritableByGroup

        var testDescription: String { rawValue }

        func prepare(_ dir: TemporaryDirectory, outside: TemporaryDirectory) throws {
            let name = "50-hook"
            switch self {
            case .ownedByNobody:
                try dir.hook(name, "exit 0")
                try dir.chown(name, 65534)
            case .groupWritable: try dir.hook(name, "exit 0", mode: 0o775)
            case .otherWritable: try dir.hook(name, "exit 0", mode: 0o757)
            case .setuid: try dir.hook(name, "exit 0", mode: 0o4755)
            case .setgid: try dir.hook(name, "exit 0", mode: 0o2755)
            case .notExecutable: try dir.hook(name, "exit 0", mode: 0o644)
            case .directory:
                try FileManager.default.createDirectory(atPath: dir.path(name), withIntermediateDirectories: false)
            case .fifo: guard mkfifo(dir.path(name), 0o755) == 0 else { throw TestFailure("mkfifo") }
            case .symlinkToUnsafeFile:
                let target = try outside.hook("target", "exit 0", mode: 0o777)
                try FileManager.default.createSymbolicLink(atPath: dir.path(name), withDestinationPath: target)
            case .danglingSymlink:
                try FileManager.default.createSymbolicLink(
                    atPath: dir.path(name),
                    withDestinationPath: outside.path("missing")
                )
            case .directoryWritableByOthers:
                try dir.hook(name, "exit 0")
                try dir.chmod(".", 0o757)
            case .directoryWritableByGroup:
                try dir.hook(name, "exit 0")
                try dir.chmod(".", 0o775)
            }
        }

        func expected(in dir: String) -> HookRefusal {
            switch self {
            case .ownedByNobody: return .untrustedOwner(uid: 65534)
            case .groupWritable: return .writableByGroupOrOthers(mode: 0o100775)
            case .otherWritable: return .writableByGroupOrOthers(mode: 0o100757)
            case .setuid: return .setuidOrSetgid(mode: 0o104755)
            case .setgid: return .setuidOrSetgid(mode: 0o102755)
            case .notExecutable: return .notExecutable(mode: 0o100644)
            case .directory: return .notRegularFile("directory")
            case .fifo: return .notRegularFile("fifo")
            case .symlinkToUnsafeFile: return .writableByGroupOrOthers(mode: 0o100777)
            case .danglingSymlink: return .cannotOpen(errno: ENOENT)
            case .directoryWritableByOthers: return .directoryWritableByGroupOrOthers(path: dir, mode: 0o40757)
            case .directoryWritableByGroup: return .directoryWritableByGroupOrOthers(path: dir, mode: 0o40775)
            }
        }
    }

    @Test(
        "an unsafe file is refused with its specific reason and never runs",
        arguments: Unsafe.allCases.filter { $0 != .ownedByNobody || Privileges.namespaceTestsEnabled }
    )
    func refusal(_ unsafe: Unsafe) async throws {
        try await TemporaryDirectory.with { dir in
            try await TemporaryDirectory.with { outside in
                try unsafe.prepare(dir, outside: outside)
                let log = LogStore()
                let hooks = HookDirectory(path: dir.path, logger: log.logger)
                let expected = unsafe.expected(in: dir.path)
                #expect(hooks.entries() == [HookEntry(name: "50-hook", status: .refused(expected))])
                #expect(throws: expected) { try hooks.open("50-hook") }
                // Opened from an event's snapshot (the directory checked once for the listing
                // and the first hook), the same refusal: a directory that fails gives no checked
                // directory, and the hook's own walk says why.
                let snapshot = hooks.snapshot()
                #expect(snapshot.names == hooks.hookNames())
                #expect(throws: expected) { try hooks.open("50-hook", in: snapshot) }
                // Logged once per file and reason, however often it is looked at.
                _ = try? hooks.open("50-hook")
                #expect(log.with("reason", expected.code).count == 1)
            }
        }
    }

    @Test("a hook is never opened from another directory's snapshot: the walk is made for its own")
    func snapshotOfAnotherDirectory() async throws {
        try await TemporaryDirectory.with { first in
            try await TemporaryDirectory.with { second in
                try first.hook("10-x", "exit 0")
                let theirs = try second.hook("10-x", "exit 0")
                let firstHooks = HookDirectory(path: first.path, logger: LogStore().logger)
                let secondHooks = HookDirectory(path: second.path, logger: LogStore().logger)
                let hook = try secondHooks.open("10-x", in: firstHooks.snapshot())
                #expect(hook.resolvedPath == theirs)
                #expect(hook.executablePath == theirs)
            }
        }
    }

    @Test("a refusal is logged again after the file was fixed and broken anew")
    func refusalLoggedOncePerEpisode() async throws {
        try await TemporaryDirectory.with { dir in
            try dir.hook("10-a", "exit 0", mode: 0o775)
            let log = LogStore()
            let hooks = HookDirectory(path: dir.path, logger: log.logger)
            for _ in 0..<3 { _ = try? hooks.open("10-a") }
            try dir.chmod("10-a", 0o755)
            _ = try hooks.open("10-a", in: hooks.snapshot())
            try dir.chmod("10-a", 0o775)
            for _ in 0..<3 { _ = try? hooks.open("10-a") }
            #expect(log.with("hook", "10-a").filter { $0.level == .warning }.count == 2)
        }
    }

    @Test("the listing follows files added, removed and renamed without a restart")
    func listingFollowsTheDirectory() async throws {
        try await TemporaryDirectory.with { dir in
            let hooks = HookDirectory(path: dir.path, logger: LogStore().logger)
            #expect(hooks.hookNames() == [])
            try dir.hook("20-b", "exit 0")
            #expect(hooks.hookNames() == ["20-b"])
            try dir.hook("10-a", "exit 0")
            #expect(hooks.hookNames() == ["10-a", "20-b"])
            try FileManager.default.moveItem(atPath: dir.path("20-b"), toPath: dir.path("30-c"))
            #expect(hooks.hookNames() == ["10-a", "30-c"])
            try FileManager.default.removeItem(atPath: dir.path("10-a"))
            #expect(hooks.hookNames() == ["30-c"])
        }
    }

    @Test("a missing hooks directory has no hooks")
    func missingDirectory() {
        let hooks = HookDirectory(path: "/nonexistent/netpath-hooks.d", logger: LogStore().logger)
        #expect(hooks.hookNames() == [])
        #expect(hooks.entries() == [])
    }

    @Test("a hook's $0 is its real path in the hooks directory, for a file and for a symlink")
    func dollarZeroIsTheRealPath() async throws {
        try await TemporaryDirectory.with { dir in
            try await TemporaryDirectory.with { outside in
                try dir.hook("10-file", "echo \"$0\" > \(dir.path("file-ran"))")
                let target = try outside.hook(
                    "target",
                    "echo \"$0 $(basename \"$0\") $(dirname \"$0\")\" > \(dir.path("link-ran"))"
                )
                try FileManager.default.createSymbolicLink(atPath: dir.path("20-link"), withDestinationPath: target)
                let hooks = HookDirectory(path: dir.path, logger: LogStore().logger)
                let runner = HookRunner(logger: LogStore().logger)
                for name in ["10-file", "20-link"] {
                    let invocation = HookInvocation(
                        hook: name,
                        event: Events.interface(.up, "eth0"),
                        rule: nil,
                        timeout: .seconds(10)
                    )
                    let result = await runner.run(invocation, executing: try hooks.open(name))
                    #expect(result.termination == .exited(0))
                }
                #expect(dir.read("file-ran") == dir.path("10-file") + "\n")
                // A symlinked hook is run by its name in the hooks directory, as run-parts and
                // NetworkManager-dispatcher run it; what was checked is the target.
                #expect(dir.read("link-ran") == "\(dir.path("20-link")) 20-link \(dir.path)\n")
                #expect(try hooks.open("20-link").resolvedPath == target)
            }
        }
    }

    @Test(
        "a symlink target through a name that begins with a combining mark is walked one directory at a time, `..` included"
    )
    func combiningMarkAfterASlash() async throws {
        try await TemporaryDirectory.with { dir in
            try await TemporaryDirectory.with { outside in
                // `/` and U+0301 make one Character: the walk must still cut and split at the byte.
                let mark = "\u{301}x"
                guard mkdir(outside.path("a"), 0o755) == 0, mkdir(outside.path("a/" + mark), 0o755) == 0 else {
                    throw TestFailure("mkdir")
                }
                try outside.chmod("a", 0o755)
                try outside.chmod("a/" + mark, 0o755)
                let target = try outside.hook("a/target", "echo \"$0\" > \(dir.path("ran"))")
                try FileManager.default.createSymbolicLink(
                    atPath: dir.path("10-up"),
                    withDestinationPath: outside.path("a/" + mark + "/../target")
                )
                try FileManager.default.createSymbolicLink(
                    atPath: dir.path("20-through"),
                    withDestinationPath: outside.path("a/" + mark + "/../" + mark + "/../target")
                )
                let hooks = HookDirectory(path: dir.path, logger: LogStore().logger)
                for name in ["10-up", "20-through"] {
                    let hook = try hooks.open(name)
                    #expect(hook.resolvedPath == target, "\(name) resolved to \(hook.resolvedPath)")
                    let result = await HookRunner(logger: LogStore().logger).run(
                        HookInvocation(
                            hook: name,
                            event: Events.interface(.up, "eth0"),
                            rule: nil,
                            timeout: .seconds(10)
                        ),
                        executing: hook
                    )
                    #expect(result.termination == .exited(0))
                }
                // A directory behind such a name is checked like any other: writable by others, refused.
                try outside.chmod("a", 0o777)
                #expect(
                    throws: HookRefusal.directoryWritableByGroupOrOthers(
                        path: outside.path("a"),
                        mode: UInt32(S_IFDIR) | 0o777
                    )
                ) {
                    try hooks.open("20-through")
                }
            }
        }
    }

    @Test("a file swapped for an unsafe one between listing and executing is never run")
    func swapAfterListingIsRefused() async throws {
        try await TemporaryDirectory.with { dir in
            try dir.hook("10-hook", "echo listed >> \(dir.path("ran"))")
            let log = LogStore()
            let hooks = HookDirectory(path: dir.path, logger: log.logger)
            let dispatcher = HookDispatcher(
                directory: hooks,
                runner: HookRunner(logger: log.logger),
                logger: log.logger
            )
            #expect(hooks.hookNames() == ["10-hook"])
            try dir.hook("swap", "echo swapped >> \(dir.path("ran"))", mode: 0o777)
            guard rename(dir.path("swap"), dir.path("10-hook")) == 0 else { throw TestFailure("rename") }
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask { await dispatcher.run() }
                dispatcher.dispatch(Events.interface(.up, "eth0"), to: [.all(timeout: .seconds(10))])
                await dispatcher.waitUntilIdle()
                group.cancelAll()
            }
            #expect(dir.read("ran") == nil)
            #expect(dispatcher.statistics.refusals["writable-by-group-or-others"] == 1)
            #expect(dispatcher.statistics.runs.isEmpty)
        }
    }
}
