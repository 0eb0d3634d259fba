// SPDX-License-Identifier: Apache-2.0

import Foundation
import TestSupport
import Testing

@testable import NetPathDispatch

/// Execution: exit status, no shell, timeouts on the whole process group, bounded output, and
/// nothing left running after the hook.
@Suite(.serialSuite)
struct HookRunnerTests {
    static func run(
        _ name: String,
        in dir: TemporaryDirectory,
        timeout: Duration = .seconds(10),
        options: HookRunner.Options = .init(),
        cgroup: AgentCgroup = .shared,
        log: LogStore = LogStore(),
        configure: (inout HookInvocation) -> Void = { _ in }
    ) async throws -> HookResult {
        let hooks = HookDirectory(path: dir.path, logger: log.logger)
        var invocation = HookInvocation(
            hook: name,
            event: Events.interface(.up, "eth0"),
            rule: nil,
            timeout: timeout
        )
        configure(&invocation)
        let runner = HookRunner(options: options, logger: log.logger, cgroup: cgroup)
        return await runner.run(invocation, executing: try hooks.open(name))
    }

    /// No cgroup of the agent's own: what the agent does where it may not have one.
    static let noCgroup = AgentCgroup(availability: .unavailable("turned off by the test"))

    /// Whether hooks are born in a cgroup of the agent's own here; under CI they must be (the
    /// tests that need it fail rather than skip).
    static var cgroupExpected: Bool {
        if case .available = AgentCgroup.shared.availability { return true }
        return ProcessInfo.processInfo.environment["CI"] == "true"
    }

    /// The pid a hook wrote to `name`.
    static func pid(_ name: String, in dir: TemporaryDirectory) throws -> Int32 {
        try #require(Int32((dir.read(name) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    /// Waits until `pid` is dead (or a zombie), at most `limit`; whether it is.
    static func awaitDeath(_ pid: Int32, within limit: Duration = .seconds(2)) async throws -> Bool {
        // A process killed by its group or cgroup dies asynchronously; its reaper may lag too.
        let deadline = ContinuousClock.now + limit
        while isAlive(pid) && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        return !isAlive(pid)
    }

    @Test("exit status, signal and output lines are reported, tagged with the hook's name")
    func statusAndOutput() async throws {
        try await TemporaryDirectory.with { dir in
            try dir.hook("10-exit", "echo to stdout; echo to stderr >&2; exit 3")
            try dir.hook("20-signal", "kill -USR1 $$")
            let log = LogStore()
            let exited = try await Self.run("10-exit", in: dir, log: log)
            #expect(exited.termination == .exited(3))
            #expect(exited.outcome == .failure)
            #expect(exited.linesLogged == 2)
            let lines = log.with("hook", "10-exit").filter { $0.metadata["stream"] != nil }
            #expect(Set(lines.map(\.message)) == ["10-exit: to stdout", "10-exit: to stderr"])
            let signaled = try await Self.run("20-signal", in: dir)
            #expect(signaled.termination == .signaled(SIGUSR1))
        }
    }

    @Test("a script without #! is not started: there is no shell to fall back on")
    func noShellFallback() async throws {
        try await TemporaryDirectory.with { dir in
            try dir.write("10-noshebang", "touch \(dir.path("ran"))\n")
            let result = try await Self.run("10-noshebang", in: dir)
            guard case .failedToStart = result.termination else {
                Issue.record("expected failedToStart, got \(result)")
                return
            }
            #expect(result.outcome == .error)
            #expect(dir.read("ran") == nil)
        }
    }

    @Test("a hook that cannot be exec'd is reported with the exec's error, and its child is reaped at once")
    func failedExecLeavesNoChild() async throws {
        try await TemporaryDirectory.with { dir in
            try dir.write("10-noshebang", "true\n", mode: 0o755)
            try dir.hook("20-gone", "true")
            let zombies = Self.zombieChildren()
            let noShebang = try await Self.run("10-noshebang", in: dir)
            #expect(
                Self.startFailure(noShebang)?.hasSuffix("10-noshebang: Exec format error (errno \(ENOEXEC))") == true,
                "\(noShebang)"
            )
            // Checked, then gone before the spawn: the open file's path no longer names anything.
            let hooks = HookDirectory(path: dir.path, logger: LogStore().logger)
            let opened = try hooks.open("20-gone")
            try FileManager.default.removeItem(atPath: dir.path("20-gone"))
            let invocation = HookInvocation(
                hook: "20-gone",
                event: Events.interface(.up, "eth0"),
                rule: nil,
                timeout: .seconds(5)
            )
            let gone = await HookRunner(options: .init(), logger: LogStore().logger, cgroup: Self.noCgroup)
                .run(invocation, executing: opened)
            #expect(
                Self.startFailure(gone)?.hasSuffix("20-gone: No such file or directory (errno \(ENOENT))") == true,
                "\(gone)"
            )
            // At most as many as before: an earlier test's hook may have been reaped meanwhile.
            #expect(Self.zombieChildren() <= zombies, "a child that failed to exec was left unreaped")
        }
    }

    @Test("a spawn that fails before the exec names the step: its ENOENT is not read as a missing hook")
    func failedSetUpIsNamed() async throws {
        try await TemporaryDirectory.with { dir in
            try dir.hook("10-present", "true")
            let zombies = Self.zombieChildren()
            let result = try await Self.run("10-present", in: dir, cgroup: Self.noCgroup) {
                $0.workingDirectory = dir.path("missing")
            }
            let reason = Self.startFailure(result)
            #expect(
                reason?.hasSuffix(
                    "10-present: its working directory \(dir.path("missing")) (chdir): No such file or directory (errno \(ENOENT))"
                ) == true,
                "\(result)"
            )
            #expect(result.outcome == .error)
            #expect(Self.zombieChildren() <= zombies, "a child that failed before its exec was left unreaped")
        }
    }

    @Test(
        "signals the agent ignores reach a hook at their defaults, and none blocked (the lifecycle library ignores SIGTERM, SIGINT and SIGHUP)"
    )
    func ignoredSignalsAreReset() async throws {
        // A runner first: the first one ignores SIGPIPE for the process, unless it is ignored
        // already (as it is below), and the restore at the end would then leave it at its default.
        _ = HookRunner(options: .init(), logger: LogStore().logger, cgroup: Self.noCgroup)
        let ignored = [SIGTERM, SIGINT, SIGHUP, SIGUSR2, SIGPIPE]
        var previous: [Int32: sigaction] = [:]
        for number in ignored {
            var old = sigaction()
            sigaction(number, nil, &old)
            previous[number] = old
            signal(number, SIG_IGN)
        }
        defer { for (number, old) in previous { var old = old; sigaction(number, &old, nil) } }
        try await TemporaryDirectory.with { dir in
            try dir.hook("10-signals", "exec grep -E '^Sig(Ign|Blk)' /proc/self/status")
            let log = LogStore()
            let result = try await Self.run("10-signals", in: dir, log: log)
            #expect(result.termination == .exited(0))
            let lines = Set(log.with("hook", "10-signals").filter { $0.metadata["stream"] != nil }.map(\.message))
            #expect(lines == ["10-signals: SigBlk:\t0000000000000000", "10-signals: SigIgn:\t0000000000000000"])
        }
    }

    @Test("a hook is the agent's own child and has no parent death signal: it does not die with the agent")
    func noParentDeathSignal() async throws {
        try await TemporaryDirectory.with { dir in
            // PR_GET_PDEATHSIG is 2.
            try dir.hook(
                "10-parent",
                """
                exec python3 -c 'import ctypes, os; v = ctypes.c_int(-1); ctypes.CDLL(None).prctl(2, ctypes.byref(v)); print("ppid=%d pdeathsig=%d" % (os.getppid(), v.value))'
                """
            )
            let log = LogStore()
            let result = try await Self.run("10-parent", in: dir, cgroup: Self.noCgroup, log: log)
            #expect(result.termination == .exited(0), "\(result)")
            let lines = log.with("hook", "10-parent").filter { $0.metadata["stream"] == "stdout" }.map(\.message)
            #expect(lines == ["10-parent: ppid=\(getpid()) pdeathsig=0"])
        }
    }

    static func startFailure(_ result: HookResult) -> String? {
        guard case .failedToStart(let reason) = result.termination else { return nil }
        return reason
    }

    /// Zombies whose parent is this process and whose name is one of its threads' (a child
    /// takes the name of the thread that forked it, until it execs): children that never exec'd
    /// and were not reaped.
    static func zombieChildren() -> Int {
        let me = getpid()
        let manager = FileManager.default
        let threadNames = Set(
            ((try? manager.contentsOfDirectory(atPath: "/proc/self/task")) ?? []).compactMap {
                try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8)
                    .trimmingCharacters(in: .newlines)
            }
        )
        return ((try? manager.contentsOfDirectory(atPath: "/proc")) ?? []).filter { entry in
            guard Int32(entry) != nil,
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")")
            else { return false }
            let name = String(stat[stat.index(after: open)..<close])
            let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
            return fields.count > 1 && fields[0] == "Z" && Int32(fields[1]) == me && threadNames.contains(name)
        }.count
    }

    @Test("a hook that floods its output and ignores SIGTERM is still killed after the grace")
    func floodingHookIsKilled() async throws {
        try await TemporaryDirectory.with { dir in
            // cat keeps the ignored SIGTERM across exec and writes without pause: the deadline is
            // kept by the loop that reads it, which must not stay in one read pass. (On this
            // machine the reader catches up now and then, so an unbounded pass did not hang here;
            // the test holds the property, not that race.)
            try dir.hook("10-flood", "trap '' TERM\nexec cat /dev/zero")
            let options = HookRunner.Options(terminationGrace: .milliseconds(300))
            let started = ContinuousClock.now
            let result = try await Self.run("10-flood", in: dir, timeout: .milliseconds(300), options: options)
            let elapsed = ContinuousClock.now - started
            #expect(result.timedOut)
            #expect(result.termination == .signaled(SIGKILL))
            #expect(elapsed < .seconds(5), "the flooding hook ran \(elapsed)")
            #expect(result.bytesDropped > 0)
        }
    }

    @Test(
        "a hook that sleeps forever is killed at its timeout together with the child it spawned",
        arguments: [false, true]
    )
    func timeoutKillsTheGroup(ignoringSIGTERM: Bool) async throws {
        try await TemporaryDirectory.with { dir in
            let trap = ignoringSIGTERM ? "trap '' TERM" : ""
            try dir.hook(
                "10-hang",
                """
                \(trap)
                sh -c "\(trap); sleep 1000" &
                echo $! > \(dir.path("child"))
                sleep 1000
                """
            )
            let options = HookRunner.Options(terminationGrace: .milliseconds(500))
            let started = ContinuousClock.now
            let result = try await Self.run("10-hang", in: dir, timeout: .milliseconds(500), options: options)
            let elapsed = ContinuousClock.now - started
            #expect(result.timedOut)
            #expect(result.outcome == .timeout)
            #expect(result.termination == .signaled(ignoringSIGTERM ? SIGKILL : SIGTERM))
            #expect(elapsed < .seconds(5))
            let child = try #require(Int32((dir.read("child") ?? "").trimmingCharacters(in: .whitespacesAndNewlines)))
            // The child is reparented when the hook dies; give its reaper a moment.
            let deadline = ContinuousClock.now + .seconds(2)
            while isAlive(child) && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            #expect(!isAlive(child), "child \(child) outlived its hook")
        }
    }

    @Test("a hook printing 100 MB does not grow the agent's memory; the excess is counted and dropped")
    func hugeOutputIsBounded() async throws {
        try await TemporaryDirectory.with { dir in
            // 100 MB as one endless line on stdout, and 100 MB of short lines on stderr.
            try dir.hook(
                "10-flood",
                """
                head -c 100000000 /dev/zero | tr '\\0' x &
                yes 'a short line of output' | head -c 100000000 >&2
                wait
                """
            )
            let before = try residentBytes()
            let limits = HookOutputLimits(lineLength: 1024, bytesPerRun: 64 * 1024)
            let result = try await Self.run("10-flood", in: dir, options: .init(output: limits))
            let after = try residentBytes()
            #expect(result.termination == .exited(0))
            #expect(after - before < 32 * 1024 * 1024, "RSS grew by \((after - before) / 1024 / 1024) MiB")
            #expect(result.bytesDropped >= 200_000_000 - 64 * 1024)
            #expect(result.linesLogged > 0)
            #expect(result.linesLogged <= 64 * 1024 / 23 + 1)
        }
    }

    @Test(
        "a background child the hook leaves running is ended shortly after the hook exits, with or without a cgroup",
        arguments: [true, false]
    )
    func leftoverChildIsEnded(withCgroup: Bool) async throws {
        try await TemporaryDirectory.with { dir in
            try dir.hook(
                "10-leave",
                """
                sleep 100000 &
                echo $! > \(dir.path("child"))
                exit 0
                """
            )
            let log = LogStore()
            let started = ContinuousClock.now
            let result = try await Self.run(
                "10-leave",
                in: dir,
                options: .init(lingerGrace: .milliseconds(200)),
                cgroup: withCgroup ? .shared : Self.noCgroup,
                log: log
            )
            let child = try Self.pid("child", in: dir)
            defer { kill(child, SIGKILL) }
            #expect(result.termination == .exited(0))
            #expect(!result.timedOut)
            #expect(try await Self.awaitDeath(child), "child \(child) outlived its hook")
            #expect(ContinuousClock.now - started < .seconds(5))
            #expect(log.with("hook", "10-leave").contains { $0.message.contains("killed what it left running") })
        }
    }

    @Test(
        "a setsid grandchild, outside the hook's process group, is ended too: hooks are born in the agent's cgroup",
        .enabled(if: cgroupExpected, "hooks get no cgroup of the agent's own here")
    )
    func setsidGrandchildIsEnded() async throws {
        guard case .available(let leaf) = AgentCgroup.shared.availability else {
            Issue.record("hooks get no cgroup of the agent's own here: \(AgentCgroup.shared.availability)")
            return
        }
        try await TemporaryDirectory.with { dir in
            let pidFile = dir.path("grandchild")
            try dir.hook(
                "10-escape",
                """
                cat /proc/self/cgroup > \(dir.path("cgroup"))
                setsid sh -c 'echo $$ > \(pidFile); exec sleep 100000' &
                while [ ! -s \(pidFile) ]; do sleep 0.01; done
                exit 0
                """
            )
            let log = LogStore()
            let options = HookRunner.Options(lingerGrace: .milliseconds(200))
            let result = try await Self.run("10-escape", in: dir, options: options, log: log)
            let grandchild = try Self.pid("grandchild", in: dir)
            defer { kill(grandchild, SIGKILL) }
            #expect(result.termination == .exited(0))
            #expect(try await Self.awaitDeath(grandchild), "setsid grandchild \(grandchild) outlived its hook")
            #expect(log.with("hook", "10-escape").contains { $0.message.contains("killed what it left running") })
            let line = try #require(dir.read("cgroup")?.split(separator: "\n").first { $0.hasPrefix("0::") })
            #expect(leaf.hasSuffix(line.dropFirst(3)), "the hook ran in \(line), not in \(leaf)")
        }
    }

    @Test("without a cgroup, a setsid grandchild escapes: the log says so once, naming what is not covered")
    func withoutCgroupsTheFallbackIsLogged() async throws {
        try await TemporaryDirectory.with { dir in
            let pidFile = dir.path("grandchild")
            try dir.hook(
                "10-escape",
                """
                setsid sh -c 'echo $$ > \(pidFile); exec sleep 100000' &
                while [ ! -s \(pidFile) ]; do sleep 0.01; done
                """
            )
            let log = LogStore()
            let cgroup = AgentCgroup(availability: .unavailable("turned off by the test"))
            for _ in 0..<2 {
                try? FileManager.default.removeItem(atPath: pidFile)
                let result = try await Self.run(
                    "10-escape",
                    in: dir,
                    options: .init(lingerGrace: .milliseconds(100)),
                    cgroup: cgroup,
                    log: log
                )
                let grandchild = try Self.pid("grandchild", in: dir)
                kill(grandchild, SIGKILL)
                #expect(result.termination == .exited(0))
            }
            let notices = log.all.filter {
                $0.message.hasPrefix("hooks run without a cgroup of the agent's own (turned off by the test)")
            }
            #expect(notices.count == 1)
            #expect(notices.first?.message.contains("a process that leaves the group (setsid") == true)
        }
    }

    @Test("a background job that ends within the grace is left to finish, and the run waits for it")
    func shortBackgroundJobFinishes() async throws {
        try await TemporaryDirectory.with { dir in
            try dir.hook("10-notify", "(sleep 0.3; echo done > \(dir.path("done"))) &\nexit 0")
            let log = LogStore()
            let started = ContinuousClock.now
            let result = try await Self.run("10-notify", in: dir, options: .init(lingerGrace: .seconds(20)), log: log)
            #expect(result.termination == .exited(0))
            #expect(dir.read("done") == "done\n")
            #expect(ContinuousClock.now - started < .seconds(10), "the run waited for the whole grace")
            #expect(!log.all.contains { $0.message.contains("killed what it left running") })
        }
    }
}
