// SPDX-License-Identifier: Apache-2.0

import ArgumentParser
import FoundationEssentials
import Glibc
import NetPathConfig
import NetPathControl
import NetPathCore
import NetPathLinux
import Synchronization
import SystemPackage

extension Netpathctl {
    struct Monitor: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print interface and path events as they happen, like `ip monitor` at path level.",
            discussion: "With --json, each event is one JSON object per line (the same object hooks get on stdin)."
        )

        @OptionGroup var source: SourceOptions
        @OptionGroup var config: ConfigOptions

        @Flag(name: .long, help: "Print one JSON event per line.")
        var json = false

        @Option(
            name: .long,
            help: ArgumentHelp(
                "Also write every observed state to FILE as a trace for `netpathctl simulate` (with --local; the agent records with netpathd --record).",
                valueName: "FILE"
            )
        )
        var record: String?

        #if NETPATH_BENCH
            // Only in `make bench`'s build, never in a release: one JSON line per snapshot on
            // stderr, so the storm benchmark can see when the engine applied the last route even
            // though no event changes.
            @Flag(name: .customLong("bench-snapshots"), help: .hidden)
            var benchSnapshots = false
        #else
            var benchSnapshots: Bool { false }
        #endif

        func validate() throws {
            // A trace is the sequence of observed states; the agent's monitor stream carries only
            // the events derived from them, from which no state can be rebuilt (an event names
            // one interface or path, not the DNS servers, targets and routes around it). Rather
            // than record something simulate could not replay, say so.
            if record != nil && !source.local {
                throw ValidationError(
                    "--record needs --local: a trace holds the observed states, and the agent's monitor stream carries only events; use `netpathctl monitor --local --record FILE`, or start netpathd with --record FILE"
                )
            }
        }

        func run() async throws {
            guard source.local else { return try followAgent() }
            let configuration = try config.load().configuration
            let observer = source.observer(for: configuration)
            let session = LocalMonitorSession(
                tracker: PathTracker(policies: configuration.policies),
                json: json,
                recorder: try record.map { try TraceWriter(path: $0) },
                benchSnapshots: benchSnapshots,
                stop: { observer.engine.stop() }
            )
            // The engine's thread classifies, diffs and writes each change itself, so a change's
            // first line leaves without waiting for another thread to wake (BENCHMARKS.md, "Latency").
            try observer.start(handling: { session.handle($0) }, finished: { session.finish() })
            try await session.ended()
        }
    }
}

/// `monitor --local`'s state, touched only on the engine's thread (``handle(_:)``) until the
/// engine has stopped (``finish()``); ``ended()`` waits for that.
private final class LocalMonitorSession: @unchecked Sendable {
    private var tracker: PathTracker
    private let json: Bool
    private let recorder: TraceWriter?
    private let benchSnapshots: Bool
    private let stop: @Sendable () -> Void
    private var first = true
    private var failure: (any Error)?
    private let end = Mutex<(done: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    init(
        tracker: PathTracker,
        json: Bool,
        recorder: TraceWriter?,
        benchSnapshots: Bool,
        stop: @escaping @Sendable () -> Void
    ) {
        self.tracker = tracker
        self.json = json
        self.recorder = recorder
        self.benchSnapshots = benchSnapshots
        self.stop = stop
    }

    /// One update, on the engine's thread.
    func handle(_ update: SystemUpdate) {
        guard failure == nil else { return }
        #if NETPATH_BENCH
            // After this update's events are out (its emitted_ns says when).
            defer { if benchSnapshots { BenchSnapshotLine.write(update) } }
        #endif
        do {
            try recorder?.append(Trace.Record(time: update.time, state: update.state))
            if first {
                // Adopt the current state silently: monitor reports changes, like ip monitor.
                _ = tracker.start(with: update.state, at: update.time)
                first = false
                // On stderr even with --json: scripts can wait for it, and stdout stays pure JSON.
                FileOutput.write("monitoring \(update.state.interfaces.count) interfaces; Ctrl-C to stop\n", to: 2)
                return
            }
            // Each line is written as soon as its event is known and encoded: a reader sees a
            // change's first interface event before the policies are evaluated and the rest encoded.
            try tracker.update(to: update.state, at: update.time) { event in
                FileOutput.write((json ? try JSONCoding.line(event) : EventRenderer.line(event)) + "\n")
            }
        } catch {
            failure = error
            stop()
        }
    }

    /// The engine stopped: no more updates.
    func finish() {
        let waiter = end.withLock { end in
            end.done = true
            defer { end.waiter = nil }
            return end.waiter
        }
        waiter?.resume()
    }

    /// Returns once the engine has stopped; throws what stopped it from here, if anything.
    func ended() async throws {
        await withCheckedContinuation { continuation in
            let done = end.withLock { end in
                if !end.done { end.waiter = continuation }
                return end.done
            }
            if done { continuation.resume() }
        }
        if let failure { throw failure }
    }
}

extension Netpathctl.Monitor {
    /// Relays the running agent's events: the same JSON lines the agent sends, or their human form.
    func followAgent() throws {
        let path = try source.socketPath(config)
        let client = try ControlClient(path: path)
        _ = try client.request(.monitor).checked()
        FileOutput.write("monitoring netpathd on \(path); Ctrl-C to stop\n", to: 2)
        let decoder = JSONDecoder()
        while let line = try client.readLine() {
            if json {
                FileOutput.write(line + "\n")
            } else if let event = try? decoder.decode(Event.self, from: Data(line.utf8)) {
                FileOutput.write(EventRenderer.line(event) + "\n")
            }
        }
        throw AgentError.connectionClosed
    }
}

/// Unbuffered writes to stdout (Swift's `print` is block-buffered on a pipe); a failed write
/// (a closed pipe) drops the text.
enum FileOutput {
    static func write(_ text: String, to fd: Int32 = 1) {
        _ = try? FileDescriptor(rawValue: fd).writeAll(text.utf8)
    }
}

#if NETPATH_BENCH
    /// The `--bench-snapshots` line: what bench/run.sh reads to time the storm's catch-up.
    enum BenchSnapshotLine {
        static func write(_ update: SystemUpdate) {
            let receivedNs = Int64((update.time.timeIntervalSince1970 * 1e9).rounded())
            let publishedNs = Int64((update.publishedAt.timeIntervalSince1970 * 1e9).rounded())
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            let emittedNs = Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
            let line =
                "{\"generation\":\(update.generation),\"cause\":\"\(update.cause.rawValue)\",\"route_count\":\(update.routeCount),"
                + "\"messages\":\(update.statistics.messages),\"overruns\":\(update.statistics.overruns),"
                + "\"resyncs\":\(update.statistics.resyncs),\"skipped_routes\":\(update.statistics.skippedRoutes),"
                + "\"received_at\":\(receivedNs),\"published_ns\":\(publishedNs),"
                + "\"emitted_ns\":\(emittedNs)}\n"
            FileOutput.write(line, to: 2)
        }
    }
#endif

/// The human form of one event.
enum EventRenderer {
    static func line(_ event: Event) -> String {
        let time = RFC3339.format(event.time)
        let clock = String(time.dropFirst(11).prefix(15))
        switch event.scope {
        case .interface:
            var text = "\(clock)  \(event.name.rawValue.padding(15))  \(event.interface ?? "-")"
            if let type = event.interfaceType { text += " (\(type))" }
            if let address = event.address { text += " \(address)" }
            if !event.changes.isEmpty { text += " [\(event.changes.joined(separator: ", "))]" }
            text += connectivity(event)
            return text
        case .path:
            var text = "\(clock)  path \(event.name.rawValue.padding(10))  \(event.policy ?? "-"): "
            if let path = event.path {
                text += path.status.rawValue
                if let primary = path.primary { text += " via \(primary.name)" }
                if let reason = path.unsatisfiedReason { text += " (\(reason.rawValue))" }
            }
            if let previous = event.previousInterface, previous != event.interface { text += ", was \(previous)" }
            text += connectivity(event)
            return text
        default:
            return "\(clock)  \(event.scope) \(event.name.rawValue)" + connectivity(event)
        }
    }

    /// ` connectivity portal (was full) http://portal.test/`, for connectivity-changed.
    static func connectivity(_ event: Event) -> String {
        guard let new = event.connectivity else { return "" }
        var text = " connectivity \(new)"
        if let old = event.previousConnectivity { text += " (was \(old))" }
        let url = event.scope == .path ? event.path?.portalURL : event.interfaceState?.portalURL
        if new == .portal, let url { text += " \(url.escapingControlCharacters)" }
        return text
    }
}

extension String {
    fileprivate func padding(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
