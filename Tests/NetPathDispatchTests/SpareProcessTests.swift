import Foundation
import NetPathCore
import TestSupport
import Testing

@testable import NetPathDispatch

/// Hooks started through a process made ahead of time (SpareProcess): the same hook as a clone
/// gives, and a clone when the spare is gone.
struct SpareProcessTests {
    /// Spares of the test's own, with one ready.
    static func readySpares() throws -> SpareProcess {
        let spares = SpareProcess()
        spares.refill()
        try #require(
            spares.waitUntilReady(deadline: MonotonicClock.nanoseconds + 10_000_000_000),
            "no spare was made within 10 s"
        )
        return spares
    }

    /// A hook run through `spares`, with no cgroup of the agent's own (HookRunnerTests.run).
    static func run(
        _ name: String,
        in dir: TemporaryDirectory,
        spares: SpareProcess,
        log: LogStore = LogStore(),
        configure: (inout HookInvocation) -> Void = { _ in }
    ) async throws -> HookResult {
        try await HookRunnerTests.run(
            name,
            in: dir,
            cgroup: HookRunnerTests.noCgroup,
            spares: spares,
            log: log,
            configure: configure
        )
    }

    /// What `name` wrote to its stdout, one entry per line.
    static func lines(of name: String, in log: LogStore) -> [String] {
        log.with("hook", name).filter { $0.metadata["stream"] == "stdout" }.map {
            String($0.message.dropFirst(name.count + 2))
        }
    }

    /// The fields of `/proc/PID/stat` after the name: [0] is field 3 (state).
    static func statFields(_ text: String) -> [Substring] {
        guard let close = text.lastIndex(of: ")") else { return [] }
        return text[text.index(close, offsetBy: 2)...].split(separator: " ")
    }

    /// The state letter of process `pid` (`S` asleep, `Z` a zombie); `nil` once it is gone.
    static func state(of pid: pid_t) -> Substring? {
        (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)).flatMap { statFields($0).first }
    }

    @Test(
        "a hook started through a spare is the spare, made before the run, with a clone's set-up: own group, / as working directory, descriptors 0-2 only, no signal ignored or blocked"
    )
    func spareBecomesTheHook() async throws {
        // Ignored in the agent when the spare is made: the hook still gets the default. (SIGTTIN:
        // no other test changes it; they run at once, in this process.)
        var previous = sigaction()
        sigaction(SIGTTIN, nil, &previous)
        signal(SIGTTIN, SIG_IGN)
        defer { sigaction(SIGTTIN, &previous, nil) }
        let spares = try Self.readySpares()
        defer { spares.discard() }
        let sparePID = try #require(spares.readyPID)
        // Ready once made; asleep (waiting for a hook) a moment later.
        let asleep = ContinuousClock.now + .seconds(5)
        while Self.state(of: sparePID) != "S" && ContinuousClock.now < asleep {
            try await Task.sleep(for: .milliseconds(1))
        }
        #expect(Self.state(of: sparePID) == "S", "the spare does not wait asleep")
        try await TemporaryDirectory.with { dir in
            try dir.hook(
                "10-setup",
                """
                echo "pid=$$"
                echo "stat=$(cat /proc/$$/stat)"
                echo "cwd=$(pwd -P)"
                grep -E '^Sig(Ign|Blk)' /proc/self/status
                echo "stdin=$(head -c 1)"
                exec ls /proc/self/fd
                """
            )
            let log = LogStore()
            let result = try await Self.run("10-setup", in: dir, spares: spares, log: log)
            #expect(result.termination == .exited(0), "\(result)")
            let lines = Self.lines(of: "10-setup", in: log)
            #expect(lines.contains("pid=\(sparePID)"), "the hook was not the spare's process: \(lines)")
            let stat = try #require(lines.first { $0.hasPrefix("stat=") })
            let fields = Self.statFields(stat)
            // Field 5, the process group: its own.
            #expect(fields.count > 2 && fields[2] == "\(sparePID)", "not in a group of its own: \(stat)")
            #expect(lines.contains("cwd=/"))
            #expect(
                lines.contains("SigBlk:\t0000000000000000") && lines.contains("SigIgn:\t0000000000000000"),
                "\(lines)"
            )
            // The event's JSON on stdin.
            #expect(lines.contains("stdin={"), "\(lines)")
            // ls's own: 0, 1, 2 and the directory it reads.
            #expect(lines.suffix(4) == ["0", "1", "2", "3"], "descriptors beyond 0-2 reached the hook: \(lines)")
        }
        // Consumed: the run's end asked for the next one, which is another process.
        #expect(spares.waitUntilReady(deadline: MonotonicClock.nanoseconds + 10_000_000_000))
        #expect(spares.madeCount == 2)
        #expect(spares.readyPID != sparePID)
    }

    @Test("a hook started through a spare does not keep the spare's parent death signal: it would die with the agent")
    func parentDeathSignalIsCleared() async throws {
        let spares = try Self.readySpares()
        defer { spares.discard() }
        let sparePID = try #require(spares.readyPID)
        try await TemporaryDirectory.with { dir in
            // PR_GET_PDEATHSIG is 2.
            try dir.hook(
                "10-pdeathsig",
                """
                exec python3 -c 'import ctypes, os; v = ctypes.c_int(-1); ctypes.CDLL(None).prctl(2, ctypes.byref(v)); print("%d pdeathsig=%d" % (os.getpid(), v.value))'
                """
            )
            let log = LogStore()
            let result = try await Self.run("10-pdeathsig", in: dir, spares: spares, log: log)
            #expect(result.termination == .exited(0), "\(result)")
            #expect(Self.lines(of: "10-pdeathsig", in: log) == ["\(sparePID) pdeathsig=0"])
        }
    }

    @Test(
        "signals sent to a waiting spare (it shares netpathd's command line: pkill reaches it) never reach the hook it becomes"
    )
    func pendingSignalsAreDropped() async throws {
        let spares = try Self.readySpares()
        defer { spares.discard() }
        let sparePID = try #require(spares.readyPID)
        for number in [SIGHUP, SIGTERM, SIGTSTP, SIGUSR1] { #expect(kill(sparePID, number) == 0) }
        try await TemporaryDirectory.with { dir in
            try dir.hook("10-pending", "echo \"pid=$$\"\ngrep -E '^(SigPnd|ShdPnd)' /proc/self/status")
            let log = LogStore()
            let result = try await Self.run("10-pending", in: dir, spares: spares, log: log)
            #expect(result.termination == .exited(0), "\(result)")
            #expect(
                Self.lines(of: "10-pending", in: log)
                    == ["pid=\(sparePID)", "SigPnd:\t0000000000000000", "ShdPnd:\t0000000000000000"]
            )
        }
    }

    @Test("a stopped spare does not hold the spawn: within seconds it is killed and the hook cloned")
    func stoppedSpareIsReplaced() async throws {
        let spares = try Self.readySpares()
        let sparePID = try #require(spares.readyPID)
        #expect(kill(sparePID, SIGSTOP) == 0)
        try await TemporaryDirectory.with { dir in
            try dir.hook("10-after-stop", "echo \"pid=$$\"")
            let log = LogStore()
            let started = ContinuousClock.now
            let result = try await Self.run("10-after-stop", in: dir, spares: spares, log: log)
            #expect(result.termination == .exited(0), "\(result)")
            #expect(ContinuousClock.now - started < .seconds(5))
            let lines = Self.lines(of: "10-after-stop", in: log)
            #expect(lines.count == 1 && lines != ["pid=\(sparePID)"], "\(lines)")
        }
        #expect(!FileManager.default.fileExists(atPath: "/proc/\(sparePID)"), "the stopped spare was left")
        spares.discard()
    }

    @Test("a spare killed before its turn: the hook is cloned instead and runs, and the dead spare is reaped")
    func killedSpareFallsBackToClone() async throws {
        let spares = try Self.readySpares()
        defer { spares.discard() }
        let sparePID = try #require(spares.readyPID)
        #expect(kill(sparePID, SIGKILL) == 0)
        // Dead once a zombie (its parent, this process, has not reaped it).
        let deadline = ContinuousClock.now + .seconds(5)
        while Self.state(of: sparePID) != "Z" && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        try #require(Self.state(of: sparePID) == "Z", "the killed spare did not die within 5 s")
        try await TemporaryDirectory.with { dir in
            try dir.hook("10-fallback", "echo \"pid=$$\"")
            let log = LogStore()
            let result = try await Self.run("10-fallback", in: dir, spares: spares, log: log)
            #expect(result.termination == .exited(0), "\(result)")
            let lines = Self.lines(of: "10-fallback", in: log)
            #expect(lines.count == 1 && lines != ["pid=\(sparePID)"], "\(lines)")
        }
        #expect(Self.state(of: sparePID) == nil, "the killed spare was left unreaped")
    }

    @Test(
        "through a spare, a hook that cannot be exec'd, or whose set-up fails, is reported as a clone's is, and reaped at once"
    )
    func failuresThroughASpare() async throws {
        try await TemporaryDirectory.with { dir in
            try dir.write("10-noshebang", "true\n", mode: 0o755)
            let zombies = HookRunnerTests.zombieChildren()
            let first = try Self.readySpares()
            defer { first.discard() }
            let noShebang = try await Self.run("10-noshebang", in: dir, spares: first)
            #expect(
                HookRunnerTests.startFailure(noShebang)?.hasSuffix("10-noshebang: Exec format error (errno \(ENOEXEC))")
                    == true,
                "\(noShebang)"
            )
            try dir.hook("20-present", "true")
            let spares = try Self.readySpares()
            defer { spares.discard() }
            let sparePID = try #require(spares.readyPID)
            let setUp = try await Self.run("20-present", in: dir, spares: spares) {
                $0.workingDirectory = dir.path("missing")
            }
            #expect(
                HookRunnerTests.startFailure(setUp)?.hasSuffix(
                    "20-present: its working directory \(dir.path("missing")) (chdir): No such file or directory (errno \(ENOENT))"
                ) == true,
                "\(setUp)"
            )
            #expect(
                !FileManager.default.fileExists(atPath: "/proc/\(sparePID)"),
                "the spare that failed was left unreaped"
            )
            #expect(HookRunnerTests.zombieChildren() <= zombies, "a spare that failed was left unreaped")
        }
    }

    @Test("spares turned off (as NETPATH_NO_SPARE_PROCESS turns the agent's off): none is made, and hooks are cloned")
    func turnedOff() async throws {
        let spares = SpareProcess(enabled: false)
        spares.refill()
        #expect(!spares.waitUntilReady(deadline: MonotonicClock.nanoseconds + 100_000_000))
        try await TemporaryDirectory.with { dir in
            try dir.hook("10-cloned", "echo \"ppid=$PPID\"")
            let log = LogStore()
            let result = try await Self.run("10-cloned", in: dir, spares: spares, log: log)
            #expect(result.termination == .exited(0), "\(result)")
            #expect(Self.lines(of: "10-cloned", in: log) == ["ppid=\(getpid())"])
        }
        #expect(spares.madeCount == 0 && spares.readyPID == nil)
    }

    @Test("boot ticks are a lower bound of the /proc start time of what starts later, and not below this process's")
    func bootTicksMatchProcStartTimes() throws {
        let own = try #require(try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8))
        // Field 22 is [19] here.
        let ownStart = try #require(UInt64(Self.statFields(own)[19]))
        let before = SpawnedHook.bootTicks()
        #expect(before >= ownStart)
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/sleep")
        child.arguments = ["30"]
        try child.run()
        defer {
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
        }
        let text = try #require(try? String(contentsOfFile: "/proc/\(child.processIdentifier)/stat", encoding: .utf8))
        let childStart = try #require(UInt64(Self.statFields(text)[19]))
        #expect(childStart >= before, "a process started after \(before) ticks has start time \(childStart)")
        #expect(childStart <= SpawnedHook.bootTicks())
    }
}
