// SPDX-License-Identifier: Apache-2.0

import Foundation
import TestSupport
import Testing

@testable import NetPathDispatch

/// The directories on a hook's path decide who can swap it: every one of them, from `/` to the
/// hooks directory and along a symlink's target, must be closed to everyone but root and the
/// agent's user. Real files, owners and modes; the tests that give a directory to another user
/// need root.
struct HookTrustPathTests {
    /// A safe, root-owned hook script at `path`.
    private func safeHook(_ path: String) throws {
        try "#!/bin/sh\nexit 0\n".write(toFile: path, atomically: false, encoding: .utf8)
        guard chmod(path, 0o755) == 0 else { throw TestFailure("chmod \(path)") }
    }

    /// A directory with `mode`, owned by `owner` (this process's user unless said otherwise).
    private func makeDirectory(_ path: String, mode: mode_t, owner: uid_t = getuid()) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        guard chmod(path, mode) == 0 else { throw TestFailure("chmod \(path)") }
        if owner != getuid(), chown(path, owner, 0) != 0 { throw TestFailure("chown \(path)") }
    }

    private func link(_ link: String, to target: String) throws {
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
    }

    /// Whether `name` is refused with `expected`, by the listing and at the moment it would run.
    private func expectRefused(_ hooks: HookDirectory, _ name: String, _ expected: HookRefusal) {
        #expect(hooks.entries().first { $0.name == name }?.status == .refused(expected))
        #expect(throws: expected) { try hooks.open(name) }
    }

    @Test(
        "a hooks directory owned by another user is refused, even with mode 0755",
        .enabled(if: Privileges.namespaceTestsEnabled, "needs root to give a directory to another user")
    )
    func hooksDirectoryOwnedByAnotherUser() async throws {
        try await TemporaryDirectory.with { dir in
            try safeHook(dir.path("50-hook"))
            try dir.chown(".", 65534)
            expectRefused(
                HookDirectory(path: dir.path, logger: LogStore().logger),
                "50-hook",
                .directoryUntrustedOwner(path: dir.path, uid: 65534)
            )
        }
    }

    /// `base/etc/hooks.d/50-hook`: a safe hook, in a directory of mode 0755, in `etc` of `mode`.
    private func hooksTree(_ base: TemporaryDirectory, parentMode mode: mode_t) throws {
        try makeDirectory(base.path("etc"), mode: mode)
        try makeDirectory(base.path("etc/hooks.d"), mode: 0o755)
        try safeHook(base.path("etc/hooks.d/50-hook"))
    }

    @Test("a hook under a directory whose parent the group may write is refused")
    func ancestorOfTheHooksDirectoryWritable() async throws {
        try await TemporaryDirectory.with { dir in
            try hooksTree(dir, parentMode: 0o775)
            expectRefused(
                HookDirectory(path: dir.path("etc/hooks.d"), logger: LogStore().logger),
                "50-hook",
                .directoryWritableByGroupOrOthers(path: dir.path("etc"), mode: 0o40775)
            )
        }
    }

    @Test("a symlink to a root-owned file in a sticky world-writable directory is refused")
    func symlinkIntoStickyWorldWritableDirectory() async throws {
        try await TemporaryDirectory.with { dir in
            try await TemporaryDirectory.with { outside in
                // The adversarial run's case: /tmp-like, so any user may put a name there.
                try makeDirectory(outside.path("drop"), mode: 0o1777)
                try safeHook(outside.path("drop/target"))
                try link(dir.path("50-hook"), to: outside.path("drop/target"))
                let hooks = HookDirectory(path: dir.path, logger: LogStore().logger)
                expectRefused(
                    hooks,
                    "50-hook",
                    .directoryWritableByGroupOrOthers(path: outside.path("drop"), mode: 0o41777)
                )
                #expect(hooks.hookNames() == ["50-hook"])
            }
        }
    }

    @Test(
        "a user-owned directory anywhere on a symlink target's path is refused",
        .enabled(if: Privileges.namespaceTestsEnabled, "needs root to give a directory to another user")
    )
    func userDirectoryOnTheTargetPath() async throws {
        try await TemporaryDirectory.with { dir in
            try await TemporaryDirectory.with { outside in
                // The user owns `home`: they can rename `sub` away and put their own in its place,
                // though `sub` and the target are root's.
                try makeDirectory(outside.path("home"), mode: 0o755, owner: 65534)
                try makeDirectory(outside.path("home/sub"), mode: 0o755)
                try safeHook(outside.path("home/sub/target"))
                try link(dir.path("50-hook"), to: outside.path("home/sub/target"))
                expectRefused(
                    HookDirectory(path: dir.path, logger: LogStore().logger),
                    "50-hook",
                    .directoryUntrustedOwner(path: outside.path("home"), uid: 65534)
                )
            }
        }
    }

    @Test("a relative symlink is followed through .. and every directory it enters is checked")
    func relativeSymlinkThroughParent() async throws {
        try await TemporaryDirectory.with { base in
            try makeDirectory(base.path("hooks.d"), mode: 0o755)
            try makeDirectory(base.path("safe"), mode: 0o755)
            try makeDirectory(base.path("unsafe"), mode: 0o757)
            try safeHook(base.path("safe/target"))
            try safeHook(base.path("unsafe/target"))
            try link(base.path("hooks.d/10-safe"), to: "../safe/./target")
            try link(base.path("hooks.d/20-unsafe"), to: "../unsafe/target")
            // A chain: a link to a link, the second relative to where the first led.
            try link(base.path("safe/hop"), to: "../unsafe/target")
            try link(base.path("hooks.d/30-chain"), to: "../safe/hop")
            let hooks = HookDirectory(path: base.path("hooks.d"), logger: LogStore().logger)
            let safe = try hooks.open("10-safe")
            #expect(safe.resolvedPath == base.path("safe/target"))
            #expect(safe.executablePath == base.path("hooks.d/10-safe"))
            let unsafe = HookRefusal.directoryWritableByGroupOrOthers(path: base.path("unsafe"), mode: 0o40757)
            expectRefused(hooks, "20-unsafe", unsafe)
            expectRefused(hooks, "30-chain", unsafe)
        }
    }

    @Test("a symlink loop is refused as a loop, not followed forever")
    func symlinkLoop() async throws {
        try await TemporaryDirectory.with { dir in
            try link(dir.path("50-hook"), to: "60-other")
            try link(dir.path("60-other"), to: "50-hook")
            expectRefused(
                HookDirectory(path: dir.path, logger: LogStore().logger),
                "50-hook",
                .cannotOpen(errno: ELOOP)
            )
        }
    }

    /// A walk from `/` is kept between events and confirmed by an `lstat` of each directory on
    /// the path (TrustedPath.recheck): every change a new walk would see must be seen by the next
    /// check of the same HookDirectory. `base/etc/hooks.d/50-hook`, checked once before each change,
    /// and a walk of the directory as the HookDirectory keeps one: after each change, its recheck
    /// must fail, so that the next check walks again (what the HookDirectory then does is what a
    /// user sees: the hook refused, or the new file opened).
    private func checkedOnce(_ base: TemporaryDirectory) throws -> (HookDirectory, OpenedHook, TrustedPath) {
        try hooksTree(base, parentMode: 0o755)
        let hooks = HookDirectory(path: base.path("etc/hooks.d"), logger: LogStore().logger)
        let first = try hooks.open("50-hook", in: hooks.snapshot())
        #expect(try hooks.open("50-hook") == first)
        #expect(try hooks.open("50-hook", in: hooks.snapshot()) == first)
        let kept = try TrustedPath.open(base.path("etc/hooks.d"), policy: .current)
        #expect(kept.recheck(policy: .current) != nil, "an unchanged path is confirmed without a walk")
        return (hooks, first, kept)
    }

    @Test("a directory on the path made writable after a check is refused at the next check, and accepted once fixed")
    func directoryMadeWritableAfterACheck() async throws {
        try await TemporaryDirectory.with { base in
            let (hooks, first, kept) = try checkedOnce(base)
            for (directory, mode) in [("etc", 0o775), ("etc/hooks.d", 0o757)] as [(String, mode_t)] {
                guard chmod(base.path(directory), mode) == 0 else { throw TestFailure("chmod \(directory)") }
                #expect(kept.recheck(policy: .current) == nil, "\(directory) made writable")
                let refusal = HookRefusal.directoryWritableByGroupOrOthers(
                    path: base.path(directory),
                    mode: 0o40000 | UInt32(mode)
                )
                #expect(throws: refusal) { try hooks.open("50-hook", in: hooks.snapshot()) }
                #expect(throws: refusal) { try hooks.open("50-hook") }
                guard chmod(base.path(directory), 0o755) == 0 else { throw TestFailure("chmod \(directory)") }
                #expect(try hooks.open("50-hook") == first)
            }
            // Fixed, a walk is confirmed again.
            #expect(kept.recheck(policy: .current) != nil)
            #expect(try hooks.open("50-hook", in: hooks.snapshot()) == first)
        }
    }

    @Test(
        "a directory on the path given to another user after a check is refused at the next check",
        .enabled(if: Privileges.namespaceTestsEnabled, "needs root to give a directory to another user")
    )
    func directoryGivenAwayAfterACheck() async throws {
        try await TemporaryDirectory.with { base in
            let (hooks, first, kept) = try checkedOnce(base)
            for directory in ["etc", "etc/hooks.d"] {
                guard chown(base.path(directory), 65534, 0) == 0 else { throw TestFailure("chown \(directory)") }
                #expect(kept.recheck(policy: .current) == nil, "\(directory) given away")
                let refusal = HookRefusal.directoryUntrustedOwner(path: base.path(directory), uid: 65534)
                #expect(throws: refusal) { try hooks.open("50-hook", in: hooks.snapshot()) }
                guard chown(base.path(directory), getuid(), 0) == 0 else { throw TestFailure("chown \(directory)") }
                #expect(try hooks.open("50-hook") == first)
            }
        }
    }

    @Test("a hook added after a check is in the next event's listing")
    func hookAddedAfterACheck() async throws {
        try await TemporaryDirectory.with { base in
            try hooksTree(base, parentMode: 0o755)
            // An old mtime before the first check, so its listing is reused while the directory
            // is unchanged (one within two seconds of the mtime never is: the racy window).
            let hourAgo = timespec(tv_sec: time(nil) - 3600, tv_nsec: 0)
            var times = [hourAgo, hourAgo]
            guard utimensat(AT_FDCWD, base.path("etc/hooks.d"), &times, 0) == 0 else { throw TestFailure("utimensat") }
            let hooks = HookDirectory(path: base.path("etc/hooks.d"), logger: LogStore().logger)
            #expect(hooks.snapshot().names == ["50-hook"])
            #expect(hooks.snapshot().names == ["50-hook"])
            try safeHook(base.path("etc/hooks.d/60-new"))
            #expect(hooks.snapshot().names == ["50-hook", "60-new"])
        }
    }

    @Test("a hooks directory replaced after a check: the next check opens the new one's file")
    func hooksDirectoryReplacedAfterACheck() async throws {
        try await TemporaryDirectory.with { base in
            let (hooks, first, kept) = try checkedOnce(base)
            guard rename(base.path("etc/hooks.d"), base.path("etc/hooks.old")) == 0 else { throw TestFailure("rename") }
            try makeDirectory(base.path("etc/hooks.d"), mode: 0o755)
            #expect(kept.recheck(policy: .current) == nil, "hooks.d replaced")
            try safeHook(base.path("etc/hooks.d/50-hook"))
            var status = stat()
            guard stat(base.path("etc/hooks.d/50-hook"), &status) == 0 else { throw TestFailure("stat") }
            let second = try hooks.open("50-hook", in: hooks.snapshot())
            #expect(second.inode != first.inode)
            #expect(second.inode == UInt64(status.st_ino))
        }
    }

    @Test(
        "a directory on the path replaced by a symlink after a check: the next check follows it and checks its target"
    )
    func directoryReplacedBySymlinkAfterACheck() async throws {
        try await TemporaryDirectory.with { base in
            let (hooks, _, kept) = try checkedOnce(base)
            guard rename(base.path("etc"), base.path("real")) == 0 else { throw TestFailure("rename") }
            try link(base.path("etc"), to: "real")
            #expect(kept.recheck(policy: .current) == nil, "etc replaced by a symlink")
            #expect(try hooks.open("50-hook").executablePath == base.path("real/hooks.d/50-hook"))
            // The same tree moved where anybody may put a name: refused, though nothing in it changed.
            try makeDirectory(base.path("drop"), mode: 0o1777)
            guard rename(base.path("real"), base.path("drop/real")) == 0, unlink(base.path("etc")) == 0 else {
                throw TestFailure("move")
            }
            try link(base.path("etc"), to: "drop/real")
            let refusal = HookRefusal.directoryWritableByGroupOrOthers(path: base.path("drop"), mode: 0o41777)
            #expect(throws: refusal) { try hooks.open("50-hook", in: hooks.snapshot()) }
            #expect(throws: refusal) { try hooks.open("50-hook") }
        }
    }

    @Test("a name with a control character is refused, never run, and logged on one line")
    func controlCharacterInName() async throws {
        try await TemporaryDirectory.with { dir in
            let name = "50-evil\nhook: accepted"
            try dir.hook(name, "echo ran > \(dir.path("ran"))")
            try dir.hook("60-fine", "exit 0")
            let log = LogStore()
            let hooks = HookDirectory(path: dir.path, logger: log.logger)
            #expect(hooks.hookNames() == ["60-fine"])
            #expect(hooks.entries().first { $0.name == name }?.status == .refused(.invalidName))
            #expect(throws: HookRefusal.invalidName) { try hooks.open(name) }
            let warnings = log.all.filter { $0.level == .warning }
            #expect(warnings.count == 1)
            #expect(warnings.allSatisfy { !$0.message.contains("\n") && $0.message.contains("50-evil\\nhook") })
            #expect(dir.read("ran") == nil)
        }
    }
}
