// SPDX-License-Identifier: Apache-2.0

extension Configuration {
    /// The embedded `config/netpath.toml`, byte for byte: what netpathd uses when
    /// `/etc/netpath/netpath.toml` does not exist, and the template administrators start from.
    public static let defaultFileContents = String(decoding: PackageResources.netpath_toml, as: UTF8.self)

    /// The name diagnostics use for the embedded default.
    public static let defaultFileName = "<embedded config/netpath.toml>"

    /// The embedded default configuration, validated.
    ///
    /// - Important: A test proves the embedded file valid; should it ever fail to load, this
    ///   falls back to the built-in defaults rather than trapping.
    public static let `default`: Configuration = {
        switch ConfigurationLoader.load(contents: defaultFileContents, file: defaultFileName) {
        case .success(let configuration): return configuration
        case .failure: return Configuration()
        }
    }()
}
