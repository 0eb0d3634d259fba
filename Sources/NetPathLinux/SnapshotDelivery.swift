// SPDX-License-Identifier: Apache-2.0

/// Where a ``NetlinkEngine`` started with ``NetlinkEngine/start(delivering:)`` hands its
/// snapshots. Both closures run on the engine's thread: they must only queue, never block.
package struct SnapshotDelivery: Sendable {
    /// Takes one snapshot (a full state: a consumer that merges two loses transitions, never
    /// the final state).
    package var deliver: @Sendable (KernelSnapshot) -> Void
    /// The engine stopped: no snapshot follows.
    package var finish: @Sendable () -> Void

    package init(deliver: @escaping @Sendable (KernelSnapshot) -> Void, finish: @escaping @Sendable () -> Void) {
        self.deliver = deliver
        self.finish = finish
    }
}
