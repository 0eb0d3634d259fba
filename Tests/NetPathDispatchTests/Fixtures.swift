// SPDX-License-Identifier: Apache-2.0

import Foundation
import Logging
import NetPathCore
import NetPathDispatch
import Synchronization
import TestSupport

/// A directory a test creates with mode 0755 and always deletes.
struct TemporaryDirectory {
    let path: String

    /// Runs `body` with a fresh directory that passes the hook trust rules (``ScratchDirectory``),
    /// removed afterwards whatever happens.
    static func with<T>(_ body: (TemporaryDirectory) async throws -> T) async throws -> T {
        let directory = TemporaryDirectory(path: try ScratchDirectory.make("netpath-hooks").path)
        defer { try? FileManager.default.removeItem(atPath: directory.path) }
        try directory.chmod(".", 0o755)
        return try await body(directory)
    }

    func path(_ name: String) -> String { name == "." ? path : path + "/" + name }

    /// Writes `text` to `name` with `mode` (set explicitly, whatever the umask).
    @discardableResult
    func write(_ name: String, _ text: String, mode: mode_t = 0o755) throws -> String {
        let file = path(name)
        try text.write(toFile: file, atomically: false, encoding: .utf8)
        try chmod(name, mode)
        return file
    }

    /// Writes a `#!/bin/sh` hook.
    @discardableResult
    func hook(_ name: String, _ body: String, mode: mode_t = 0o755) throws -> String {
        try write(name, "#!/bin/sh\n" + body + "\n", mode: mode)
    }

    func chmod(_ name: String, _ mode: mode_t) throws {
        guard Glibc.chmod(path(name), mode) == 0 else {
            throw TestFailure("chmod \(name): \(String(cString: strerror(errno)))")
        }
    }

    func chown(_ name: String, _ uid: uid_t) throws {
        guard Glibc.lchown(path(name), uid, gid_t(0)) == 0 else {
            throw TestFailure("chown \(name): \(String(cString: strerror(errno)))")
        }
    }

    func read(_ name: String) -> String? {
        try? String(contentsOfFile: path(name), encoding: .utf8)
    }

    /// Waits until `name` exists and `predicate` holds for its text.
    func await(_ name: String, timeout: Duration = .seconds(10), _ predicate: (String) -> Bool = { _ in true })
        async throws -> String
    {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let text = read(name), predicate(text) { return text }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw TestFailure("\(name) did not appear (or match) within \(timeout); it holds: \(read(name) ?? "nothing")")
    }
}

/// Log records kept as values, so tests can count what was logged.
final class LogStore: Sendable {
    struct Entry: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
    }

    private let entries = Mutex<[Entry]>([])

    var all: [Entry] { entries.withLock { $0 } }

    func append(_ entry: Entry) { entries.withLock { $0.append(entry) } }

    var logger: Logger {
        var logger = Logger(label: "test") { _ in StoreHandler(store: self) }
        logger.logLevel = .debug
        return logger
    }

    /// Entries whose `key` metadata equals `value`.
    func with(_ key: String, _ value: String) -> [Entry] { all.filter { $0.metadata[key] == value } }
}

struct StoreHandler: LogHandler {
    let store: LogStore
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .debug

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        store.append(.init(level: event.level, message: "\(event.message)", metadata: merged.mapValues { "\($0)" }))
    }
}

enum Events {
    /// An interface event for `name` (index `index`), with a plausible state.
    static func interface(_ event: Event.Name, _ name: String, index: Int32 = 7, startup: Bool = false) -> Event {
        let state = Interface(
            index: index,
            name: name,
            type: .wired,
            kind: "veth",
            carrier: event != .carrierDown && event != .down,
            mtu: 1500,
            isMetered: true,
            addresses: [InterfaceAddress(cidr: "192.0.2.10/24")!, InterfaceAddress(cidr: "2001:db8::10/64")!],
            defaultRoutes: [.init(via: IPAddress("192.0.2.1")), .init(via: IPAddress("2001:db8::1"))]
        )
        return Event(
            time: Date(),
            name: event,
            scope: .interface,
            interface: name,
            interfaceType: .wired,
            startup: startup,
            interfaceState: state
        )
    }

    /// A path event of policy `policy` with primary `primary`.
    static func path(_ event: Event.Name, policy: String = "default", primary: String?, previous: String? = nil)
        -> Event
    {
        let available = primary.map { [NetworkPath.PathInterface(name: $0, index: 3, type: .wifi)] } ?? []
        let path = NetworkPath(
            policy: policy,
            status: primary == nil ? .unsatisfied : .satisfied,
            unsatisfiedReason: primary == nil ? .noInterface : nil,
            availableInterfaces: available,
            supportsIPv4: primary != nil,
            supportsDNS: primary != nil,
            gateways: primary == nil ? [] : [IPAddress("198.51.100.1")]
        )
        return Event(
            time: Date(),
            name: event,
            scope: .path,
            interface: primary,
            interfaceType: primary == nil ? nil : .wifi,
            policy: policy,
            previousInterface: previous,
            path: path
        )
    }
}

/// The resident set size of this process, from /proc/self/status.
func residentBytes() throws -> Int {
    let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
    guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
        let kib = Int(line.split(separator: " ").dropFirst().first ?? "")
    else { throw TestFailure("no VmRSS in /proc/self/status") }
    return kib * 1024
}

/// Whether `pid` names a live (not zombie) process.
func isAlive(_ pid: Int32) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
    // Field 3, after the parenthesised command name, is the state.
    guard let close = stat.lastIndex(of: ")") else { return false }
    let state = stat[stat.index(close, offsetBy: 2)...].prefix(1)
    return state != "Z" && state != "X"
}
