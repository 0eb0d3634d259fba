// SPDX-License-Identifier: Apache-2.0

import FoundationEssentials
import NetPathConfig
import NetPathControl
import NetPathCore

/// What the control socket answers from: the agent's latest state, paths and configuration,
/// published by the main loop after every change so that answering never waits on it.
struct AgentSnapshot: Sendable {
    var state = SystemState()
    var paths: [NetworkPath] = []
    var configuration = Configuration.default
    var configurationSource = Configuration.defaultFileName
    var time = Date()

    /// The `status` document, with how many links the engine ignores and, when asked, which
    /// (read from the engine when asked, so that their churn never needs a snapshot).
    func status(ignoredCount: Int, ignored: [IgnoredInterface]?) -> StatusReport {
        StatusReport(
            interfaces: state.interfaces,
            paths: paths,
            kernelRoutes: state.kernelRoutes,
            ignoredCount: ignoredCount,
            ignored: ignored,
            probing: configuration.connectivity != nil
        )
    }

    func explain(ignored: [IgnoredInterface]) -> ExplainReply {
        let explanation = Explanation(state: state, configuration: configuration, time: time, ignored: ignored)
        return ExplainReply(text: explanation.text, report: explanation.report)
    }

    /// One status line per policy, for systemd's `STATUS=`: "default: satisfied via eth0 (wired)".
    var statusLine: String {
        paths.map { path in
            var text = "\(path.policy): \(path.status.rawValue)"
            if let primary = path.primary { text += " via \(primary.name) (\(primary.type))" }
            if let reason = path.unsatisfiedReason { text += " (\(reason.rawValue))" }
            return text
        }.joined(separator: "; ")
    }
}
