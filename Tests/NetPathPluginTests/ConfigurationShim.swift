// SPDX-License-Identifier: Apache-2.0

import NetPathConfig
import TestSupport

/// Parses a `[plugin.NAME]` body through the real loader, for tests that need a `TOMLTable`.
enum ConfigurationLoaderShim {
    static func table(_ body: String, name: String = "changing") throws -> TOMLTable {
        let text = "[plugin.\(name)]\n" + body + "\n"
        switch ConfigurationLoader.load(contents: text, file: "netpath.toml") {
        case .success(let configuration):
            guard let table = configuration.plugins[name] else { throw TestFailure("no [plugin.\(name)] table") }
            return table
        case .failure(let errors):
            throw TestFailure("\(errors)")
        }
    }
}
