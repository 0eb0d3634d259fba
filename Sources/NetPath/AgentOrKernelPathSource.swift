// SPDX-License-Identifier: Apache-2.0

import Synchronization

/// The source of ``PathMonitor/shared``: a running netpathd when its control socket answers (so
/// the administrator's interface overrides and policy apply), the kernel of this process
/// otherwise. Each path's ``NetworkPath/origin`` says which.
///
/// A subscription tries the agent first, with the policy's name; any failure (no agent, a
/// socket this process may not use, no such policy, an agent that does not answer) subscribes
/// to the kernel instead, with the policy's own requirements. When a followed agent stops, the
/// subscription continues from the kernel: the next path says `origin == .kernel`, so the
/// switch of judge is visible, never silent. It does not go back to an agent that starts later:
/// a new subscription does.
package final class AgentOrKernelPathSource: PathSource {
    package let agent: AgentPathSource
    package let kernel: KernelPathSource

    /// - Parameters:
    ///   - agent: the agent to follow when it answers; its fallback is not used.
    ///   - kernel: where paths come from otherwise.
    package init(agent: AgentPathSource, kernel: KernelPathSource) {
        self.agent = agent
        self.kernel = kernel
    }

    package func subscribe(to policy: PathPolicy, sink: SourceSink<NetworkPath>) throws -> SourceSubscription<
        NetworkPath
    > {
        let relay = Relay()
        let fromAgent = SourceSink<NetworkPath>(
            onFinish: { [kernel] error in
                // The agent went away: carry on from the kernel, unless the consumer left.
                guard relay.isActive else { return }
                do {
                    let local = try kernel.subscribe(to: policy, sink: relay.forwarding(to: sink))
                    guard relay.replace(with: local) else { return }
                    sink.yield(local.initialValue)
                } catch {
                    sink.finish(throwing: error)
                }
            },
            onValue: { path in if relay.isActive { sink.yield(path) } }
        )
        let subscription: SourceSubscription<NetworkPath>
        do {
            subscription = try agent.subscribe(to: policy, sink: fromAgent)
        } catch {
            subscription = try kernel.subscribe(to: policy, sink: relay.forwarding(to: sink))
        }
        relay.adopt(subscription)
        return SourceSubscription(initialValue: subscription.initialValue) { relay.cancel() }
    }

    /// The inner subscription in use, and whether the outer one was cancelled.
    private final class Relay: Sendable {
        private let state = Mutex<(current: SourceSubscription<NetworkPath>?, cancelled: Bool)>((nil, false))

        var isActive: Bool { state.withLock { !$0.cancelled } }

        /// Makes `subscription` the one in use; cancels it and returns `false` if the outer one
        /// was cancelled meanwhile.
        func replace(with subscription: SourceSubscription<NetworkPath>) -> Bool {
            let accepted = state.withLock { state -> Bool in
                guard !state.cancelled else { return false }
                state.current = subscription
                return true
            }
            if !accepted { subscription.cancel() }
            return accepted
        }

        /// Makes the first subscription the one in use, unless the agent already stopped while it
        /// was being made and the kernel's replaced it (that one is newer), or the outer one was
        /// cancelled.
        func adopt(_ subscription: SourceSubscription<NetworkPath>) {
            let adopted = state.withLock { state -> Bool in
                guard !state.cancelled, state.current == nil else { return false }
                state.current = subscription
                return true
            }
            if !adopted { subscription.cancel() }
        }

        func forwarding(to sink: SourceSink<NetworkPath>) -> SourceSink<NetworkPath> {
            SourceSink(
                onFinish: { [self] error in if isActive { sink.finish(throwing: error) } },
                onValue: { [self] path in if isActive { sink.yield(path) } }
            )
        }

        func cancel() {
            let current = state.withLock { state in
                state.cancelled = true
                defer { state.current = nil }
                return state.current
            }
            current?.cancel()
        }
    }
}
