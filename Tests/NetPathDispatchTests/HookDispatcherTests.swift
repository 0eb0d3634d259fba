// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathCore
import NetPathDispatch
import TestSupport
import Testing

/// Ordering and isolation with real hook processes.
@Suite(.serialSuite)
struct HookDispatcherTests {
    /// A dispatcher of the hooks in `dir`, logging to `log`; not yet running.
    static func makeDispatcher(
        _ dir: TemporaryDirectory,
        log: LogStore,
        options: HookDispatcher.Options = .init(),
        runner: HookRunner.Options = .init()
    ) -> HookDispatcher {
        HookDispatcher(
            directory: HookDirectory(path: dir.path, logger: log.logger),
            runner: HookRunner(options: runner, logger: log.logger),
            options: options,
            logger: log.logger
        )
    }

    /// Runs `body` with a dispatcher working on `dir`, and stops it afterwards.
    static func withDispatcher(
        _ dir: TemporaryDirectory,
        log: LogStore = LogStore(),
        options: HookDispatcher.Options = .init(),
        runner: HookRunner.Options = .init(),
        _ body: (HookDispatcher) async throws -> Void
    ) async throws {
        let dispatcher = makeDispatcher(dir, log: log, options: options, runner: runner)
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await dispatcher.run() }
            defer { group.cancelAll() }
            try await body(dispatcher)
        }
    }

    @Test("for one event, hooks run one after another in lexical order")
    func hooksRunInLexicalOrder() async throws {
        try await TemporaryDirectory.with { dir in
            let out = dir.path("order")
            for name in ["30-c", "10-a", "20-b"] {
                try dir.hook(name, "echo start $0 >> \(out); sleep 0.05; echo end >> \(out)")
            }
            try await Self.withDispatcher(dir) { dispatcher in
                dispatcher.dispatch(Events.interface(.up, "eth0"), to: [.all(timeout: .seconds(10))])
                await dispatcher.waitUntilIdle()
                #expect(dispatcher.statistics.runCount("10-a", .success) == 1)
            }
            let lines = (dir.read("order") ?? "").split(separator: "\n")
            #expect(lines.count == 6)
            #expect(
                lines.enumerated().allSatisfy {
                    $0.offset % 2 == 1 ? $0.element == "end" : $0.element.hasPrefix("start")
                }
            )
        }
    }

    @Test("an idle subject's first hook is spawned before dispatch returns, by the thread that dispatched")
    func firstHookSpawnedBeforeDispatchReturns() async throws {
        try await TemporaryDirectory.with { dir in
            // A name no other test's hook has: its command line finds it among our children.
            let name = "10-first-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            try dir.hook(name, "while [ ! -e \(dir.path(".go")) ]; do sleep 0.01; done")
            try await Self.withDispatcher(dir) { dispatcher in
                func running() -> [pid_t] { Self.children().filter { Self.commandLine($0).contains(name) }.sorted() }
                #expect(running().isEmpty)
                dispatcher.dispatch(Events.interface(.up, "eth0"), to: [.all(timeout: .seconds(20))])
                // The spawn returns once the child has exec'd, so the hook's command line is in
                // place already.
                let after = running()
                var hook: pid_t?
                try await waitUntil("the hook is running") {
                    hook = running().first
                    return hook != nil
                }
                if let hook {
                    #expect(after == [hook], "the hook was spawned after dispatch returned")
                }
                try dir.write(".go", "")
                await dispatcher.waitUntilIdle()
                #expect(dispatcher.statistics.runCount(name, .success) == 1)
            }
        }
    }

    @Test("a refused first hook is counted, and the event's next hook still runs")
    func refusedFirstHookThenTheNext() async throws {
        try await TemporaryDirectory.with { dir in
            try dir.hook("10-unsafe", "echo ran >> \(dir.path(".unsafe"))", mode: 0o777)
            try dir.hook("20-safe", "echo ran >> \(dir.path(".safe"))")
            try await Self.withDispatcher(dir) { dispatcher in
                dispatcher.dispatch(Events.interface(.up, "eth0"), to: [.all(timeout: .seconds(10))])
                await dispatcher.waitUntilIdle()
                #expect(dispatcher.statistics.refusals == ["writable-by-group-or-others": 1])
                #expect(dispatcher.statistics.runCount("20-safe", .success) == 1)
            }
            #expect(dir.read(".unsafe") == nil)
            #expect(dir.read(".safe") == "ran\n")
        }
    }

    /// This process's children now.
    static func children() -> Set<pid_t> {
        let me = getpid()
        var found: Set<pid_t> = []
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            // After the command's name in parentheses: state, then the parent's pid.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, pid_t(fields[1]) == me { found.insert(pid) }
        }
        return found
    }

    /// `pid`'s command line, its arguments joined by spaces; empty when it is gone.
    static func commandLine(_ pid: pid_t) -> String {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return "" }
        return String(decoding: data.map { $0 == 0 ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
    }

    @Test(
        "a hung hook delays only its own subject: another interface's events run meanwhile, and it is killed at its timeout"
    )
    func hungHookIsolatedToItsSubject() async throws {
        try await TemporaryDirectory.with { dir in
            try dir.hook(
                "10-hook",
                """
                echo "$NETPATH_INTERFACE $NETPATH_EVENT" >> \(dir.path("seen"))
                [ "$NETPATH_INTERFACE" = hang ] && exec sleep 1000
                exit 0
                """
            )
            try await Self.withDispatcher(dir) { dispatcher in
                // Long enough that nothing but the hung hook reaches it, even with the whole
                // suite running on two cores: waiting for it is what the test must rule out.
                let timeout = Duration.seconds(10)
                let started = ContinuousClock.now
                dispatcher.dispatch(Events.interface(.up, "hang", index: 10), to: [.all(timeout: timeout)])
                _ = try await dir.await("seen") { $0.contains("hang up") }
                for (index, name) in ["fast0", "fast1", "fast2"].enumerated() {
                    dispatcher.dispatch(
                        Events.interface(.up, name, index: 20 + Int32(index)),
                        to: [.all(timeout: timeout)]
                    )
                    dispatcher.dispatch(
                        Events.interface(.carrierDown, name, index: 20 + Int32(index)),
                        to: [.all(timeout: timeout)]
                    )
                }
                _ = try await dir.await("seen", timeout: .seconds(8)) { text in
                    ["fast0", "fast1", "fast2"].allSatisfy {
                        text.contains("\($0) up") && text.contains("\($0) carrier-down")
                    }
                }
                let flowed = ContinuousClock.now - started
                #expect(flowed < timeout, "other interfaces waited for the hung hook")
                #expect(dispatcher.statistics.runCount("10-hook", .timeout) == 0)
                await dispatcher.waitUntilIdle()
                #expect(dispatcher.statistics.runCount("10-hook", .timeout) == 1)
                #expect(dispatcher.statistics.runCount("10-hook", .success) == 6)
                #expect(ContinuousClock.now - started < timeout + .seconds(2))
            }
        }
    }

    @Test("up, down, up queued behind a hung hook: the obsolete ones are dropped, the final one runs")
    func obsoleteEventsDropped() async throws {
        try await TemporaryDirectory.with { dir in
            try dir.hook(
                "10-hook",
                """
                echo "$NETPATH_EVENT" >> \(dir.path("seen"))
                [ "$NETPATH_EVENT" = added ] && exec sleep 1000
                exit 0
                """
            )
            try await Self.withDispatcher(dir) { dispatcher in
                // Only the hung hook may time out; the others get room for a loaded machine.
                let target = HookTarget.all(timeout: .seconds(4))
                dispatcher.dispatch(Events.interface(.added, "eth0"), to: [target])
                _ = try await dir.await("seen") { $0.contains("added") }
                dispatcher.dispatch(Events.interface(.up, "eth0"), to: [target])
                dispatcher.dispatch(Events.interface(.addressAdded, "eth0"), to: [target])
                dispatcher.dispatch(Events.interface(.down, "eth0"), to: [target])
                dispatcher.dispatch(Events.interface(.up, "eth0"), to: [target])
                await dispatcher.waitUntilIdle()
                #expect(dir.read("seen") == "added\naddress-added\nup\n")
                let statistics = dispatcher.statistics
                #expect(statistics.eventsDropped == [.up: 1, .down: 1])
                #expect(statistics.runCount("10-hook", .timeout) == 1)
            }
        }
    }

    @Test("named hooks of several rules run in lexical order, each with its rule")
    func namedTargets() async throws {
        try await TemporaryDirectory.with { dir in
            for name in ["10-a", "20-b", "30-c"] {
                try dir.hook(name, "echo \"\(name) $NETPATH_RULE\" >> \(dir.path("seen"))")
            }
            try await Self.withDispatcher(dir) { dispatcher in
                dispatcher.dispatch(
                    Events.path(.satisfied, primary: "wlan0"),
                    to: [
                        HookTarget(
                            rule: "second",
                            hooks: .named(["30-c", "10-a", "99-missing"]),
                            timeout: .seconds(5)
                        ),
                        HookTarget(rule: "first", hooks: .named(["10-a"]), timeout: .seconds(5)),
                    ]
                )
                await dispatcher.waitUntilIdle()
            }
            #expect(dir.read("seen") == "10-a second\n10-a first\n30-c second\n")
        }
    }

    @Test(
        "a hook is checked once its run has a slot: made unsafe while the run waited for one (its file, or its directory), it is refused",
        arguments: ["the file", "the directory"]
    )
    func checkedOnceTheSlotIsHeld(unsafe: String) async throws {
        try await TemporaryDirectory.with { dir in
            // The test's own files are dotfiles, which are never hooks.
            guard mkfifo(dir.path(".gate"), 0o600) == 0 else { throw TestFailure("mkfifo") }
            try dir.hook("10-late", "[ \"$1\" = eth1 ] || exit 0\necho ran >> \(dir.path(".ran"))")
            // Holds the only slot until the test writes a line into the gate.
            try dir.hook(
                "20-block",
                "[ \"$1\" = eth0 ] || exit 0\necho started > \(dir.path(".started"))\nread line < \(dir.path(".gate"))"
            )
            let options = HookDispatcher.Options(maxRunningHooks: 1, slowAfter: .seconds(60))
            let log = LogStore()
            try await Self.withDispatcher(dir, log: log, options: options) { dispatcher in
                dispatcher.dispatch(Events.interface(.up, "eth0"), to: [.all(timeout: .seconds(20))])
                _ = try await dir.await(".started")
                dispatcher.dispatch(Events.interface(.up, "eth1", index: 8), to: [.all(timeout: .seconds(20))])
                // eth1's first hook, 10-late, waits for the slot 20-block holds. Everything was
                // safe when the event came (and when its snapshot of the directory was taken);
                // now the file, or the directory, is made writable by others.
                try await waitUntil("eth1's first run waits for the slot") { log.waitsForASlot("10-late") }
                try dir.chmod(unsafe == "the file" ? "10-late" : ".", 0o777)
                // The gate: 20-block has it open for reading by now, or soon (ENXIO until then).
                var gate: Int32 = -1
                try await waitUntil("20-block reads the gate") {
                    gate = open(dir.path(".gate"), O_WRONLY | O_NONBLOCK)
                    return gate >= 0
                }
                _ = write(gate, "go\n", 3)
                close(gate)
                await dispatcher.waitUntilIdle()
                // The directory refuses both of eth1's hooks; the file only itself.
                let (code, refused) =
                    unsafe == "the file"
                    ? ("writable-by-group-or-others", 1) : ("directory-writable-by-group-or-others", 2)
                #expect(dispatcher.statistics.refusals == [code: refused])
                #expect(dispatcher.statistics.runCount("20-block", .success) == 3 - refused)
            }
            #expect(dir.read(".ran") == nil)
            try dir.chmod(".", 0o755)
        }
    }

    @Test("at most maxRunningHooks hooks run at once over all subjects while none is slow")
    func concurrencyBound() async throws {
        try await TemporaryDirectory.with { dir in
            try dir.hook(
                "10-hook",
                """
                echo start >> \(dir.path("log"))
                sleep 0.3
                echo end >> \(dir.path("log"))
                """
            )
            // slowAfter far beyond the runs: every one counts for as long as it runs.
            let options = HookDispatcher.Options(maxRunningHooks: 2, slowAfter: .seconds(60))
            try await Self.withDispatcher(dir, options: options) { dispatcher in
                for index in 0..<6 {
                    dispatcher.dispatch(
                        Events.interface(.up, "eth\(index)", index: 30 + Int32(index)),
                        to: [.all(timeout: .seconds(10))]
                    )
                }
                await dispatcher.waitUntilIdle()
                #expect(dispatcher.statistics.runCount("10-hook", .success) == 6)
            }
            var running = 0
            var peak = 0
            for line in (dir.read("log") ?? "").split(separator: "\n") {
                running += line == "start" ? 1 : -1
                peak = max(peak, running)
            }
            #expect(peak == 2)
        }
    }

    @Test(
        "hooks hung on as many interfaces as the limit allows do not hold another interface's hook until their timeout"
    )
    func hungHooksDoNotStarveOtherSubjects() async throws {
        try await TemporaryDirectory.with { dir in
            try dir.hook(
                "10-hook",
                """
                echo "$NETPATH_INTERFACE" >> \(dir.path("seen"))
                case "$NETPATH_INTERFACE" in hang*) exec sleep 1000 ;; esac
                exit 0
                """
            )
            let options = HookDispatcher.Options()  // the defaults: 8 hooks, slow after 1 s
            let hung = options.maxRunningHooks
            try await Self.withDispatcher(dir, options: options) { dispatcher in
                // Only the hung hooks reach their timeout: waiting for it is what the test must
                // rule out, and it is far beyond slowAfter even on a loaded machine.
                let timeout = Duration.seconds(10)
                let started = ContinuousClock.now
                for index in 0..<hung {
                    dispatcher.dispatch(
                        Events.interface(.up, "hang\(index)", index: 40 + Int32(index)),
                        to: [.all(timeout: timeout)]
                    )
                }
                _ = try await dir.await("seen") { text in
                    (0..<hung).allSatisfy { text.contains("hang\($0)\n") }
                }
                dispatcher.dispatch(Events.interface(.up, "fast", index: 60), to: [.all(timeout: timeout)])
                _ = try await dir.await("seen", timeout: .seconds(5)) { $0.contains("fast\n") }
                #expect(
                    ContinuousClock.now - started < timeout,
                    "the 9th interface's hook waited for the hung hooks' timeout"
                )
                #expect(dispatcher.statistics.runCount("10-hook", .timeout) == 0)
                await dispatcher.waitUntilIdle()
                #expect(dispatcher.statistics.runCount("10-hook", .timeout) == hung)
                #expect(dispatcher.statistics.runCount("10-hook", .success) == 1)
            }
        }
    }

    @Test(
        "shutdown lets running hooks end as they would: a hung hook still gets its timeout, and what a hook left running its grace"
    )
    func shutdownLetsRunsEnd() async throws {
        try await TemporaryDirectory.with { dir in
            try dir.hook(
                "10-hook",
                """
                case "$NETPATH_INTERFACE" in
                hang) echo hang >> \(dir.path("seen")); exec sleep 1000 ;;
                lingers) (sleep 0.5; echo done > \(dir.path("leftover"))) & echo lingers >> \(dir.path("seen")) ;;
                esac
                exit 0
                """
            )
            let log = LogStore()
            let dispatcher = Self.makeDispatcher(
                dir,
                log: log,
                runner: .init(terminationGrace: .milliseconds(200), lingerGrace: .seconds(5))
            )
            let timeout = Duration.seconds(1)
            let started = ContinuousClock.now
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask { await dispatcher.run() }
                dispatcher.dispatch(Events.interface(.up, "hang", index: 10), to: [.all(timeout: timeout)])
                dispatcher.dispatch(Events.interface(.up, "lingers", index: 11), to: [.all(timeout: timeout)])
                _ = try await dir.await("seen") { $0.contains("hang") && $0.contains("lingers") }
                // Shutdown while both run: run() returns once they have ended.
                group.cancelAll()
            }
            let stopped = ContinuousClock.now - started
            // The hung hook ran into its timeout: the shutdown did not end it sooner, or later.
            #expect(dispatcher.statistics.runCount("10-hook", .timeout) == 1)
            #expect(stopped >= timeout, "shutdown returned after \(stopped), before the hung hook's timeout")
            #expect(stopped < timeout + .seconds(4), "shutdown took \(stopped)")
            // The other hook succeeded, and what it left ran to its end within the grace.
            #expect(dispatcher.statistics.runCount("10-hook", .success) == 1)
            #expect(dir.read("leftover") == "done\n", "what the hook left was killed before its grace")
            #expect(log.all.allSatisfy { !$0.message.contains("killed what it left running") })
        }
    }

    @Test("a hook waiting for a slot when shutdown begins does not start, and the running one ends as it would")
    func shutdownStartsNoWaitingHook() async throws {
        try await TemporaryDirectory.with { dir in
            try dir.hook(
                "10-hook",
                """
                echo "$NETPATH_INTERFACE" >> \(dir.path("seen"))
                case "$NETPATH_INTERFACE" in
                hold) while [ ! -e \(dir.path(".release")) ]; do sleep 0.05; done ;;
                esac
                exit 0
                """
            )
            let log = LogStore()
            // One slot, held by "hold" until the test releases it.
            let dispatcher = Self.makeDispatcher(
                dir,
                log: log,
                options: .init(maxRunningHooks: 1, slowAfter: .seconds(60))
            )
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask { await dispatcher.run() }
                dispatcher.dispatch(Events.interface(.up, "hold", index: 10), to: [.all(timeout: .seconds(10))])
                _ = try await dir.await("seen") { $0.contains("hold") }
                dispatcher.dispatch(Events.interface(.up, "waiting", index: 11), to: [.all(timeout: .seconds(10))])
                try await waitUntil("the second interface's hook waits for the slot") {
                    log.waitsForASlot("10-hook", subject: "interface:11")
                }
                group.cancelAll()
                // Only now does "hold" end and give its slot to the waiting run.
                _ = try dir.write(".release", "", mode: 0o644)
            }
            // run() returned once the workers had: the waiting run would have started by now.
            #expect(dir.read("seen") == "hold\n")
            #expect(dispatcher.statistics.runCount("10-hook", .success) == 1)
            #expect(
                log.all.contains { $0.message.contains("hook 10-hook and the rest of up of interface:11 not started") }
            )
        }
    }
}

extension LogStore {
    /// Whether `hook`'s run (for `subject`, when given) logged that it waits for a slot: what
    /// `--log-level debug` shows when `max_running_hooks` hold back a hook.
    fileprivate func waitsForASlot(_ hook: String, subject: String? = nil) -> Bool {
        all.contains { entry in
            entry.level == .debug && entry.message.contains("waits for a slot") && entry.metadata["hook"] == hook
                && (subject == nil || entry.metadata["subject"] == subject)
        }
    }
}
