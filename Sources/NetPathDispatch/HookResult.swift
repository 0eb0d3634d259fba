/// What one hook run came to: how it ended, how long it took, how much output was dropped.
public struct HookResult: Hashable, Sendable, CustomStringConvertible {
    /// How the hook's process ended.
    public enum Termination: Hashable, Sendable {
        /// It exited with this status.
        case exited(Int32)
        /// A signal ended it (after a timeout: SIGTERM or SIGKILL sent by the runner).
        case signaled(Int32)
        /// It could not be started; the payload says why (e.g. a script without `#!`).
        case failedToStart(String)
    }

    /// The outcome as counted in ``HookStatistics`` and exported as a metrics label.
    public enum Outcome: String, Hashable, Sendable, CaseIterable {
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
    public var hook: String
    public var termination: Termination
    /// The timeout passed and the runner signalled the hook's process group.
    public var timedOut: Bool
    /// From spawning to the end of the run (exit and end of output).
    public var duration: Duration
    /// Output lines logged.
    public var linesLogged: Int
    /// Output bytes read but not logged (over the line length or the run's budget).
    public var bytesDropped: Int

    public init(
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

    public var outcome: Outcome {
        if timedOut { return .timeout }
        switch termination {
        case .exited(0): return .success
        case .exited, .signaled: return .failure
        case .failedToStart: return .error
        }
    }

    /// `exited 0 after 12ms`, `timed out after 30s (signal 15)`, `failed to start: …`.
    public var description: String {
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
