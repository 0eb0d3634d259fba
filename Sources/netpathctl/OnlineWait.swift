// SPDX-License-Identifier: Apache-2.0

import NetPathControl
import NetPathCore

/// The wait behind `netpathctl wait-online`: follows netpathd's event stream and judges its
/// `status` after each event, until the condition holds or the time runs out.
///
/// The `monitor` stream is subscribed to before the first `status` is read, so no change can
/// fall between the two; the agent publishes its state before it sends a change's events, so
/// the `status` read after an event shows that event's state (or a newer one). While no agent
/// answers (not started yet, restarting), it waits for the control socket to appear
/// (``SocketWatch``).
struct OnlineWait {
    /// How the wait ended.
    enum Outcome: Equatable {
        /// Online: through what.
        case online(String)
        /// The time ran out while the agent answered: what was still missing.
        case timedOut(String)
        /// Anything else: no agent within the time, an agent that refuses, a condition it can
        /// never meet.
        case failed(Failure)
    }

    /// Why a wait ended without a verdict (exit status 2).
    enum Failure: Equatable, CustomStringConvertible {
        /// No agent answered on `socket` within the time (`limit`, as the message says it);
        /// `reason` is why the last try failed.
        case noAgent(socket: String, limit: String, reason: String)
        /// The agent refused the `monitor` request; `reason` is its error, when it gave one.
        case monitorRefused(reason: String?)
        /// The agent refused the `status` request, or sent none; `reason` is its error.
        case statusRefused(reason: String?)
        /// This agent, as configured, can never meet the condition (``OnlineCondition/Verdict/impossible(_:)``).
        case impossible(String)
        /// Talking to the agent failed in a way a new agent would not cure: permission, an
        /// impostor, a stuck agent.
        case client(ControlClient.Failure)

        var description: String {
            switch self {
            case .noAgent(let socket, let limit, let reason):
                return "no netpathd answered on \(socket) within \(limit) (\(reason))"
            case .monitorRefused(let reason): return reason ?? "netpathd refused to stream its events"
            case .statusRefused(let reason): return reason ?? "netpathd sent no status"
            case .impossible(let reason): return reason
            case .client(let failure): return failure.description
            }
        }
    }

    let condition: OnlineCondition
    let socketPath: String
    /// `nil` waits as long as it takes.
    let limit: Duration?
    /// Told what the wait is waiting for, once per agent it follows (and once while there is
    /// none): a line in the journal before the verdict.
    var progress: (String) -> Void = { _ in }

    private enum Step {
        case finished(Outcome)
        /// No agent answers: why, and the socket file that did not (or is going away).
        case agentGone(String, SocketWatch.Identity?)
    }

    func run() -> Outcome {
        let deadline = limit.map { ContinuousClock.now + $0 }
        while true {
            switch follow(until: deadline) {
            case .finished(let outcome):
                return outcome
            case .agentGone(let reason, let old):
                progress("waiting for netpathd to answer on \(socketPath) (\(reason))")
                guard SocketWatch.waitForNewFile(at: socketPath, replacing: old, until: deadline) else {
                    return .failed(.noAgent(socket: socketPath, limit: limitText, reason: reason))
                }
            }
        }
    }

    /// Follows one agent until the condition holds, the time runs out, or the agent goes away.
    private func follow(until deadline: ContinuousClock.Instant?) -> Step {
        let identity = SocketWatch.identity(of: socketPath)
        let monitor: ControlClient
        do throws(ControlClient.Failure) {
            monitor = try ControlClient(path: socketPath)
            let reply = try monitor.request(.monitor)
            guard reply.ok else { return .finished(.failed(.monitorRefused(reason: reply.error))) }
        } catch {
            return gone(error, identity)
        }
        var waitingFor = ""
        while true {
            do throws(ControlClient.Failure) {
                let reply = try ControlClient(path: socketPath).request(.status)
                guard reply.ok, let status = reply.status else {
                    return .finished(.failed(.statusRefused(reason: reply.error)))
                }
                switch condition.evaluate(status) {
                case .online(let text): return .finished(.online(text))
                case .impossible(let reason): return .finished(.failed(.impossible(reason)))
                case .waiting(let reason):
                    if waitingFor.isEmpty { progress("waiting: \(reason)") }
                    waitingFor = reason
                }
                let left = deadline.map { max(.zero, ContinuousClock.now.duration(to: $0)) }
                guard try monitor.readLine(within: left) != nil else {
                    return .agentGone("netpathd closed the connection (stopped or restarting)", identity)
                }
            } catch .noReply where deadline.map({ ContinuousClock.now >= $0 }) ?? false {
                return .finished(.timedOut("not online within \(limitText): \(waitingFor)"))
            } catch {
                return gone(error, identity)
            }
        }
    }

    /// A failure to talk to the agent: one that a new agent may cure (nothing listens, the
    /// connection broke), or one that ends the wait (permission, an impostor, a stuck agent).
    private func gone(_ failure: ControlClient.Failure, _ identity: SocketWatch.Identity?) -> Step {
        switch failure {
        case .noAgent(_, let reason): return .agentGone(reason, identity)
        case .protocolError(let reason): return .agentGone(reason, identity)
        case .permissionDenied, .untrustedAgent, .noReply: return .finished(.failed(.client(failure)))
        }
    }

    private var limitText: String {
        guard let limit else { return "the wait" }
        let (seconds, attoseconds) = limit.components
        return attoseconds == 0 ? "\(seconds) s" : "\(limit)"
    }
}
