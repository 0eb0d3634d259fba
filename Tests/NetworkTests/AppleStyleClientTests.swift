// SPDX-License-Identifier: Apache-2.0

import Foundation
import TestSupport
import Testing

/// Code written for Apple's Network framework, in a package of its own that depends on this one
/// by path (Tests/Fixtures/AppleStyleClient), builds unchanged in Swift 5 and Swift 6 mode and
/// reports a veth going down and up in a namespace, in every delivery style the tutorials use.
@Suite(.enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct AppleStyleClientTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let package = root.appendingPathComponent("Tests/Fixtures/AppleStyleClient").path
    // Under .build, so that it is ignored and kept between runs: only the first build is slow
    // (about 40 s here: it compiles NetPath's modules again, for the client's own build).
    static let scratch = root.appendingPathComponent(".build/fixtures/AppleStyleClient").path

    /// The client package's own targets: its Sources folders.
    static var clients: [String] {
        get throws { try FileManager.default.contentsOfDirectory(atPath: package + "/Sources").sorted() }
    }

    /// Builds the client package; returns its binary directory.
    static func build() async throws -> URL {
        let arguments = ["swift", "build", "--package-path", package, "--scratch-path", scratch]
        // The clients' object files go first, so that they are always compiled anew (a few small
        // files): the incremental build does not always recompile them when only a module that
        // NetPath re-exports changed, and a client compiled against an older layout of a
        // public struct (NetlinkEngine.Options, when it gained a field) crashed in its init.
        // (Only the objects: the rest of the directory is the build plan's, written once.)
        let bin = try await Command.checkOffPool(arguments + ["--show-bin-path"]).trimmingCharacters(
            in: .whitespacesAndNewlines
        )
        let manager = FileManager.default
        for client in try clients {
            let objects = "\(bin)/\(client).build"
            for file in (try? manager.contentsOfDirectory(atPath: objects)) ?? [] where file.hasSuffix(".o") {
                try manager.removeItem(atPath: "\(objects)/\(file)")
            }
        }
        let result = try await Command.runOffPool(arguments)
        guard result.status == 0 else {
            let output = (result.stdout + result.stderr).split(separator: "\n").filter { $0.contains("error") }
            throw TestFailure(
                "the Apple-style client does not build (`\(arguments.joined(separator: " "))`):\n"
                    + output.prefix(30).joined(separator: "\n")
            )
        }
        return URL(fileURLWithPath: bin)
    }

    /// Waits until every line of `expected` has been printed, in any order (the styles run on
    /// different queues); lines before them are skipped.
    static func expect(_ expected: [String], from output: Recorder<String>, _ what: String) async throws {
        var missing = expected
        while !missing.isEmpty {
            let line = try await output.next("\(what): \(missing)")
            missing.removeAll { line == $0 || ($0.hasSuffix("…") && line.hasPrefix($0.dropLast())) }
        }
    }

    @Test("the client's view model, counter, async loop and protocol-wrapped monitor see a veth go down and up")
    func clientFollowsALink() async throws {
        let bin = try await Self.build()
        try await NetworkNamespace.with(["apple", "peer"]) { namespaces in
            let (namespace, peer) = (namespaces[0], namespaces[1])
            try namespace.addVeth("up0", peer: "up0p", in: peer)
            try namespace.ip("addr", "add", "192.0.2.10/24", "dev", "up0")
            try namespace.ip("link", "set", "up0", "up")
            try peer.ip("link", "set", "up0p", "up")
            try namespace.ip("route", "add", "default", "via", "192.0.2.1", "dev", "up0")
            let index = try namespace.index(of: "up0")

            var clients: [(name: String, process: RunningProcess, output: Recorder<String>)] = []
            defer {
                for client in clients {
                    let ending = client.process.terminate()
                    #expect(ending == .signaled(SIGTERM), "\(client.name) ended with \(ending) before it was stopped")
                }
            }
            for name in try Self.clients {
                let path = bin.appendingPathComponent(name).path
                let process = try RunningProcess(["ip", "netns", "exec", namespace.name, "stdbuf", "-oL", path])
                let output = Recorder<String>()
                await output.record(process.stdoutLines)
                clients.append((name, process, output))
            }

            func satisfied(_ count: Int) -> [String] {
                [
                    "counter \(count) satisfied", "viewmodel connected other", "async satisfied up0",
                    "service satisfied via up0 (index \(index)) expensive=false wired=false",
                    "description satisfied (Path is satisfied), interface: up0[other], ipv4…",
                ]
            }
            let unsatisfied = [
                "counter 2 unsatisfied", "viewmodel disconnected none", "async unsatisfied ",
                "service unsatisfied expensive=false wired=false", "description unsatisfied (No network route)",
            ]
            // The custom classification makes up0 wired and metered, so the `wired` policy sees it.
            let custom = (
                up: "netpath wired: satisfied via up0 (wired, metered); IPv4…",
                down: "netpath wired: unsatisfied (no-interface); from the kernel"
            )

            for client in clients.prefix(2) { try await Self.expect(satisfied(1), from: client.output, client.name) }
            try await Self.expect([custom.up], from: clients[2].output, "custom classification")

            try peer.ip("link", "set", "up0p", "down")
            for client in clients.prefix(2) { try await Self.expect(unsatisfied, from: client.output, client.name) }
            try await Self.expect([custom.down], from: clients[2].output, "custom classification, carrier lost")

            try peer.ip("link", "set", "up0p", "up")
            for client in clients.prefix(2) { try await Self.expect(satisfied(3), from: client.output, client.name) }
            try await Self.expect([custom.up], from: clients[2].output, "custom classification, carrier back")
        }
    }
}
