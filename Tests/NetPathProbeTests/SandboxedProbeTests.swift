// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathCore
import TestSupport
import Testing

@testable import NetPathProbe

/// SandboxedProbe against a fake helper (Tests/Fixtures/probe/fake-helper.py) that speaks the wire
/// format well or badly: every failure of the helper is an `unknown` verdict with its reason,
/// never a crash or a hang, and a helper that failed is replaced.
@Suite(.serialSuite)
struct SandboxedProbeTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/probe/fake-helper.py").path

    /// A helper executable that runs the fake with `behaviour`, and where it logs requests.
    static func fake(_ behaviour: String, in directory: URL) throws -> (path: String, log: URL) {
        let state = directory.appendingPathComponent("state").path
        let script = directory.appendingPathComponent("helper-\(behaviour)")
        try "#!/bin/sh\nexec /usr/bin/python3 '\(fixture)' '\(behaviour)' '\(state)' \"$@\"\n".write(
            to: script,
            atomically: true,
            encoding: .utf8
        )
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        return (script.path, URL(fileURLWithPath: state + ".log"))
    }

    static func request(_ interface: String = "eth0", timeout: Duration = .seconds(2)) -> ProbeRequest {
        ProbeRequest(
            interface: interface,
            index: 2,
            method: .http(uri: "http://192.0.2.1/", response: ""),
            timeout: timeout
        )
    }

    static func withScratch<T>(_ body: (URL) async throws -> T) async throws -> T {
        let directory = try ScratchDirectory.make("fake-helper")
        defer { try? FileManager.default.removeItem(at: directory) }
        return try await body(directory)
    }

    @Test("a well-behaved helper's answer becomes the result, with its round trip and loss")
    func goodAnswer() async throws {
        try await Self.withScratch { directory in
            let probe = SandboxedProbe(helperPath: try Self.fake("good", in: directory).path)
            let result = await probe.probe(Self.request())
            #expect(
                result
                    == ProbeResult(
                        interface: "eth0",
                        connectivity: .full,
                        roundTrip: .microseconds(1500),
                        loss: 0,
                        evidence: "request 1"
                    )
            )
            await probe.stop()
        }
    }

    @Test(
        "a helper that answers badly gives unknown with the reason, and is killed",
        arguments: [
            ("garbage", "malformed"), ("control", "malformed"), ("wrong-id", "was not asked for"),
            ("overlong", "longer than 4096"), ("no-hello", "before it said hello"), ("fatal", "seccomp_load"),
            ("wrong-mode", "makes icmp probes"), ("exit", "exited (exit status 3)"),
        ]
    )
    func badHelpers(behaviour: String, reason: String) async throws {
        try await Self.withScratch { directory in
            let probe = SandboxedProbe(helperPath: try Self.fake(behaviour, in: directory).path)
            let started = ContinuousClock.now
            let result = await probe.probe(Self.request())
            #expect(result.connectivity == .unknown)
            #expect(result.evidence.contains(reason), "\(result.evidence)")
            #expect(!result.evidence.unicodeScalars.contains { $0.properties.generalCategory == .control })
            #expect(ContinuousClock.now - started < .seconds(4), "within the timeout and its grace")
            let status = try #require(await probe.status().first)
            #expect(status.processID == nil && status.lastFailure?.contains(reason) == true)
            await probe.stop()
        }
    }

    @Test("a portal URL that is not UTF-8 and holds control characters arrives escaped")
    func hostilePortalURL() async throws {
        try await Self.withScratch { directory in
            let probe = SandboxedProbe(helperPath: try Self.fake("bad-url", in: directory).path)
            let result = await probe.probe(Self.request())
            #expect(result.connectivity == .portal)
            #expect(result.portalURL == "http://portal/\\xff\\x1b[2J")
            await probe.stop()
        }
    }

    @Test("a helper that never answers gives unknown after the timeout and its grace, and is replaced")
    func silentHelper() async throws {
        try await Self.withScratch { directory in
            let probe = SandboxedProbe(
                helperPath: try Self.fake("silent", in: directory).path,
                grace: .milliseconds(200)
            )
            let started = ContinuousClock.now
            let result = await probe.probe(Self.request(timeout: .milliseconds(300)))
            let elapsed = ContinuousClock.now - started
            #expect(
                result.connectivity == .unknown && result.evidence.contains("did not answer within 500 ms"),
                "\(result.evidence)"
            )
            #expect(elapsed >= .milliseconds(500) && elapsed < .seconds(3), "\(elapsed)")
            let status = try #require(await probe.status().first)
            #expect(status.starts == 1 && status.processID == nil)
        }
    }

    @Test("the default grace is the 2 s docs/probe-helper.md names, so the default timeout's message says 7 s")
    func defaultGrace() async {
        #expect(await SandboxedProbe().grace == .seconds(2))
    }

    @Test("a helper that dies is restarted, and the next probe gets a verdict")
    func restartAfterCrash() async throws {
        try await Self.withScratch { directory in
            let probe = SandboxedProbe(helperPath: try Self.fake("crash-first", in: directory).path)
            let first = await probe.probe(Self.request())
            #expect(
                first.connectivity == .unknown && first.evidence.contains("exited (exit status 1)"),
                "\(first.evidence)"
            )
            let second = await probe.probe(Self.request())
            #expect(second.connectivity == .full, "\(second.evidence)")
            #expect(await probe.status().first?.starts == 2)
            await probe.stop()
        }
    }

    @Test("a second request for an interface being probed joins the probe: one request reaches the helper")
    func joinsInFlight() async throws {
        try await Self.withScratch { directory in
            let fake = try Self.fake("slow", in: directory)
            let probe = SandboxedProbe(helperPath: fake.path)
            async let a = probe.probe(Self.request("wlan0"))
            async let b = probe.probe(Self.request("wlan0"))
            async let c = probe.probe(Self.request("eth1"))
            let (ra, rb, rc) = await (a, b, c)
            #expect(ra == rb && ra.connectivity == .full)
            #expect(rc.connectivity == .full && rc.interface == "eth1")
            let requests = try String(contentsOf: fake.log, encoding: .utf8).split(separator: "\n")
            #expect(requests.count == 2, "\(requests)")
            await probe.stop()
        }
    }

    @Test("a helper path that is missing or writable by others is refused with the reason")
    func refusesUntrustedHelper() async throws {
        try await Self.withScratch { directory in
            let missing = SandboxedProbe(helperPath: directory.appendingPathComponent("nothing").path)
            let result = await missing.probe(Self.request())
            #expect(result.connectivity == .unknown && result.evidence.contains("No such file"), "\(result.evidence)")
            let fake = try Self.fake("good", in: directory)
            try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: fake.path)
            let open = SandboxedProbe(helperPath: fake.path)
            let refused = await open.probe(Self.request())
            #expect(
                refused.connectivity == .unknown && refused.evidence.contains("writable by its group or others"),
                "\(refused.evidence)"
            )

            // A sound file in a directory others may write to: they could swap it before the spawn.
            let shared = directory.appendingPathComponent("shared")
            try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: false)
            let inShared = try Self.fake("good", in: shared)
            try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: shared.path)
            let swappable = SandboxedProbe(helperPath: inShared.path)
            let refusedDirectory = await swappable.probe(Self.request())
            #expect(
                refusedDirectory.connectivity == .unknown
                    && refusedDirectory.evidence.contains(
                        "on the way to \(inShared.path), is writable by its group or others"
                    ),
                "\(refusedDirectory.evidence)"
            )
            #expect(HelperLocation.directoryRefusal(inShared.path) != nil)
            // Root's sticky /tmp on the way is no reason to refuse: its entries are checked in turn.
            if getuid() == 0 {
                let underTmp = URL(fileURLWithPath: "/tmp/np-sticky-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: underTmp, withIntermediateDirectories: false)
                defer { try? FileManager.default.removeItem(at: underTmp) }
                chmod(underTmp.path, 0o755)
                let helper = try Self.fake("good", in: underTmp)
                #expect(HelperLocation.directoryRefusal(helper.path) == nil)
            }
        }
    }

    @Test("a request beyond the wire format's limits gives unknown without starting a helper")
    func oversizedRequest() async throws {
        let probe = SandboxedProbe(helperPath: "/nonexistent")
        let result = await probe.probe(
            ProbeRequest(
                interface: "eth0",
                index: 1,
                method: .icmp(hosts: [], count: 1, reliability: 1),
                timeout: .seconds(1)
            )
        )
        #expect(result.connectivity == .unknown && result.evidence.contains("limits"))
        #expect(await probe.status().isEmpty)
    }
}
