// SPDX-License-Identifier: Apache-2.0

import Foundation

/// A network namespace a test creates and always deletes.
///
/// Use ``with(_:_:)``: the namespace is deleted when the body returns or throws. Deleting a
/// namespace destroys its veth ends, which also removes their peers in other namespaces.
public final class NetworkNamespace: Sendable {
    /// Every test namespace's name starts with this, so `make test` can remove the ones a
    /// crashed run left behind (a crash skips every `defer`) without touching anyone else's.
    public static let namePrefix = "nptest-"

    public let name: String

    private init(prefix: String) throws {
        name = "\(Self.namePrefix)\(prefix)-\(UInt32.random(in: 0...UInt32.max))"
        try Command.check(["ip", "netns", "add", name])
        do {
            try Command.check(["ip", "-n", name, "link", "set", "lo", "up"])
        } catch {
            delete()
            throw error
        }
    }

    /// Runs `body` with fresh namespaces, deleting them afterwards whatever happens.
    public static func with<T>(_ prefixes: [String], _ body: ([NetworkNamespace]) async throws -> T) async throws -> T {
        try Privileges.requireRoot()
        var made: [NetworkNamespace] = []
        defer { for ns in made { ns.delete() } }
        for prefix in prefixes { made.append(try NetworkNamespace(prefix: prefix)) }
        return try await body(made)
    }

    /// Runs `body` with one fresh namespace.
    public static func with<T>(_ prefix: String, _ body: (NetworkNamespace) async throws -> T) async throws -> T {
        try await with([prefix]) { try await body($0[0]) }
    }

    /// `ip -n NAME ARGS…`; throws with ip's message on failure.
    @discardableResult
    public func ip(_ arguments: String...) throws -> String {
        try Command.check(["ip", "-n", name] + arguments)
    }

    /// `ip -n NAME ARGS…` with an argument array.
    @discardableResult
    public func ip(arguments: [String]) throws -> String {
        try Command.check(["ip", "-n", name] + arguments)
    }

    /// `ip -n NAME -batch FILE`.
    public func batch(_ lines: [String]) throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString).batch")
        try lines.joined(separator: "\n").appending("\n").write(to: file, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        try Command.check(["ip", "-n", name, "-batch", file.path])
    }

    /// The index of `link` in this namespace.
    public func index(of link: String) throws -> Int32 {
        let text = try ip("-j", "link", "show", "dev", link)
        guard let array = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]],
            let index = array.first?["ifindex"] as? Int
        else { throw TestFailure("no ifindex for \(link) in \(name)") }
        return Int32(index)
    }

    /// Creates a veth pair with `inside` here and `outside` in `peer` (or here, when `peer` is nil).
    public func addVeth(_ inside: String, peer outside: String, in peerNamespace: NetworkNamespace? = nil) throws {
        if let peerNamespace {
            try ip("link", "add", inside, "type", "veth", "peer", "name", outside, "netns", peerNamespace.name)
        } else {
            try ip("link", "add", inside, "type", "veth", "peer", "name", outside)
        }
    }

    public func delete() {
        _ = try? Command.run(["ip", "netns", "del", name])
    }
}
