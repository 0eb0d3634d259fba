// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathCore
import NetPathDispatch
import TestSupport
import Testing

/// The hook contract as a real process receives it, compared field by field.
struct HookInvocationTests {
    /// A compiled hook that records its argv, environment, stdin, working directory, process
    /// group and open descriptors into `directory`: a script cannot see its own argv[0].
    static let recorderSource = #"""
        #include <dirent.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <string.h>
        #include <unistd.h>
        extern char **environ;
        static FILE *out(const char *name) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", OUT, name);
            return fopen(path, "w");
        }
        int main(int argc, char **argv) {
            FILE *f = out("argv");
            for (int i = 0; i < argc; i++) fprintf(f, "%s%c", argv[i], 0);
            fclose(f);
            f = out("env");
            for (char **e = environ; *e; e++) fprintf(f, "%s%c", *e, 0);
            fclose(f);
            f = out("stdin");
            char buffer[4096];
            size_t n;
            while ((n = fread(buffer, 1, sizeof buffer, stdin)) > 0) fwrite(buffer, 1, n, f);
            fclose(f);
            f = out("cwd");
            fprintf(f, "%s", getcwd(buffer, sizeof buffer));
            fclose(f);
            f = out("ids");
            fprintf(f, "%d %d", (int)getpid(), (int)getpgid(0));
            fclose(f);
            DIR *d = opendir("/proc/self/fd");
            char fds[4096] = "";
            struct dirent *entry;
            while ((entry = readdir(d))) {
                if (entry->d_name[0] == '.' || atoi(entry->d_name) == dirfd(d)) continue;
                strcat(fds, entry->d_name);
                strcat(fds, " ");
            }
            closedir(d);
            f = out("fds");
            fprintf(f, "%s", fds);
            fclose(f);
            FILE *status = fopen("/proc/self/status", "r");
            f = out("signals");
            char line[256];
            while (fgets(line, sizeof line, status))
                if (!strncmp(line, "SigIgn:", 7) || !strncmp(line, "SigBlk:", 7)) fputs(line, f);
            fclose(status);
            fclose(f);
            return 0;
        }
        """#

    static func compileRecorder(into dir: TemporaryDirectory, name: String) throws {
        let source = try dir.write("recorder.c", recorderSource, mode: 0o644)
        try Command.check(["cc", "-O1", "-DOUT=\"\(dir.path)\"", "-o", dir.path(name), source])
        try dir.chmod(name, 0o755)
    }

    static func run(_ event: Event, rule: String?, in dir: TemporaryDirectory) async throws -> HookResult {
        let log = LogStore()
        let hooks = HookDirectory(path: dir.path, logger: log.logger)
        let name = hooks.hookNames().first { !$0.hasSuffix(".c") }!
        let invocation = HookInvocation(hook: name, event: event, rule: rule, timeout: .seconds(10))
        return await HookRunner(logger: log.logger).run(invocation, executing: try hooks.open(name))
    }

    static func fields(_ text: String?) -> [String] {
        (text ?? "").split(separator: "\0", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    @Test(
        "an interface event reaches an executable as argv, exactly the NETPATH_ environment, JSON stdin, cwd /, own group, no extra descriptors, default signals"
    )
    func interfaceEventContract() async throws {
        setenv("NETPATH_TEST_MARKER", "must-not-leak", 1)
        defer { unsetenv("NETPATH_TEST_MARKER") }
        // The agent ignores SIGPIPE (the runner does it) and an embedder may ignore or block
        // more: a hook starts with none of it.
        let previousUSR1 = signal(SIGUSR1, SIG_IGN)
        defer { signal(SIGUSR1, previousUSR1) }
        try await TemporaryDirectory.with { dir in
            let hooksDir = TemporaryDirectory(path: dir.path("hooks.d"))
            try FileManager.default.createDirectory(atPath: hooksDir.path, withIntermediateDirectories: false)
            try hooksDir.chmod(".", 0o755)
            try Self.compileRecorder(into: dir, name: "hooks.d/10-record")
            let event = Events.interface(.up, "eth0", startup: true)
            let result = try await Self.run(event, rule: "wired-up", in: hooksDir)
            #expect(result.termination == .exited(0))

            #expect(Self.fields(dir.read("argv")) == ["10-record", "eth0", "up"])
            let environment = Dictionary(
                uniqueKeysWithValues: Self.fields(dir.read("env")).map { line in
                    let parts = line.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                    return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
                }
            )
            #expect(Set(environment.keys) == Set(HookInvocation.environmentNames))
            #expect(environment["NETPATH_TEST_MARKER"] == nil)
            let expected: [String: String] = [
                "NETPATH_EVENT": "up",
                "NETPATH_SCOPE": "interface",
                "NETPATH_POLICY": "",
                "NETPATH_RULE": "wired-up",
                "NETPATH_INTERFACE": "eth0",
                "NETPATH_INTERFACE_TYPE": "wired",
                "NETPATH_INTERFACE_KIND": "veth",
                "NETPATH_PREVIOUS_INTERFACE": "",
                "NETPATH_STATUS": "up",
                "NETPATH_METERED": "1",
                "NETPATH_CONSTRAINED": "0",
                "NETPATH_IPV4": "1",
                "NETPATH_IPV6": "1",
                "NETPATH_DNS": "",
                "NETPATH_ADDRESSES": "192.0.2.10/24 2001:db8::10/64",
                "NETPATH_GATEWAYS": "192.0.2.1 2001:db8::1",
                "NETPATH_STARTUP": "1",
                "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                "LANG": "C.UTF-8",
            ]
            for (key, value) in expected { #expect(environment[key] == value, "\(key)") }

            let stdin = try #require(dir.read("stdin"))
            #expect(stdin == (try JSONCoding.line(event)) + "\n")
            let decoded = try JSONDecoder().decode(Event.self, from: Data(stdin.utf8))
            #expect(decoded.name == .up)
            #expect(decoded.interfaceState == event.interfaceState)
            #expect(decoded.startup)

            #expect(dir.read("cwd") == "/")
            let ids = (dir.read("ids") ?? "").split(separator: " ")
            #expect(ids.count == 2 && ids[0] == ids[1], "the hook leads its own process group")
            #expect(dir.read("fds") == "0 1 2 ")
            #expect(dir.read("signals") == "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n")
        }
    }

    @Test("a path event reaches a #! script as $1 $2, the path's environment and the JSON on stdin")
    func pathEventContractForScripts() async throws {
        setenv("NETPATH_TEST_MARKER", "must-not-leak", 1)
        defer { unsetenv("NETPATH_TEST_MARKER") }
        try await TemporaryDirectory.with { dir in
            let hooksDir = TemporaryDirectory(path: dir.path("hooks.d"))
            try FileManager.default.createDirectory(atPath: hooksDir.path, withIntermediateDirectories: false)
            try hooksDir.chmod(".", 0o755)
            try hooksDir.hook(
                "50-script",
                """
                printf '%s\\n' "$1" "$2" > \(dir.path("args"))
                env > \(dir.path("env"))
                cat > \(dir.path("stdin"))
                """
            )
            let event = Events.path(.changed, policy: "office", primary: "wlan0", previous: "eth0")
            let result = try await Self.run(event, rule: nil, in: hooksDir)
            #expect(result.termination == .exited(0))
            #expect(dir.read("args") == "wlan0\nchanged\n")
            let lines = (dir.read("env") ?? "").split(separator: "\n").map(String.init)
            let environment = Dictionary(
                uniqueKeysWithValues: lines.compactMap { line -> (String, String)? in
                    let parts = line.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                    return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
                }
            )
            // dash exports PWD itself; everything else is ours.
            #expect(Set(environment.keys).subtracting(["PWD"]) == Set(HookInvocation.environmentNames))
            #expect(environment["NETPATH_TEST_MARKER"] == nil)
            #expect(environment["NETPATH_SCOPE"] == "path")
            #expect(environment["NETPATH_POLICY"] == "office")
            #expect(environment["NETPATH_RULE"] == "")
            #expect(environment["NETPATH_INTERFACE"] == "wlan0")
            #expect(environment["NETPATH_INTERFACE_TYPE"] == "wifi")
            #expect(environment["NETPATH_PREVIOUS_INTERFACE"] == "eth0")
            #expect(environment["NETPATH_STATUS"] == "satisfied")
            #expect(environment["NETPATH_METERED"] == "0")
            #expect(environment["NETPATH_IPV4"] == "1")
            #expect(environment["NETPATH_IPV6"] == "0")
            #expect(environment["NETPATH_DNS"] == "1")
            #expect(environment["NETPATH_GATEWAYS"] == "198.51.100.1")
            #expect(environment["NETPATH_STARTUP"] == "0")
            #expect(dir.read("stdin") == (try JSONCoding.line(event)) + "\n")
        }
    }

    @Test("an unsatisfied path has an empty interface argument")
    func unsatisfiedPathHasEmptyInterface() throws {
        let invocation = HookInvocation(
            hook: "10-x",
            event: Events.path(.unsatisfied, primary: nil),
            rule: nil,
            timeout: .seconds(1)
        )
        #expect(invocation.arguments == ["10-x", "", "unsatisfied"])
        #expect(invocation.environment["NETPATH_STATUS"] == "unsatisfied")
        #expect(invocation.workingDirectory == "/")
    }
}

/// Interface names reach hooks as the kernel's bytes.
struct HookInvocationBytesTests {
    @Test("argv[1] and the interface variables hold the kernel's bytes; the JSON holds the escaped form")
    func kernelBytesOfAName() throws {
        let name = InterfaceName.string(fromKernel: [0x61, 0xff, 0x62])
        var event = Events.interface(.up, name)
        event.previousInterface = InterfaceName.string(fromKernel: [0x6f, 0x01])
        let invocation = HookInvocation(hook: "10-hook", event: event, rule: nil, timeout: .seconds(1))
        #expect(invocation.argumentBytes == [Array("10-hook".utf8), [0x61, 0xff, 0x62], Array("up".utf8)])
        let environment = Dictionary(
            uniqueKeysWithValues: invocation.environmentBytes.map { entry in
                let equals = entry.firstIndex(of: UInt8(ascii: "="))!
                return (String(decoding: entry[..<equals], as: UTF8.self), Array(entry[(equals + 1)...]))
            }
        )
        #expect(environment["NETPATH_INTERFACE"] == [0x61, 0xff, 0x62])
        #expect(environment["NETPATH_PREVIOUS_INTERFACE"] == [0x6f, 0x01])
        #expect(environment["NETPATH_EVENT"] == Array("up".utf8))
        #expect(Set(environment.keys) == Set(HookInvocation.environmentNames))
        let json = String(decoding: try invocation.standardInput.bytes(), as: UTF8.self)
        #expect(json.contains(#""interface":"a\\xffb""#), "\(json)")
    }

    @Test(
        "hooks of one event share its payload: each gets the variables in environmentNames order with its own rule, as an invocation built from the variables would"
    )
    func sharedPayloadMatchesTheVariables() throws {
        var interfaceEvent = Events.interface(.carrierDown, InterfaceName.string(fromKernel: [0x65, 0xfe]))
        interfaceEvent.previousInterface = "old0"
        let events = [
            interfaceEvent,
            Events.path(.satisfied, primary: "eth0", previous: "wlan0"),
            Events.path(.unsatisfied, primary: nil),
        ]
        for event in events {
            let payload = HookInvocation.EventPayload(event)
            for rule in [nil, "wired", "r\u{e9}gle"] as [String?] {
                let shared = HookInvocation(hook: "10-x", payload: payload, rule: rule, timeout: .seconds(1))
                let variables = HookInvocation.environment(for: event, rule: rule)
                let built = HookInvocation(
                    hook: "10-x",
                    arguments: shared.arguments,
                    environment: variables,
                    variableOrder: HookInvocation.environmentNames,
                    interfaceVariables: ["NETPATH_INTERFACE", "NETPATH_PREVIOUS_INTERFACE"],
                    timeout: .seconds(1)
                )
                #expect(shared.environment == variables)
                #expect(shared.environment["NETPATH_RULE"] == rule ?? "")
                #expect(shared.environmentBytes == built.environmentBytes, "\(event.name) rule \(rule ?? "-")")
                let names = shared.environmentBytes.map { entry in
                    String(decoding: entry.prefix { $0 != UInt8(ascii: "=") }, as: UTF8.self)
                }
                #expect(names == HookInvocation.environmentNames)
                #expect(shared == HookInvocation(hook: "10-x", event: event, rule: rule, timeout: .seconds(1)))
            }
        }
    }

    @Test("the slots the payload splits and decodes at are those of NETPATH_RULE and the interface names")
    func slotsNameTheirVariables() {
        #expect(HookInvocation.environmentNames[HookInvocation.ruleSlot] == "NETPATH_RULE")
        #expect(HookInvocation.environmentNames[HookInvocation.interfaceSlot] == "NETPATH_INTERFACE")
        #expect(HookInvocation.environmentNames[HookInvocation.previousInterfaceSlot] == "NETPATH_PREVIOUS_INTERFACE")
    }
}
