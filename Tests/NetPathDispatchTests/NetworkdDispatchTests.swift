// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathConfig
import NetPathCore
import TestSupport
import Testing

@testable import NetPathDispatch

/// networkd-dispatcher scripts run by the dispatcher, as real processes: what they get, which
/// state changes run them, a hung script's timeout, rules naming scripts. Timed: runs serially.
@Suite(.serialSuite)
struct NetworkdDispatchTests {
    /// Runs `body` with a dispatcher that has an empty `hooks_dir` and a networkd-dialect
    /// `[[hook_dir]]` with `paths`.
    static func withDispatcher(
        paths: [String],
        native: String? = nil,
        _ body: (HookDispatcher, LogStore) async throws -> Void
    ) async throws {
        try await DialectDispatcher.with(.networkd, paths: paths, native: native, body)
    }

    /// `dir/<state>.d` with a script `name` that appends `$STATE $IFACE` to `dir/seen`.
    static func recorder(_ dir: TemporaryDirectory, _ states: [String], name: String = "50-record") throws {
        for state in states {
            let sub = state + ".d"
            if !FileManager.default.fileExists(atPath: dir.path(sub)) {
                try FileManager.default.createDirectory(atPath: dir.path(sub), withIntermediateDirectories: false)
                try dir.chmod(sub, 0o755)
            }
            try dir.hook(sub + "/" + name, #"echo "$STATE $IFACE" >> \#(dir.path("seen"))"#)
        }
    }

    /// An interface event whose interface state is `state`.
    static func event(_ name: Event.Name, _ state: Interface) -> Event {
        Event(
            time: Date(),
            name: name,
            scope: .interface,
            interface: state.name,
            interfaceType: state.type,
            interfaceState: state
        )
    }

    static func eth0(carrier: Bool, addresses: [String] = [], gateway: String? = nil) -> Interface {
        Interface(
            index: 7,
            name: "eth0",
            type: .wired,
            kind: "veth",
            carrier: carrier,
            mac: "02:00:00:00:00:07",
            addresses: addresses.map { InterfaceAddress(cidr: $0)! },
            defaultRoutes: gateway.map { [DefaultRoute(via: IPAddress($0)!)] } ?? []
        )
    }

    @Test("a script gets its path as argv and networkd-dispatcher's environment, nothing else")
    func argumentsAndEnvironment() async throws {
        try await TemporaryDirectory.with { dir in
            let out = try ScratchDirectory.make("netpath-nd-out").path
            defer { try? FileManager.default.removeItem(atPath: out) }
            try FileManager.default.createDirectory(atPath: dir.path("routable.d"), withIntermediateDirectories: false)
            try dir.chmod("routable.d", 0o755)
            try dir.hook(
                "routable.d/10-record",
                #"printf '%s|%s\n' "$0" "$#" > \#(out)/argv; env | sort > \#(out)/env"#
            )
            try await Self.withDispatcher(paths: [dir.path]) { dispatcher, _ in
                let up = Self.eth0(
                    carrier: true,
                    addresses: ["192.0.2.10/24", "2001:db8::10/64"],
                    gateway: "192.0.2.1"
                )
                dispatcher.dispatch(Self.event(.up, up), to: [.all(timeout: .seconds(10))])
                await dispatcher.waitUntilIdle()
            }
            let argv = try String(contentsOfFile: out + "/argv", encoding: .utf8)
            #expect(argv == "\(dir.path("routable.d/10-record"))|0\n")
            let environment = try String(contentsOfFile: out + "/env", encoding: .utf8).split(separator: "\n")
                .filter { !$0.hasPrefix("PWD=") && !$0.hasPrefix("SHLVL=") && !$0.hasPrefix("_=") }
            #expect(
                environment == [
                    "ADDR=192.0.2.10", "AdministrativeState=configured", "ESSID=", "IFACE=eth0",
                    "IP6_ADDRS=2001:db8::10", "IP_ADDRS=192.0.2.10", "OperationalState=routable",
                    "PATH=\(HookInvocation.path)", "STATE=routable",
                    """
                    json={"Address": ["192.0.2.10", "2001:db8::10"], "AdministrativeState": "configured", \
                    "Gateway": ["192.0.2.1"], "HW Address": "02:00:00:00:00:07", "InterfaceName": "eth0", \
                    "OperationalState": "routable", "State": "routable (configured)", "Type": "ether"}
                    """,
                ]
            )
        }
    }

    @Test("scripts run when an interface enters their state, administrative first, and not again while it stays")
    func enteringStates() async throws {
        try await TemporaryDirectory.with { dir in
            try Self.recorder(
                dir,
                ["configuring", "configured", "linger", "off", "no-carrier", "carrier", "degraded", "routable"]
            )
            try await Self.withDispatcher(paths: [dir.path]) { dispatcher, _ in
                let all = [HookTarget.all(timeout: .seconds(10))]
                let steps: [(Event.Name, Interface)] = [
                    (.added, Self.eth0(carrier: false)),
                    (.carrierUp, Self.eth0(carrier: true)),
                    (.addressAdded, Self.eth0(carrier: true, addresses: ["fe80::7/64"])),
                    (.addressAdded, Self.eth0(carrier: true, addresses: ["192.0.2.10/24", "fe80::7/64"])),
                    // Another address: still routable, nothing runs.
                    (
                        .addressAdded,
                        Self.eth0(carrier: true, addresses: ["192.0.2.10/24", "198.51.100.10/24", "fe80::7/64"])
                    ),
                    (.up, Self.eth0(carrier: true, addresses: ["192.0.2.10/24"], gateway: "192.0.2.1")),
                    (.removed, Self.eth0(carrier: true, addresses: ["192.0.2.10/24"], gateway: "192.0.2.1")),
                ]
                for (name, state) in steps {
                    dispatcher.dispatch(Self.event(name, state), to: all)
                    // One at a time: a queued event a later one supersedes would be dropped.
                    await dispatcher.waitUntilIdle()
                }
            }
            #expect(
                dir.read("seen")
                    == """
                    configuring eth0
                    no-carrier eth0
                    carrier eth0
                    degraded eth0
                    routable eth0
                    configured eth0
                    linger eth0
                    off eth0

                    """
            )
        }
    }

    @Test("assumed startup state: the first change runs only the states it enters")
    func assumedStartupState() async throws {
        try await TemporaryDirectory.with { dir in
            try Self.recorder(dir, ["configuring", "no-carrier", "carrier"])
            try await Self.withDispatcher(paths: [dir.path]) { dispatcher, _ in
                dispatcher.assumeNetworkdState([Self.eth0(carrier: false)])
                dispatcher.dispatch(Self.event(.carrierUp, Self.eth0(carrier: true)), to: [.all(timeout: .seconds(10))])
                await dispatcher.waitUntilIdle()
            }
            #expect(dir.read("seen") == "carrier eth0\n")
        }
    }

    @Test("a hung script is killed at its timeout and does not delay another interface's scripts")
    func hungScriptIsolated() async throws {
        try await TemporaryDirectory.with { dir in
            try FileManager.default.createDirectory(atPath: dir.path("routable.d"), withIntermediateDirectories: false)
            try dir.chmod("routable.d", 0o755)
            try dir.hook(
                "routable.d/10-hook",
                """
                echo "$IFACE $STATE" >> \(dir.path("seen"))
                [ "$IFACE" = hang ] && exec sleep 1000
                exit 0
                """
            )
            try await Self.withDispatcher(paths: [dir.path]) { dispatcher, _ in
                let timeout = Duration.seconds(6)
                func routable(_ name: String, _ index: Int32) -> Event {
                    var state = Self.eth0(carrier: true, addresses: ["192.0.2.10/24"])
                    state.name = name
                    state.index = index
                    return Self.event(.addressAdded, state)
                }
                let started = ContinuousClock.now
                dispatcher.dispatch(routable("hang", 10), to: [.all(timeout: timeout)])
                _ = try await dir.await("seen") { $0.contains("hang routable") }
                dispatcher.dispatch(routable("fast", 11), to: [.all(timeout: timeout)])
                _ = try await dir.await("seen", timeout: .seconds(5)) { $0.contains("fast routable") }
                #expect(ContinuousClock.now - started < timeout, "the other interface waited for the hung script")
                await dispatcher.waitUntilIdle()
                #expect(dispatcher.statistics.runCount("10-hook", .timeout) == 1)
                #expect(ContinuousClock.now - started < timeout + .seconds(4))
            }
        }
    }

    @Test("a rule's run names networkd scripts by file name; only names found nowhere are logged as missing")
    func rulesNameScripts() async throws {
        try await TemporaryDirectory.with { dir in
            try Self.recorder(dir, ["routable"], name: "20-chrony")
            try Self.recorder(dir, ["routable"], name: "30-other")
            try await Self.withDispatcher(paths: [dir.path]) { dispatcher, log in
                let target = HookTarget(rule: "r", hooks: .named(["20-chrony", "99-gone"]), timeout: .seconds(10))
                let state = Self.eth0(carrier: true, addresses: ["192.0.2.10/24"])
                dispatcher.dispatch(Self.event(.addressAdded, state), to: [target])
                await dispatcher.waitUntilIdle()
                #expect(log.with("hook", "99-gone").count == 1)
                #expect(log.with("hook", "20-chrony").allSatisfy { !$0.message.contains("not in") })
                #expect(dispatcher.statistics.runCount("20-chrony", .success) == 1)
                #expect(dispatcher.statistics.runCount("30-other", .success) == 0)
            }
        }
    }
}
