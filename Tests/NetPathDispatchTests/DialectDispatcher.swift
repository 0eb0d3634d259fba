// SPDX-License-Identifier: Apache-2.0

import NetPathConfig

@testable import NetPathDispatch

/// A running dispatcher with an empty (or given) `hooks_dir` and one `[[hook_dir]]` of a
/// dialect: what the dialects' dispatch tests drive.
enum DialectDispatcher {
    /// Runs `body` with a dispatcher whose `[[hook_dir]]` has `paths` and `dialect`; stops the
    /// dispatcher when `body` returns.
    static func with(
        _ dialect: HookDialect,
        paths: [String],
        native: String? = nil,
        _ body: (HookDispatcher, LogStore) async throws -> Void
    ) async throws {
        let log = LogStore()
        let dispatcher = HookDispatcher(
            directory: HookDirectory(path: native ?? "/nonexistent/netpath-hooks.d", logger: log.logger),
            dialectDirectories: [
                DialectHookDirectory(setting: HookDirectorySetting(paths: paths, dialect: dialect), logger: log.logger)
            ],
            runner: HookRunner(logger: log.logger),
            logger: log.logger
        )
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await dispatcher.run() }
            defer { group.cancelAll() }
            try await body(dispatcher, log)
        }
    }
}
