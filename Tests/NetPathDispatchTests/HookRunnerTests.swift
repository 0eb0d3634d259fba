import Foundation
import NetPathDispatch
import TestSupport
import Testing

/// Execution: exit status, no shell, timeouts on the whole process group, bounded output.
@Suite(.enabled(if: Privileges.namespaceTestsEnabled, "runs hooks owned by root"))
struct HookRunnerTests {
    static func run(
        _ name: String,
        in dir: TemporaryDirectory,
        timeout: Duration = .seconds(10),
        options: HookRunner.Options = .init(),
        log: LogStore = LogStore()
    ) async throws -> HookResult {
        let hooks = HookDirectory(path: dir.path, logger: log.logger)
        let invocation = try HookInvocation(
            hook: name,
            event: Events.interface(.up, "eth0"),
            rule: nil,
            timeout: timeout
        )
        return await HookRunner(options: options, logger: log.logger).run(invocation, executing: try hooks.open(name))
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
}
