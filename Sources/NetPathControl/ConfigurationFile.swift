// SPDX-License-Identifier: Apache-2.0

import Glibc
import NetPathConfig
import NetPathCore
import SystemPackage

/// Reads the configuration file from disk: the one place that turns a path into a validated
/// ``Configuration`` for the agent and the command-line tool.
public enum ConfigurationFile {
    /// Where administrators keep the configuration.
    public static let defaultPath = "/etc/netpath/netpath.toml"
    /// Larger files are refused: a configuration is a few kilobytes, and reading an arbitrary
    /// file (a device, a log) into memory must not take the agent down.
    public static let sizeLimit = 1 << 20

    /// A configuration and where it came from.
    public struct Loaded: Sendable {
        public var configuration: Configuration
        /// The path read, or ``Configuration/defaultFileName`` for the embedded default.
        public var source: String
    }

    /// Why a configuration could not be used.
    public enum Failure: Error, Sendable, CustomStringConvertible {
        /// There is no file at the path given.
        case missing(path: String)
        /// The file could not be read at all.
        case unreadable(path: String, reason: String)
        /// The file was read and has errors.
        case invalid(ConfigurationErrors)

        /// One diagnostic per line, `FILE:LINE:COL: error: …`.
        public var description: String {
            switch self {
            case .missing(let path):
                return "\(path): error: configuration file not found".escapingControlCharacters
            case .unreadable(let path, let reason):
                return "\(path): error: cannot read the configuration: \(reason)".escapingControlCharacters
            case .invalid(let errors): return errors.description
            }
        }

        /// What went wrong, in a few words, after the details ``description`` gives: "the
        /// configuration file was not found", "… cannot be read", "the configuration has errors".
        public var summary: String {
            switch self {
            case .missing: return "the configuration file was not found"
            case .unreadable: return "the configuration file cannot be read"
            case .invalid: return "the configuration has errors"
            }
        }
    }

    /// Loads `path`; with `nil`, ``defaultPath`` when it exists, else the embedded default.
    ///
    /// Validation asks this machine too: a `control_group` must exist here, as the agent needs
    /// it to start.
    ///
    /// - Parameter knownPlugins: plugin names rules may use; `nil` skips that check.
    public static func load(path: String?, knownPlugins: Set<String>? = nil) -> Result<Loaded, Failure> {
        let chosen: String
        if let path {
            chosen = path
        } else if access(defaultPath, F_OK) == 0 {
            chosen = defaultPath
        } else {
            return load(
                contents: Configuration.defaultFileContents,
                file: Configuration.defaultFileName,
                knownPlugins: knownPlugins
            )
        }
        return read(chosen).flatMap { bytes in
            ConfigurationLoader.load(bytes: bytes, file: chosen, knownPlugins: knownPlugins, groupExists: groupExists)
                .map { Loaded(configuration: $0, source: chosen) }
                .mapError { .invalid($0) }
        }
    }

    private static func load(contents: String, file: String, knownPlugins: Set<String>?) -> Result<Loaded, Failure> {
        ConfigurationLoader.load(contents: contents, file: file, knownPlugins: knownPlugins, groupExists: groupExists)
            .map { Loaded(configuration: $0, source: file) }
            .mapError { .invalid($0) }
    }

    private static let groupExists: @Sendable (String) -> Bool = { GroupDatabase.id(named: $0) != nil }

    private static func read(_ path: String) -> Result<ArraySlice<UInt8>, Failure> {
        let unreadable = { (reason: String) in
            Result<ArraySlice<UInt8>, Failure>.failure(.unreadable(path: path, reason: reason))
        }
        let tooLarge = "larger than \(sizeLimit / 1024) KiB"
        do throws(Errno) {
            // Non-blocking: a FIFO put in the configuration's place must not hang the agent.
            let file = try FileDescriptor.open(reading: path, options: .nonBlocking)
            defer { try? file.close() }
            var info = stat()
            guard fstat(file.rawValue, &info) == 0 else { return unreadable(Errno(rawValue: errno).description) }
            guard info.st_mode & S_IFMT == S_IFREG else { return unreadable("not a regular file") }
            guard Int(info.st_size) <= sizeLimit else { return unreadable(tooLarge) }
            let bytes = try file.readToEnd(limit: sizeLimit)
            guard bytes.count <= sizeLimit else { return unreadable(tooLarge) }
            // Whether it is UTF-8 is the loader's to say, with the line and column of the bad byte.
            return .success(bytes[...])
        } catch .noSuchFileOrDirectory {
            return .failure(.missing(path: path))
        } catch {
            return unreadable(error.description)
        }
    }
}
