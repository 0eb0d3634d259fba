// SPDX-License-Identifier: Apache-2.0

import Foundation
import TestSupport
import Testing

/// Package.swift's module map is true: the edges its comment lists are exactly each module's
/// dependencies in the manifest and its imports, and every edge points to a lower level.
struct PackageLayeringTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Where each module's sources are.
    static let directories: [String: String] = [
        "RouteMetricsPlugin": "Plugins/RouteMetrics", "EventLogPlugin": "Plugins/EventLog",
        "ShippedPlugins": "Plugins/Shipped", "ProbeHelper": "Sources/netpath-probe",
    ]

    /// The comment at the top of Package.swift: levels and edges.
    static func map() throws -> (levels: [String: Int], edges: [String: Set<String>]) {
        let text = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let comment = text.split(separator: "\n").prefix { $0.hasPrefix("//") }.map { $0.dropFirst(2) }
        var levels: [String: Int] = [:]
        var edges: [String: Set<String>] = [:]
        var level: Int?
        var inEdges = false
        for line in comment {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("Edges") { inEdges = true; continue }
            if inEdges {
                // "A → B, C    D → E": each "X → list" pair, several per line.
                let pattern = /([A-Za-z]+) → ([A-Za-z, ]+?)(?=\s{2,}[A-Za-z]+ →|$)/
                for match in trimmed.matches(of: pattern) {
                    let from = full(String(match.1))
                    let to = match.2.split(separator: ",").map { full($0.trimmingCharacters(in: .whitespaces)) }
                    edges[from, default: []].formUnion(to)
                }
                continue
            }
            // "  3  NetPath   the library…" or a continuation line "     NetPathDispatch   hooks…".
            let words = trimmed.split(separator: " ", omittingEmptySubsequences: true)
            guard let first = words.first else { continue }
            var names: Substring
            if let number = Int(first) {
                level = number
                names = trimmed.dropFirst(first.count).drop { $0 == " " }
            } else {
                names = Substring(trimmed)
            }
            guard let level, line.hasPrefix("   ") else { continue }
            // The names end where two spaces start the description.
            let head = names.split(separator: "  ", maxSplits: 1).first ?? ""
            for name in head.split(separator: ",") {
                let module = name.trimmingCharacters(in: .whitespaces)
                if module.allSatisfy({ $0.isLetter }) && !module.isEmpty { levels[module] = level }
            }
        }
        return (levels, edges)
    }

    /// Each target's dependencies on the package's own targets, as SwiftPM reads the manifest
    /// (`swift package dump-package`); products of other packages are left out.
    static func manifestDependencies() async throws -> [String: Set<String>] {
        // A scratch directory of its own: `swift test`, which runs this, holds the lock on .build.
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("np-dump-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let json = try await Command.checkOffPool([
            "swift", "package", "--package-path", root.path, "--scratch-path", scratch.path, "dump-package",
        ])
        let manifest = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        let targets = try #require(manifest?["targets"] as? [[String: Any]], "no targets in dump-package's JSON")
        var dependencies: [String: Set<String>] = [:]
        for target in targets {
            let name = try #require(target["name"] as? String)
            // `{"byName": ["NetPathCore", null]}` or `{"target": [...]}`; a `product` is another package's.
            let entries = target["dependencies"] as? [[String: Any]] ?? []
            let names = entries.compactMap { (($0["byName"] ?? $0["target"]) as? [Any])?.first as? String }
            dependencies[name] = Set(names)
        }
        return dependencies
    }

    static func full(_ name: String) -> String {
        ["Core", "Config", "Control", "Linux", "Plugin", "Dispatch", "Agent", "Testing", "Queues"].contains(name)
            ? "NetPath" + name : name
    }

    /// The project's modules each of `module`'s source files imports.
    static func imports(of module: String, among modules: Set<String>) throws -> Set<String> {
        let directory = root.appendingPathComponent(directories[module] ?? "Sources/\(module)")
        var found: Set<String> = []
        let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)
        while let file = files?.nextObject() as? URL {
            guard file.pathExtension == "swift" else { continue }
            for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n") {
                // Scoped imports count too: `@_exported import struct NetPathPlugin.PluginContext`.
                guard
                    let match = line.firstMatch(
                        of:
                            /^\s*(?:@_exported )?(?:(?:public|package|internal) )?import (?:(?:struct|class|enum|protocol|typealias|func|var|let) )?(\w+)/
                    )
                else { continue }
                let name = String(match.1)
                if modules.contains(name) && name != module { found.insert(name) }
            }
        }
        return found
    }

    @Test("every module's imports of project modules are exactly the edges Package.swift's comment lists")
    func commentEdgesAreTheImports() throws {
        let (levels, edges) = try Self.map()
        let modules = Set(levels.keys)
        #expect(modules.count == 22, "modules read from the comment: \(modules.sorted())")
        for module in modules.sorted() where !["CNetlink", "CLinux", "CCurl", "CSeccomp"].contains(module) {
            let imports = try Self.imports(of: module, among: modules)
            #expect(
                imports == edges[module] ?? [],
                "\(module) imports \(imports.sorted()), the comment says \((edges[module] ?? []).sorted())"
            )
        }
    }

    @Test("every module's dependencies in Package.swift's targets are exactly the edges its comment lists")
    func commentEdgesAreTheManifestDependencies() async throws {
        let (levels, edges) = try Self.map()
        let dependencies = try await Self.manifestDependencies()
        for module in levels.keys.sorted() {
            let declared = try #require(
                dependencies[module],
                "\(module) is in the comment but not a target of Package.swift"
            )
            #expect(
                declared == edges[module] ?? [],
                "\(module) depends on \(declared.sorted()), the comment says \((edges[module] ?? []).sorted())"
            )
        }
    }

    @Test("every edge points to a lower level")
    func edgesPointDown() throws {
        let (levels, edges) = try Self.map()
        for (from, targets) in edges {
            for to in targets {
                let (a, b) = (try #require(levels[from], "\(from)"), try #require(levels[to], "\(to)"))
                #expect(a > b, "\(from) (level \(a)) → \(to) (level \(b))")
            }
        }
    }
}
