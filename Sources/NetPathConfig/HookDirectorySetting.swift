// SPDX-License-Identifier: Apache-2.0

/// One `[[hook_dir]]` table: a directory (or a search path of directories) of hooks written for
/// one dialect, run besides the native `hooks_dir`.
public struct HookDirectorySetting: Hashable, Sendable, CustomStringConvertible {
    /// The directories, searched in order: a file name found in an earlier directory hides the
    /// same name in later ones (list `/etc/…` before `/usr/lib/…`, as the dispatchers do).
    public var paths: [String]
    /// The contract the scripts were written for.
    public var dialect: HookDialect
    /// Where the `[[hook_dir]]` header is, when it came from a file.
    public var location: SourceLocation?

    /// Creates a setting; `paths` must not be empty.
    public init(paths: [String], dialect: HookDialect, location: SourceLocation? = nil) {
        self.paths = paths
        self.dialect = dialect
        self.location = location
    }

    /// `networkmanager: /etc/NetworkManager/dispatcher.d, /usr/lib/NetworkManager/dispatcher.d`.
    public var description: String { "\(dialect): " + paths.joined(separator: ", ") }
}
