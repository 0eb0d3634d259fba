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
    /// Parses and validates `contents`.
    ///
    /// - Parameters:
    ///   - contents: The file's text.
    ///   - file: The name diagnostics use, usually the path as the user gave it.
    ///   - knownPlugins: The plugin names available to rules and `[plugin.NAME]` tables; `nil`
    ///     skips the check, for layers that do not know which plugins are built in.
    /// - Returns: The configuration, with any warnings in ``Configuration/warnings``, or every
    ///   error found.
    public static func load(
        contents: String,
        file: String,
        knownPlugins: Set<String>? = nil
    ) -> Result<Configuration, ConfigurationErrors> {
        let root: TOMLTable
        do {
            root = try TOMLParser.parse(contents)
        } catch {
            return .failure(
                ConfigurationErrors(errors: [Diagnostic(file: file, at: error.location, message: error.message)])
            )
        }
        var validator = ConfigurationValidator(file: file, knownPlugins: knownPlugins)
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
