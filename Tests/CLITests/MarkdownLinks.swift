// SPDX-License-Identifier: Apache-2.0

import Foundation

/// Finds the references in a Markdown file that do not resolve inside the repository.
///
/// What counts as a reference:
/// - an inline link or image, `[text](target)` or `![alt](target "title")`, and a reference
///   definition, `[id]: target`: the target, relative to the file (or to the repository root when
///   it starts with `/`), must be a file or directory inside the repository, and a `#fragment`
///   on a Markdown file must name one of its headings, as GitHub derives anchors from them;
/// - a Markdown file named in code, such as `` `Plugins/README.md` ``: a path with a `/` that
///   ends in `.md` must name a file inside the repository, relative to the file or to the root.
///   That is how a README points at a document without linking it, and such a pointer to a file
///   outside the repository is as broken for a reader as a link.
///
/// Targets with a scheme (`https:`, `mailto:`) are not checked; fenced code blocks are skipped.
struct MarkdownLinks {
    /// The repository root.
    let repository: URL

    /// One target found in a file.
    struct Reference: Equatable {
        /// The 1-based line.
        var line: Int
        /// The target as written.
        var target: String
        /// Named in a code span rather than linked.
        var inCode: Bool
    }

    /// Every Markdown file under ``repository``, skipping hidden and build directories and
    /// `bench/out` (generated, ignored by git).
    ///
    /// Symlinks are not followed: the sysfs fixtures under `Tests/Fixtures` link in circles, as
    /// the real `/sys` does.
    func markdownFiles() throws -> [URL] {
        let skipped: Set<String> = ["bench/out"]
        var result: [URL] = []
        var pending = [repository]
        while let directory = pending.popLast() {
            for name in try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() {
                let url = directory.appendingPathComponent(name)
                // attributesOfItem does not follow a symlink: its type is .typeSymbolicLink.
                let type = try FileManager.default.attributesOfItem(atPath: url.path)[.type] as? FileAttributeType
                if type == .typeDirectory {
                    if !name.hasPrefix("."), !skipped.contains(relative(url)) { pending.append(url) }
                } else if type == .typeRegular, name.hasSuffix(".md") {
                    result.append(url)
                }
            }
        }
        return result.sorted { $0.path < $1.path }
    }

    /// The problems of `file` whose text is `text`, as `PATH:LINE: …`, path relative to the root.
    func problems(in file: URL, text: String) -> [String] {
        let directory = file.deletingLastPathComponent()
        var problems: [String] = []
        for reference in Self.references(in: text) {
            let place = "\(relative(file)):\(reference.line)"
            if reference.inCode {
                let candidates = [directory, repository].map { resolve(reference.target, from: $0) }
                if !candidates.contains(where: { $0.map(exists) ?? false }) {
                    problems.append("\(place): `\(reference.target)` names no Markdown file in the repository")
                }
                continue
            }
            let parts = reference.target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
            let path = String(parts[0]).removingPercentEncoding ?? String(parts[0])
            let fragment = parts.count == 2 ? String(parts[1]) : nil
            let target: URL
            if path.isEmpty {
                target = file
            } else if let resolved = resolve(path, from: path.hasPrefix("/") ? repository : directory) {
                target = resolved
            } else {
                problems.append("\(place): \(reference.target) points outside the repository")
                continue
            }
            guard exists(target) else {
                problems.append("\(place): \(reference.target): \(relative(target)) does not exist")
                continue
            }
            if let fragment, !fragment.isEmpty, target.pathExtension == "md" {
                let headings = (try? String(contentsOf: target, encoding: .utf8)).map(Self.anchors) ?? []
                if !headings.contains(fragment) {
                    problems.append("\(place): \(reference.target): \(relative(target)) has no heading #\(fragment)")
                }
            }
        }
        return problems
    }

    // MARK: - Paths

    /// `path` resolved from `base`, or `nil` when it leaves the repository.
    private func resolve(_ path: String, from base: URL) -> URL? {
        let relativePath = path.hasPrefix("/") ? String(path.dropFirst()) : path
        let url = base.appendingPathComponent(relativePath).standardizedFileURL
        let root = repository.standardizedFileURL.path
        guard url.path == root || url.path.hasPrefix(root + "/") else { return nil }
        return url
    }

    private func exists(_ url: URL) -> Bool { FileManager.default.fileExists(atPath: url.path) }

    private func relative(_ url: URL) -> String {
        let root = repository.standardizedFileURL.path + "/"
        let path = url.standardizedFileURL.path
        return path.hasPrefix(root) ? String(path.dropFirst(root.count)) : path
    }

    // MARK: - Parsing

    /// The link targets and code-span Markdown paths of `text`, outside fenced code blocks.
    static func references(in text: String) -> [Reference] {
        var result: [Reference] = []
        var fence: String?
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.drop { $0 == " " }
            if let open = fence {
                if trimmed.hasPrefix(open) { fence = nil }
                continue
            }
            if trimmed.hasPrefix("```") || trimmed.hasPrefix("~~~") {
                fence = String(trimmed.prefix(3))
                continue
            }
            let (prose, spans) = splitCodeSpans(String(line))
            for span in spans where isMarkdownPath(span) {
                result.append(Reference(line: index + 1, target: span, inCode: true))
            }
            for target in linkTargets(prose) {
                result.append(Reference(line: index + 1, target: target, inCode: false))
            }
        }
        return result
    }

    /// The line with its code spans blanked out, and the spans' contents.
    private static func splitCodeSpans(_ line: String) -> (String, [String]) {
        let characters = Array(line)
        var prose = ""
        var spans: [String] = []
        var i = 0
        while i < characters.count {
            guard characters[i] == "`" else {
                prose.append(characters[i])
                i += 1
                continue
            }
            var run = 0
            while i + run < characters.count, characters[i + run] == "`" { run += 1 }
            // The span ends at the next run of exactly as many backticks.
            var j = i + run
            var end: Int?
            while j < characters.count {
                if characters[j] == "`" {
                    var other = 0
                    while j + other < characters.count, characters[j + other] == "`" { other += 1 }
                    if other == run {
                        end = j
                        break
                    }
                    j += other
                } else {
                    j += 1
                }
            }
            guard let end else {
                prose += String(characters[i..<(i + run)])
                i += run
                continue
            }
            spans.append(String(characters[(i + run)..<end]).trimmingCharacters(in: .whitespaces))
            prose += String(repeating: " ", count: end + run - i)
            i = end + run
        }
        return (prose, spans)
    }

    /// A code span that names a Markdown file by a path: `docs/hooks.md`, `../x/README.md`.
    private static func isMarkdownPath(_ span: String) -> Bool {
        span.hasSuffix(".md") && span.contains("/") && !span.contains(" ") && !span.contains(":")
    }

    /// The targets of `[text](target)`, `![alt](target "title")` and `[id]: target` in `prose`.
    private static func linkTargets(_ prose: String) -> [String] {
        var targets: [String] = []
        let trimmed = prose.drop { $0 == " " }
        if trimmed.hasPrefix("["), let close = trimmed.range(of: "]: "),
            !trimmed[..<close.lowerBound].contains("]")
        {
            let rest = trimmed[close.upperBound...].drop { $0 == " " }
            if let target = rest.split(separator: " ").first { targets.append(String(target)) }
        }
        var rest = Substring(prose)
        while let open = rest.range(of: "](") {
            let after = rest[open.upperBound...]
            guard let close = after.firstIndex(of: ")") else { break }
            let inside = after[..<close].trimmingCharacters(in: .whitespaces)
            // `target "title"`: the target ends at the first space; `<target>` may hold spaces.
            var target = inside.split(separator: " ").first.map(String.init) ?? ""
            if target.hasPrefix("<"), target.hasSuffix(">") { target = String(target.dropFirst().dropLast()) }
            if !target.isEmpty { targets.append(target) }
            rest = after[after.index(after: close)...]
        }
        return targets.filter { !hasScheme($0) }
    }

    private static func hasScheme(_ target: String) -> Bool {
        guard let colon = target.firstIndex(of: ":"), colon != target.startIndex else { return false }
        let scheme = target[..<colon]
        return scheme.first!.isLetter && scheme.allSatisfy { $0.isLetter || $0.isNumber || "+.-".contains($0) }
    }

    /// The anchors GitHub gives the headings of `text`: lower-cased, punctuation dropped, spaces
    /// turned into `-`, and `-1`, `-2`, … after a repeated one.
    static func anchors(in text: String) -> Set<String> {
        var result: Set<String> = []
        var fence: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.drop { $0 == " " }
            if let open = fence {
                if trimmed.hasPrefix(open) { fence = nil }
                continue
            }
            if trimmed.hasPrefix("```") || trimmed.hasPrefix("~~~") {
                fence = String(trimmed.prefix(3))
                continue
            }
            let hashes = trimmed.prefix { $0 == "#" }
            guard (1...6).contains(hashes.count), trimmed.dropFirst(hashes.count).first == " " else { continue }
            let title = trimmed.dropFirst(hashes.count).trimmingCharacters(in: .whitespaces)
            let slug = String(
                title.lowercased().compactMap { c -> Character? in
                    if c == " " { return "-" }
                    return c.isLetter || c.isNumber || c == "-" || c == "_" ? c : nil
                }
            )
            var anchor = slug
            var count = 0
            while result.contains(anchor) {
                count += 1
                anchor = "\(slug)-\(count)"
            }
            result.insert(anchor)
        }
        return result
    }
}
