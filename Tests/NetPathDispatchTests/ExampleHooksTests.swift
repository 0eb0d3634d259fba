// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathCore
import NetPathDispatch
import TestSupport
import Testing

/// The example hooks shipped in config/hooks.d run under the real runner.
@Suite(.serialSuite)
struct ExampleHooksTests {
    static let examples = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("config/hooks.d").path

    @Test("the example hooks accept every kind of event and exit 0 when there is nothing to do")
    func examplesRun() async throws {
        try await TemporaryDirectory.with { dir in
            for name in ["10-log-event", "50-restart-on-primary-change"] {
                let text = try String(contentsOfFile: Self.examples + "/" + name, encoding: .utf8)
                #expect(text.contains("0755"), "\(name) documents its mode")
                try dir.write(name, text, mode: 0o755)
            }
            let log = LogStore()
            let dispatcher = HookDispatcher(
                directory: HookDirectory(path: dir.path, logger: log.logger),
                runner: HookRunner(logger: log.logger),
                logger: log.logger
            )
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask { await dispatcher.run() }
                let target = [HookTarget.all(timeout: .seconds(10))]
                dispatcher.dispatch(Events.interface(.up, "eth0", startup: true), to: target)
                dispatcher.dispatch(Events.path(.satisfied, primary: "wlan0"), to: target)
                // A change that keeps the primary: the restart hook has nothing to do.
                dispatcher.dispatch(
                    Events.path(.changed, policy: "other", primary: "wlan0", previous: "wlan0"),
                    to: target
                )
                await dispatcher.waitUntilIdle()
                group.cancelAll()
            }
            let statistics = dispatcher.statistics
            let logged = log.all.map { "\($0.level): \($0.message)" }.suffix(30).joined(separator: "\n")
            #expect(statistics.runCount("10-log-event", .success) == 3, "\(statistics)\n\(logged)")
            #expect(statistics.runCount("50-restart-on-primary-change", .success) == 3, "\(statistics)\n\(logged)")
        }
    }

    @Test("a rule matcher target maps to a hook target; a rule that runs no hooks maps to none")
    func dispatchTargetAdapter() {
        let target = HookTarget(.init(rule: "r", hooks: .named(["10-a"]), timeout: .seconds(5)))
        #expect(target == HookTarget(rule: "r", hooks: .named(["10-a"]), timeout: .seconds(5)))
        #expect(HookTarget(.init(rule: "r", hooks: .named([]), timeout: .seconds(5))) == nil)
        #expect(HookTarget(.init(rule: nil, hooks: .all, timeout: .seconds(30))) == .all(timeout: .seconds(30)))
    }
}
