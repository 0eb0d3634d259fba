// SPDX-License-Identifier: Apache-2.0
// [[hook_dir]]
extension ConfigurationValidator {
    static let hookDirectoryKeys = ["path", "dialect"]

    /// The `[[hook_dir]]` tables; `hooksDirectory` is `hooks_dir`, which no table may list again.
    mutating func hookDirectories(_ tables: [TOMLTable], hooksDirectory: String) -> [HookDirectorySetting] {
        var result: [HookDirectorySetting] = []
        // Each directory once over every table: the same script run twice for one event, under
        // two contracts, is a mistake.
        var seen: [String: SourceLocation?] = [hooksDirectory: nil]
        for table in tables {
            checkKeys(table, allowed: Self.hookDirectoryKeys, in: "[[hook_dir]]")
            let dialect = hookDialect(table)
            let paths = hookDirectoryPaths(table, dialect: dialect)
            var kept: [String] = []
            for (path, at) in paths ?? [] {
                if let first = seen[path] {
                    let origin = first.map { "first listed at \($0)" } ?? "it is hooks_dir"
                    error("directory \(TOMLValue.quoted(path)) is listed twice; \(origin)", at: at)
                    continue
                }
                seen[path] = at
                kept.append(path)
            }
            guard let dialect, paths != nil, !kept.isEmpty else { continue }
            result.append(HookDirectorySetting(paths: kept, dialect: dialect, location: table.location))
        }
        return result
    }

    /// `path`: one absolute directory, or a non-empty list of them (a search path); without
    /// it, the dialect's default search path (``HookDialect/defaultPaths``), located at the table.
    private mutating func hookDirectoryPaths(
        _ table: TOMLTable,
        dialect: HookDialect?
    ) -> [(String, SourceLocation)]? {
        guard let value = table["path"] else {
            if let defaults = dialect?.defaultPaths { return defaults.map { ($0, table.location) } }
            // An unknown dialect has its own error already; a missing path is a second mistake.
            error("[[hook_dir]] is missing the required key \"path\"", at: table.location)
            return nil
        }
        let example = "\"/etc/NetworkManager/dispatcher.d\" or a list of such directories"
        var paths: [(String, SourceLocation)] = []
        if let path = value.string {
            paths = [(path, value.location)]
        } else if let elements = value.array {
            if elements.isEmpty {
                error("path = [] names no directory; expected \(example)", at: value.location)
                return nil
            }
            for (i, element) in elements.enumerated() {
                guard let path = element.string else {
                    error("path[\(i)] must be a string, found \(element.summary)", at: element.location)
                    continue
                }
                paths.append((path, element.location))
            }
        } else {
            error("path must be a directory such as \(example), found \(value.summary)", at: value.location)
            return nil
        }
        var result: [(String, SourceLocation)] = []
        for (path, at) in paths {
            guard path.hasPrefix("/"), !path.containsControlCharacters else {
                error("path must hold absolute directories, found \(TOMLValue.quoted(path))", at: at)
                continue
            }
            if result.contains(where: { $0.0 == path }) {
                error("\(TOMLValue.quoted(path)) is listed twice in path", at: at)
                continue
            }
            result.append((path, at))
        }
        return result
    }

    private mutating func hookDialect(_ table: TOMLTable) -> HookDialect? {
        guard table["dialect"] != nil else {
            let all = Self.list(HookDialect.supported.map(\.rawValue))
            error("[[hook_dir]] is missing the required key \"dialect\" (one of \(all))", at: table.location)
            return nil
        }
        guard let (text, at) = string(table, "dialect") else { return nil }
        let supported = HookDialect.supported.map(\.rawValue)
        if let dialect = HookDialect(rawValue: text), HookDialect.supported.contains(dialect) { return dialect }
        let suggestion = Suggestion.clause(for: text, in: supported)
        let hint = suggestion.isEmpty ? "; expected one of \(Self.list(supported))" : suggestion
        error("unknown dialect \(TOMLValue.quoted(text))\(hint)", at: at)
        return nil
    }
}
