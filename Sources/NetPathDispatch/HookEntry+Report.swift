// SPDX-License-Identifier: Apache-2.0

import NetPathConfig
import NetPathControl

extension HookReport {
    /// The control-protocol form of a hooks-directory entry: what `netpathctl hooks` prints,
    /// from the agent or locally.
    package init(_ entry: HookEntry) {
        switch entry.status {
        case .accepted: self.init(name: entry.name, status: "accepted")
        case .refused(let refusal): self.init(name: entry.name, status: "refused", reason: refusal.description)
        case .ignored(let reason): self.init(name: entry.name, status: "ignored", reason: reason.description)
        }
    }

    /// The report of `entry`, found in `directory` of `dialect`.
    package init(_ entry: HookEntry, directory: String, dialect: HookDialect) {
        self.init(entry)
        self.directory = directory
        self.dialect = dialect.rawValue
    }
}
