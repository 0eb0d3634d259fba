// SPDX-License-Identifier: Apache-2.0

import Logging
import NetPathConfig
import NetPathCore

#if canImport(Glibc)
    import Glibc
#endif

/// A `[[hook_dir]]`: a search path of directories whose scripts were written for one dialect
/// (``NetPathConfig/HookDialect``), merged by file name as their own dispatcher merges them.
///
/// - **Search path**: the directories are searched in order, and a name found in an earlier one
///   hides the same name in later ones (`/etc/NetworkManager/dispatcher.d` before
///   `/usr/lib/NetworkManager/dispatcher.d`). A symlink to `/dev/null` masks the name: nothing
///   of that name runs. The merged scripts run in lexical byte order of their names.
/// - **Trust**: every script is opened through its own directory's ``HookDirectory``, so
///   netpath's trust rules apply unchanged; they include NetworkManager-dispatcher's own (a
///   regular file, owned by root, not writable by group or others, not setuid, executable).
/// - **NetworkManager-dispatcher**: the subdirectories `no-wait.d`, `pre-up.d` and `pre-down.d`
///   are not scripts. A script that is a symlink into a `no-wait.d` runs without waiting: it
///   starts with the others and runs alongside them (NetworkManager's rule). `pre-up.d` and
///   `pre-down.d` never run: netpath activates no connection, so nothing happens before one
///   comes up or goes down.
/// - **networkd-dispatcher**: each directory of the search path holds one subdirectory per
///   state (`routable.d`, `off.d`, …, ``NetworkdState``); the scripts of a state are the names
///   of its subdirectory in every directory of the search path, merged by name as above
///   (``scripts(entering:)``). The directories themselves hold no scripts.
package final class DialectHookDirectory: Sendable {
    /// One script to run: its name, the directory it is taken from, and how.
    package struct Script: Hashable, Sendable {
        package var name: String
        package var directory: String
        /// Runs alongside the others (NetworkManager's `no-wait.d`).
        package var noWait: Bool
    }

    package let setting: HookDirectorySetting
    /// One ``HookDirectory`` per path, in search order.
    package let directories: [HookDirectory]
    /// networkd-dispatcher: for each state, its `<state>.d` in each path, in search order.
    let stateDirectories: [String: [HookDirectory]]

    package convenience init(setting: HookDirectorySetting, logger: Logger) {
        self.init(setting: setting, policy: .current, logger: logger)
    }

    init(setting: HookDirectorySetting, policy: TrustPolicy, logger: Logger) {
        self.setting = setting
        self.directories = setting.paths.map { HookDirectory(path: $0, policy: policy, logger: logger) }
        var stateDirectories: [String: [HookDirectory]] = [:]
        if setting.dialect == .networkd {
            for state in NetworkdState.allStates {
                stateDirectories[state] = setting.paths.map {
                    HookDirectory(path: Self.stateDirectory($0, state), policy: policy, logger: logger)
                }
            }
        }
        self.stateDirectories = stateDirectories
    }

    /// `/etc/networkd-dispatcher/routable.d`.
    static func stateDirectory(_ path: String, _ state: String) -> String {
        (path.hasSuffix("/") ? path : path + "/") + state + ".d"
    }

    package var dialect: HookDialect { setting.dialect }

    /// The subdirectories NetworkManager-dispatcher keeps inside its directory.
    static let dispatcherSubdirectories: Set<String> = ["no-wait.d", "pre-up.d", "pre-down.d"]

    /// The scripts that may run, merged over the search path, in lexical byte order. Trust is
    /// not checked here but when each one is opened (``HookDirectory/open(_:)``).
    package func scripts() -> [Script] {
        // networkd-dispatcher's scripts are in its state directories only.
        dialect == .networkd ? [] : merged(directories)
    }

    /// networkd-dispatcher: the scripts of `state`'s directories, merged over the search path,
    /// in lexical byte order; none for another dialect.
    package func scripts(entering state: String) -> [Script] {
        merged(stateDirectories[state] ?? [])
    }

    /// Every script name of every state (rules naming scripts).
    package func allScriptNames() -> Set<String> {
        var names = Set(scripts().map(\.name))
        for directories in stateDirectories.values { names.formUnion(merged(directories).map(\.name)) }
        return names
    }

    private func merged(_ directories: [HookDirectory]) -> [Script] {
        var chosen: [String: Script?] = [:]
        for directory in directories {
            for name in directory.hookNames() where chosen[name] == nil {
                if isSubdirectory(name) { continue }
                if isMasked(name, in: directory.path) {
                    chosen[name] = .some(nil)
                    continue
                }
                chosen[name] = Script(name: name, directory: directory.path, noWait: isNoWait(name, in: directory.path))
            }
        }
        return chosen.values.compactMap { $0 }.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
    }

    /// The ``HookDirectory`` of `path`.
    package func directory(_ path: String) -> HookDirectory? {
        directories.first { $0.path == path }
            ?? stateDirectories.values.lazy.compactMap { $0.first { $0.path == path } }.first
    }

    /// Every file of every directory with its verdict, directory by directory: `netpathctl hooks`.
    /// Every path of the search path is listed, with no entries when it is missing or empty;
    /// for networkd-dispatcher, a path's state directories follow it, those with files only.
    package func entries() -> [(path: String, entries: [HookEntry])] {
        guard dialect == .networkd else { return entries(of: directories) }
        var result: [(path: String, entries: [HookEntry])] = []
        var byState: [String: [(path: String, entries: [HookEntry])]] = [:]
        for state in NetworkdState.allStates {
            byState[state] = entries(of: stateDirectories[state] ?? []).map { listed in
                guard !NetworkdState.enteredStates.contains(state) else { return listed }
                // Files of a state netpath never enters never run, whatever their trust.
                return (
                    listed.path,
                    listed.entries.map { entry in
                        if case .ignored = entry.status { return entry }
                        return HookEntry(name: entry.name, status: .ignored(.stateNeverEntered))
                    }
                )
            }
        }
        for (index, directory) in directories.enumerated() {
            let states = NetworkdState.allStates.compactMap { byState[$0]?[index] }.filter { !$0.entries.isEmpty }
            result.append((directory.path, []))
            result += states
        }
        return result
    }

    private func entries(of directories: [HookDirectory]) -> [(path: String, entries: [HookEntry])] {
        var seen: Set<String> = []
        return directories.map { directory in
            let entries = directory.entries().map { entry -> HookEntry in
                if isSubdirectory(entry.name) {
                    return HookEntry(name: entry.name, status: .ignored(.dispatcherSubdirectory))
                }
                if case .ignored = entry.status { return entry }
                if seen.contains(entry.name) { return HookEntry(name: entry.name, status: .ignored(.overridden)) }
                seen.insert(entry.name)
                if isMasked(entry.name, in: directory.path) {
                    return HookEntry(name: entry.name, status: .ignored(.masked))
                }
                return entry
            }
            return (directory.path, entries)
        }
    }

    private func isSubdirectory(_ name: String) -> Bool {
        dialect == .networkmanager && Self.dispatcherSubdirectories.contains(name)
    }

    private func isMasked(_ name: String, in directory: String) -> Bool {
        Self.linkTarget(directory + "/" + name) == "/dev/null"
    }

    /// NetworkManager's rule: a symlink whose target's directory is a `no-wait.d` of the search path.
    private func isNoWait(_ name: String, in directory: String) -> Bool {
        guard dialect == .networkmanager, let target = Self.linkTarget(directory + "/" + name) else { return false }
        let absolute = target.hasPrefix("/") ? target : directory + "/" + target
        guard let parent = absolute.lastIndex(of: "/").map({ String(absolute[..<$0]) }),
            let real = Self.realPath(parent.isEmpty ? "/" : parent)
        else { return false }
        return setting.paths.contains { Self.realPath($0 + "/no-wait.d") == real }
    }

    static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
