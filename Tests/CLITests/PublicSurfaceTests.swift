// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import Testing

/// The library products' public surface grows only with a line in CHANGELOG.md.
///
/// build-support/public-surface.sh counts the public declarations in the debug build's symbol
/// graphs (the compiler's own view, so nothing is missed or miscounted by parsing sources); the
/// newest `Public declarations:` line of CHANGELOG.md records the counts a change was written for.
struct PublicSurfaceTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// `NetPath 312, Network 103, NetPathTesting 20` from the first matching CHANGELOG.md line.
    static func recorded() throws -> [String: Int] {
        let text = try String(contentsOf: root.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        let line = try #require(
            text.split(separator: "\n").first { $0.hasPrefix("Public declarations:") },
            "CHANGELOG.md has no `Public declarations:` line"
        )
        var counts: [String: Int] = [:]
        for match in line.matches(of: /([A-Za-z]+) ([0-9]+)/) {
            counts[String(match.1)] = Int(match.2)
        }
        return counts
    }

    /// `NetPath: 312 public declarations, 0 without a /// comment`, per product.
    static func measured() throws -> (counts: [String: Int], undocumented: [String: Int]) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["build-support/public-surface.sh"]
        process.currentDirectoryURL = root
        var environment = ProcessInfo.processInfo.environment
        // `swift test` holds the build directory's lock: the script must not run SwiftPM.
        environment["BIN_PATH"] = BuiltProducts.directory.path
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "build-support/public-surface.sh failed")
        var counts: [String: Int] = [:]
        var undocumented: [String: Int] = [:]
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let pattern = /([A-Za-z]+): ([0-9]+) public declarations, ([0-9]+) without a \/\/\/ comment/
            if let match = line.wholeMatch(of: pattern) {
                counts[String(match.1)] = Int(match.2)
                undocumented[String(match.1)] = Int(match.3)
            }
        }
        return (counts, undocumented)
    }

    @Test("each library product has no more public declarations than CHANGELOG.md records, each with a /// comment")
    func surfaceMatchesTheChangeLog() throws {
        let recorded = try Self.recorded()
        let (counts, undocumented) = try Self.measured()
        #expect(Set(counts.keys) == ["NetPath", "Network", "NetPathTesting"])
        for (product, count) in counts.sorted(by: { $0.key < $1.key }) {
            let limit = try #require(recorded[product], "CHANGELOG.md records no count for \(product)")
            #expect(
                count <= limit,
                """
                \(product) has \(count) public declarations, CHANGELOG.md records \(limit): say what was added \
                in CHANGELOG.md and update its `Public declarations:` line (LIST=1 build-support/public-surface.sh)
                """
            )
            #expect(undocumented[product] == 0, "\(product): VERBOSE=1 build-support/public-surface.sh lists them")
        }
    }
}
