// SPDX-License-Identifier: Apache-2.0

import NetPathConfig
import NetPathControl

#if canImport(Glibc)
    import Glibc
#endif

extension HookDispatcher {
    /// Every file of every hook directory with its verdict (`netpathctl hooks`): `hooks_dir`
    /// first, then each `[[hook_dir]]`'s directories in search order.
    package func reports() -> [HookReport] {
        Self.reports(native: directory, dialectDirectories: dialectDirectories)
    }

    /// The reports of `native` and `dialectDirectories`, without a dispatcher (`netpathctl hooks --local`).
    ///
    /// A directory without files is listed too, as one report with an empty name and the status
    /// `missing` (no such directory) or `empty`, so that every configured directory shows.
    package static func reports(native: HookDirectory, dialectDirectories: [DialectHookDirectory]) -> [HookReport] {
        var listed = [(native.path, native.entries(), HookDialect.netpath)]
        for dialectDirectory in dialectDirectories {
            listed += dialectDirectory.entries().map { ($0.path, $0.entries, dialectDirectory.dialect) }
        }
        var reports: [HookReport] = []
        for (index, (path, entries, dialect)) in listed.enumerated() {
            if entries.isEmpty {
                // A networkd-dispatcher path is followed by its state directories: it is empty
                // only when none follows.
                let next = listed.indices.contains(index + 1) ? listed[index + 1].0 : ""
                if dialect == .networkd && next.hasPrefix(path.hasSuffix("/") ? path : path + "/") { continue }
                reports.append(directoryReport(path, dialect: dialect))
            }
            reports += entries.map { HookReport($0, directory: path, dialect: dialect) }
        }
        return reports
    }

    /// The report of a directory without files: `missing` or `empty`, and why.
    static func directoryReport(_ path: String, dialect: HookDialect) -> HookReport {
        var status = stat()
        let exists = stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
        let reason =
            exists
            ? (dialect == .networkd ? "no scripts in any state directory (routable.d, off.d, …)" : "no files")
            : "no such directory"
        return HookReport(
            name: "",
            status: exists ? "empty" : "missing",
            reason: reason,
            directory: path,
            dialect: dialect.rawValue
        )
    }
}
