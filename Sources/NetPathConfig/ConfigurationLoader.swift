// SPDX-License-Identifier: Apache-2.0

import NetPathCore

/// Reads netpath's TOML configuration into a validated ``Configuration``.
///
/// ```swift
/// switch ConfigurationLoader.load(contents: text, file: "/etc/netpath/netpath.toml") {
/// case .success(let configuration): use(configuration)
/// case .failure(let errors): print(errors)   // FILE:LINE:COL: error: … per line
/// }
/// ```
///
/// - Important: Loading is total: any input, however malformed, yields a configuration or a
///   list of diagnostics. It never traps and never stops at the first semantic error.
public enum ConfigurationLoader {
    /// Parses and validates a file's bytes, which must be UTF-8.
    ///
    /// A byte that is not UTF-8 is reported like any other mistake, at its line and column.
    ///
    /// - Parameters:
    ///   - bytes: The file's contents.
    ///   - file: The name diagnostics use, usually the path as the user gave it.
    ///   - knownPlugins: As in ``load(contents:file:knownPlugins:groupExists:)``.
    ///   - groupExists: As in ``load(contents:file:knownPlugins:groupExists:)``.
    public static func load(
        bytes: some Collection<UInt8>,
        file: String,
        knownPlugins: Set<String>? = nil,
        groupExists: (@Sendable (String) -> Bool)? = nil
    ) -> Result<Configuration, ConfigurationErrors> {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            // String(validating:) is nil only when some byte is invalid, so first(in:) finds one.
            let invalid = InvalidUTF8.first(in: bytes) ?? InvalidUTF8(line: 1, column: 1, offset: 0, byte: 0)
            let at = SourceLocation(line: invalid.line, column: invalid.column)
            return .failure(ConfigurationErrors(errors: [Diagnostic(file: file, at: at, message: "\(invalid)")]))
        }
        return load(contents: text, file: file, knownPlugins: knownPlugins, groupExists: groupExists)
    }

    /// Parses and validates `contents`.
    ///
    /// - Parameters:
    ///   - contents: The file's text.
    ///   - file: The name diagnostics use, usually the path as the user gave it.
    ///   - knownPlugins: The plugin names available to rules and `[plugin.NAME]` tables; `nil`
    ///     skips the check, for layers that do not know which plugins are built in.
    ///   - groupExists: Whether a group of that name exists on this machine, for
    ///     `control_group`; `nil` skips the check (this module does not ask the system itself).
    /// - Returns: The configuration, with any warnings in ``Configuration/warnings``, or every
    ///   error found.
    public static func load(
        contents: String,
        file: String,
        knownPlugins: Set<String>? = nil,
        groupExists: (@Sendable (String) -> Bool)? = nil
    ) -> Result<Configuration, ConfigurationErrors> {
        let root: TOMLTable
        do {
            root = try TOMLParser.parse(contents)
        } catch {
            return .failure(
                ConfigurationErrors(errors: [Diagnostic(file: file, at: error.location, message: error.message)])
            )
        }
        var validator = ConfigurationValidator(file: file, knownPlugins: knownPlugins, groupExists: groupExists)
        let configuration = validator.validate(root)
        let byPosition: (Diagnostic, Diagnostic) -> Bool = { ($0.line, $0.column) < ($1.line, $1.column) }
        let warnings = validator.warnings.sorted(by: byPosition)
        guard validator.errors.isEmpty else {
            return .failure(ConfigurationErrors(errors: validator.errors.sorted(by: byPosition), warnings: warnings))
        }
        var result = configuration
        result.warnings = warnings
        return .success(result)
    }
}
