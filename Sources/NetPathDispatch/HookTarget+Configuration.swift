// SPDX-License-Identifier: Apache-2.0

import NetPathConfig

extension HookTarget {
    /// The hook part of a rule matcher's target; `nil` when the rule runs no hooks (`run = []`).
    ///
    /// Such events should still be passed to ``HookDispatcher/dispatch(_:to:)`` with no
    /// targets: they make older queued events of their subject obsolete.
    package init?(_ target: DispatchTarget) {
        switch target.hooks {
        case .all:
            self.init(rule: target.rule, hooks: .all, timeout: target.timeout)
        case .named(let names) where names.isEmpty:
            return nil
        case .named(let names):
            self.init(rule: target.rule, hooks: .named(names), timeout: target.timeout)
        }
    }
}
