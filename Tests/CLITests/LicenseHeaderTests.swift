// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing

/// Every source file says its license in its first lines, as an SPDX identifier, so a file copied
/// out of the tree still carries it.
struct LicenseHeaderTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../..").standardizedFileURL
    static let folders = [
        "Sources", "Tests", "Plugins", "Examples", "Fuzz", "bench", "build-support", "packaging", "config",
    ]
    static let extensions: Set<String> = ["swift", "c", "h", "sh", "py"]

    @Test("every Swift, C, shell and Python file names its license (SPDX) in its first three lines")
    func everySourceFileHasTheSPDXLine() throws {
        var files: [URL] = []
        for folder in Self.folders {
            let root = Self.repository.appendingPathComponent(folder)
            guard let walk = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { continue }
            for case let file as URL in walk {
                if file.pathComponents.contains(".build") {
                    walk.skipDescendants()
                    continue
                }
                if Self.extensions.contains(file.pathExtension) { files.append(file) }
            }
        }
        files.append(Self.repository.appendingPathComponent("Package.swift"))
        // The walk found the tree, so an empty list of offenders means something.
        #expect(files.count > 300, "found only \(files.count) source files")
        let missing = try files.filter { file in
            let head = try String(contentsOf: file, encoding: .utf8).split(separator: "\n", maxSplits: 3).prefix(3)
            return !head.contains { $0.contains("SPDX-License-Identifier: Apache-2.0") }
        }
        #expect(missing.isEmpty, "without an SPDX line: \(missing.map(\.relativePath))")
    }
}
