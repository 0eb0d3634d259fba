// SPDX-License-Identifier: Apache-2.0

/// What one hook run came to: how it ended, how long it took, how much output was dropped.
package struct HookResult: Hashable, Sendable, CustomStringConvertible {
    /// How the hook's process ended.
    package enum Termination: Hashable, Sendable {
        /// It exited with this status.
        case exited(Int32)
        /// A signal ended it (after a timeout: SIGTERM or SIGKILL sent by the runner).
        case signaled(Int32)
        /// It could not be started; the payload says why (e.g. a script without `#!`).
        case failedToStart(String)
    }

    /// The outcome as counted in ``HookStatistics`` and exported as a metrics label.
    package enum Outcome: String, Hashable, Sendable, CaseIterable {
        /// Exited 0 within its timeout.
        case success
        /// Exited non-zero or was killed by a signal it did not get from the runner.
        case failure
        /// Ran past its timeout; its process group was terminated.
        case timeout
        /// Never started.
        case error
    }

    /// The hook's file name.
    package var hook: String
    package var termination: Termination
    /// The timeout passed and the runner signalled the hook's process group.
    package var timedOut: Bool
    /// From spawning to the end of the run (exit and end of output).
    package var duration: Duration
    /// Output lines logged.
    package var linesLogged: Int
    /// Output bytes read but not logged (over the line length or the run's budget).
    package var bytesDropped: Int

    package init(
        hook: String,
        termination: Termination,
        timedOut: Bool = false,
        duration: Duration = .zero,
        linesLogged: Int = 0,
        bytesDropped: Int = 0
    ) {
        self.hook = hook
        self.termination = termination
        self.timedOut = timedOut
        self.duration = duration
        self.linesLogged = linesLogged
        self.bytesDropped = bytesDropped
    }

    package var outcome: Outcome {
        if timedOut { return .timeout }
        switch termination {
        case .exited(0): return .success
        case .exited, .signaled: return .failure
        case .failedToStart: return .error
        }
    }

    /// `exited 0 after 12ms`, `timed out after 30s (signal 15)`, `failed to start: …`.
    package var description: String {
        let ms = "\(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)ms"
        let ending: String
        switch termination {
        case .exited(let code): ending = "exited \(code)"
        case .signaled(let signal): ending = "killed by signal \(signal)"
        case .failedToStart(let reason): return "failed to start: \(reason)"
        }
        return timedOut ? "timed out after \(ms) (\(ending))" : "\(ending) after \(ms)"
    }
}
