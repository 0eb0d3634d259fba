// SPDX-License-Identifier: Apache-2.0

import NetPathCore
import NetPathQueues

/// One event waiting for, or getting, its hooks: an item of the dispatcher's ``SubjectQueues``.
struct HookJob: SubjectQueueItem {
    /// The dispatcher's number for it, in arrival order.
    var id: UInt64
    var event: Event
    /// The rules that matched and the hooks each runs.
    var targets: [HookTarget]
}
