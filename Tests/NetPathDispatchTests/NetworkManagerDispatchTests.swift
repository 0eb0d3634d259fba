// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathConfig
import NetPathCore
import TestSupport
import Testing

@testable import NetPathDispatch

/// NetworkManager-dispatcher scripts run by the dispatcher, as real processes: what they get,
/// no-wait.d running alongside, a hung script's timeout, rules naming scripts. Timed: runs
/// serially.
@Suite(.serialSuite)
struct NetworkManagerDispatchTests {
    /// Runs `body` with a dispatcher that has an empty `hooks_dir` and `nm` as a
    /// networkmanager-dialect `[[hook_dir]]` with `paths`.
    static func withDispatcher(
        paths: [String],
        native: String? = nil,
        _ body: (HookDispatcher, LogStore) async throws -> Void
    ) async throws {
        try await DialectDispatcher.with(.networkmanager, paths: paths, native: native, body)
    }

    @Test("a script gets SCRIPT IFACE ACTION and NetworkManager's environment, nothing else; $0 is its real path")
    func argumentsAndEnvironment() async throws {
        try await TemporaryDirectory.with { dir in
            let out = try ScratchDirectory.make("netpath-nm-out").path
            defer { try? FileManager.default.removeItem(atPath: out) }
            try dir.hook("10-record", #"printf '%s|%s|%s\n' "$0" "$1" "$2" > \#(out)/argv; env | sort > \#(out)/env"#)
            try await Self.withDispatcher(paths: [dir.path]) { dispatcher, _ in
                dispatcher.dispatch(Events.interface(.up, "eth0"), to: [.all(timeout: .seconds(10))])
                await dispatcher.waitUntilIdle()
            }
            let argv = try String(contentsOfFile: out + "/argv", encoding: .utf8)
            #expect(argv == "\(dir.path("10-record"))|eth0|up\n")
            let environment = try String(contentsOfFile: out + "/env", encoding: .utf8).split(separator: "\n")
                .filter { !$0.hasPrefix("PWD=") && !$0.hasPrefix("SHLVL=") && !$0.hasPrefix("_=") }
            let uuid = NetworkManagerInvocation.connectionUUID("eth0")
            #expect(
                environment == [
                    "CONNECTION_EXTERNAL=1", "CONNECTION_ID=eth0", "CONNECTION_UUID=\(uuid)", "DEVICE_IFACE=eth0",
                    "DEVICE_IP_IFACE=eth0", "IP4_ADDRESS_0=192.0.2.10/24 192.0.2.1", "IP4_GATEWAY=192.0.2.1",
                    "IP4_NUM_ADDRESSES=1", "IP4_NUM_ROUTES=0", "IP6_ADDRESS_0=2001:db8::10/64 2001:db8::1",
                    "IP6_GATEWAY=2001:db8::1", "IP6_NUM_ADDRESSES=1", "NM_DISPATCHER_ACTION=up",
                    "PATH=\(HookInvocation.path)",
                ]
            )
        }
    }

    @Test("scripts linked into no-wait.d run alongside each other; the others still run one after another")
    func noWaitRunsInParallel() async throws {
        try await TemporaryDirectory.with { dir in
            let out = dir.path("seen")
            try FileManager.default.createDirectory(atPath: dir.path("no-wait.d"), withIntermediateDirectories: false)
            try dir.chmod("no-wait.d", 0o755)
            // Each waits (bounded) for the other's mark: run one after another, the first times out.
            for (me, other) in [("a", "b"), ("b", "a")] {
                try dir.hook(
                    "no-wait.d/10-\(me)",
                    """
                    touch \(dir.path("mark-\(me)"))
                    i=0; while [ ! -e \(dir.path("mark-\(other)")) ]; do i=$((i+1)); [ $i -gt 500 ] && exit 3; sleep 0.01; done
                    echo "\(me) saw \(other)" >> \(out)
                    """
                )
                try FileManager.default.createSymbolicLink(
                    atPath: dir.path("10-\(me)"),
                    withDestinationPath: "no-wait.d/10-\(me)"
                )
            }
            try dir.hook("20-plain", "echo plain >> \(out)")
            try await Self.withDispatcher(paths: [dir.path]) { dispatcher, _ in
                dispatcher.dispatch(Events.interface(.up, "eth0"), to: [.all(timeout: .seconds(20))])
                await dispatcher.waitUntilIdle()
                #expect(dispatcher.statistics.runCount("10-a", .success) == 1)
                #expect(dispatcher.statistics.runCount("10-b", .success) == 1)
                #expect(dispatcher.statistics.runCount("20-plain", .success) == 1)
            }
            let lines = Set((dir.read("seen") ?? "").split(separator: "\n"))
            #expect(lines == ["a saw b", "b saw a", "plain"])
        }
    }

    @Test("a hung script is killed at its timeout and does not delay another interface's scripts")
    func hungScriptIsolated() async throws {
        try await TemporaryDirectory.with { dir in
            try dir.hook(
                "10-hook",
                """
                echo "$DEVICE_IFACE $NM_DISPATCHER_ACTION" >> \(dir.path("seen"))
                [ "$1" = hang ] && exec sleep 1000
                exit 0
                """
            )
            try await Self.withDispatcher(paths: [dir.path]) { dispatcher, _ in
                let timeout = Duration.seconds(6)
                let started = ContinuousClock.now
                dispatcher.dispatch(Events.interface(.up, "hang", index: 10), to: [.all(timeout: timeout)])
                _ = try await dir.await("seen") { $0.contains("hang up") }
                dispatcher.dispatch(Events.interface(.up, "fast", index: 11), to: [.all(timeout: timeout)])
                dispatcher.dispatch(Events.interface(.down, "fast", index: 11), to: [.all(timeout: timeout)])
                _ = try await dir.await("seen", timeout: .seconds(5)) { $0.contains("fast down") }
                #expect(ContinuousClock.now - started < timeout, "the other interface waited for the hung script")
                await dispatcher.waitUntilIdle()
                #expect(dispatcher.statistics.runCount("10-hook", .timeout) == 1)
                #expect(ContinuousClock.now - started < timeout + .seconds(4))
            }
        }
    }

    @Test("a rule's run names scripts of any directory; only names found nowhere are logged as missing")
    func rulesNameScripts() async throws {
        try await TemporaryDirectory.with { dir in
            try await TemporaryDirectory.with { native in
                try dir.hook("20-chrony", "echo chrony >> \(dir.path("seen"))")
                try dir.hook("30-other", "echo other >> \(dir.path("seen"))")
                try native.hook("10-native", "echo native >> \(dir.path("seen"))")
                try await Self.withDispatcher(paths: [dir.path], native: native.path) { dispatcher, log in
                    let target = HookTarget(
                        rule: "r",
                        hooks: .named(["20-chrony", "10-native", "99-gone"]),
                        timeout: .seconds(10)
                    )
                    dispatcher.dispatch(Events.interface(.up, "eth0"), to: [target])
                    await dispatcher.waitUntilIdle()
                    #expect(log.with("hook", "99-gone").count == 1)
                    #expect(log.with("hook", "20-chrony").allSatisfy { !$0.message.contains("not in") })
                }
                #expect(dir.read("seen") == "native\nchrony\n")
            }
        }
    }

    @Test("carrier and path events run no NetworkManager script")
    func eventsWithoutActionRunNothing() async throws {
        try await TemporaryDirectory.with { dir in
            try dir.hook("10-hook", "echo $2 >> \(dir.path("seen"))")
            try await Self.withDispatcher(paths: [dir.path]) { dispatcher, _ in
                dispatcher.dispatch(Events.interface(.carrierDown, "eth0"), to: [.all(timeout: .seconds(10))])
                dispatcher.dispatch(Events.path(.satisfied, primary: "eth0"), to: [.all(timeout: .seconds(10))])
                dispatcher.dispatch(Events.interface(.down, "eth0"), to: [.all(timeout: .seconds(10))])
                await dispatcher.waitUntilIdle()
            }
            #expect(dir.read("seen") == "down\n")
        }
    }
}
