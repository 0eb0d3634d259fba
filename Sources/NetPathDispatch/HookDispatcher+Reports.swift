import NetPathConfig
import NetPathControl

extension HookDispatcher {
    /// Every file of every hook directory with its verdict (`netpathctl hooks`): `hooks_dir`
    /// first, then each `[[hook_dir]]`'s directories in search order.
    package func reports() -> [HookReport] {
        Self.reports(native: directory, dialectDirectories: dialectDirectories)
    }

    /// The reports of `native` and `dialectDirectories`, without a dispatcher (`netpathctl hooks --local`).
    package static func reports(native: HookDirectory, dialectDirectories: [DialectHookDirectory]) -> [HookReport] {
        var reports = native.entries().map { HookReport($0, directory: native.path, dialect: .netpath) }
        for dialectDirectory in dialectDirectories {
            for (path, entries) in dialectDirectory.entries() {
                reports += entries.map { HookReport($0, directory: path, dialect: dialectDirectory.dialect) }
            }
        }
        return reports
    }
}
