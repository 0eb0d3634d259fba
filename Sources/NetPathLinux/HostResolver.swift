// SPDX-License-Identifier: Apache-2.0

import Glibc
import Logging
import NetPathCore

/// Resolves host names on threads of its own and keeps the answers, so that whoever asks never
/// waits for DNS.
///
/// `getaddrinfo(3)` blocks for as long as the name servers take — seconds per attempt when they
/// do not answer, which is exactly when the network is broken — so it must run neither on the
/// agent's loop nor on Swift's cooperative pool (two threads on the target machines). Each
/// followed host has one plain thread that resolves it, keeps the answer, and sleeps until the
/// answer expires or ``refresh()`` asks again; ``answer(for:)`` only reads what is kept, and
/// `onChange` tells the owner when an answer changed.
///
/// `getaddrinfo` reports no TTL, so answers are kept for a fixed time (``Options``): a minute for
/// an answer, since most names that move (CDNs, failover) have TTLs of a minute or more and a
/// path change triggers a new lookup anyway; ten seconds for a failure, so that a name is retried
/// soon after the name server comes back. A failed refresh does not throw away an answer that
/// has not expired: a name server that stops answering does not make the target's address wrong.
///
/// ```swift
/// let resolver = HostResolver { print("a target's answer changed") }
/// resolver.follow(["vpn.example.org"])
/// if case .resolved(let addresses) = resolver.answer(for: "vpn.example.org") { print(addresses) }
/// resolver.refresh()   // the default route moved: ask again
/// resolver.stop()
/// ```
package final class HostResolver: Sendable {
    /// How long answers are kept.
    package struct Options: Sendable {
        /// How long an answer is used before the name is looked up again.
        package var answerLifetime: Duration
        /// How long a failure stands before the name is looked up again.
        package var failureLifetime: Duration

        package init(answerLifetime: Duration = .seconds(60), failureLifetime: Duration = .seconds(10)) {
            self.answerLifetime = answerLifetime
            self.failureLifetime = failureLifetime
        }
    }

    /// What is known about one host name.
    package enum Answer: Hashable, Sendable {
        /// Not answered yet: the first lookup is running.
        case pending
        /// Its addresses, in `getaddrinfo`'s order.
        case resolved([IPAddress])
        /// The last lookup failed, and no earlier answer is still valid.
        case failed(HostLookupError)
    }

    /// Looks a name up; may block.
    package typealias Lookup = @Sendable (String) -> Result<[IPAddress], HostLookupError>

    private struct Entry {
        /// Tells this entry's thread from one that followed the same name earlier.
        var id: UInt64
        var answer: Answer = .pending
        /// When the current answer stops being valid (monotonic nanoseconds).
        var answerExpires: UInt64 = 0
        /// Set when a new lookup is wanted before the current one expires.
        var refresh = false
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var lastID: UInt64 = 0
        var stopped = false
    }

    package let options: Options
    private let lookup: Lookup
    private let onChange: @Sendable () -> Void
    private let logger: Logger
    private let state = ConditionLock(State())

    /// - Parameters:
    ///   - options: How long answers are kept.
    ///   - lookup: How a name is looked up; `getaddrinfo` by default (tests pass a fake).
    ///   - logger: Where a target's new answer or failure is logged.
    ///   - onChange: Called, on a resolver thread, after a followed name's answer changed; it
    ///     must return quickly (post to a queue, say).
    package init(
        options: Options = Options(),
        lookup: @escaping Lookup = { TargetResolver().lookup($0) },
        logger: Logger = Logger(label: "netpath.resolver"),
        onChange: @escaping @Sendable () -> Void
    ) {
        self.options = options
        self.lookup = lookup
        self.logger = logger
        self.onChange = onChange
    }

    /// Follows exactly `hosts`: a thread starts for each new name, and the names no longer listed
    /// are dropped (their thread ends once its lookup in progress returns). Address literals
    /// need no lookup and are ignored.
    package func follow(_ hosts: [String]) {
        let wanted = Set(hosts.filter { IPAddress($0) == nil })
        let started = state.withLock { state -> [(String, UInt64)] in
            guard !state.stopped else { return [] }
            for host in state.entries.keys where !wanted.contains(host) { state.entries[host] = nil }
            var started: [(String, UInt64)] = []
            for host in wanted.sorted() where state.entries[host] == nil {
                state.lastID += 1
                state.entries[host] = Entry(id: state.lastID)
                started.append((host, state.lastID))
            }
            return started
        }
        state.broadcast()
        for (host, id) in started {
            if !Self.startThread({ [self] in follow(host, id: id) }) {
                logger.error("cannot start a thread to resolve \(host); it stays unresolved")
            }
        }
    }

    /// What is known about `host` now; never blocks. A name not followed is ``Answer/pending``.
    package func answer(for host: String) -> Answer {
        if let literal = IPAddress(host) { return .resolved([literal]) }
        return state.withLock { $0.entries[host]?.answer ?? .pending }
    }

    /// Looks every followed name up again now (the path to the name servers changed), keeping the
    /// current answers until the new ones arrive.
    package func refresh() {
        state.withLock { state in
            for host in state.entries.keys { state.entries[host]?.refresh = true }
        }
        state.broadcast()
    }

    /// Follows nothing more; threads end once their lookup in progress returns.
    package func stop() {
        state.withLock { state in
            state.stopped = true
            state.entries = [:]
        }
        state.broadcast()
    }

    // MARK: - A host's thread

    /// Resolves `host` until it is no longer followed (its entry gone or replaced).
    private func follow(_ host: String, id: UInt64) {
        while true {
            state.withLock { $0.entries[host]?.refresh = false }
            let result = lookup(host)
            let now = MonotonicClock.nanoseconds
            let outcome = state.withLock { state -> (changed: Bool, next: UInt64)? in
                guard var entry = state.entries[host], entry.id == id else { return nil }
                let before = entry.answer
                var next: UInt64
                switch result {
                case .success(let addresses):
                    entry.answer = .resolved(addresses)
                    entry.answerExpires = now &+ Self.nanoseconds(options.answerLifetime)
                    next = entry.answerExpires
                case .failure(let error):
                    next = now &+ Self.nanoseconds(options.failureLifetime)
                    if case .resolved = entry.answer, now < entry.answerExpires {
                        // Still valid: keep it, and try again within its lifetime.
                        next = min(next, entry.answerExpires)
                    } else {
                        entry.answer = .failed(error)
                    }
                }
                state.entries[host] = entry
                return (entry.answer != before, next)
            }
            guard let outcome else { return }
            if outcome.changed { report(host) }
            // Sleep until the answer expires, a refresh is asked for, or the host is dropped.
            state.wait(until: outcome.next) { state in
                guard let entry = state.entries[host], entry.id == id else { return true }
                return entry.refresh
            }
            guard state.withLock({ $0.entries[host]?.id == id }) else { return }
        }
    }

    private func report(_ host: String) {
        switch answer(for: host) {
        case .resolved(let addresses):
            logger.info(
                "target \(host) resolved",
                metadata: [
                    "target": .string(host), "addresses": .string(addresses.map(\.description).joined(separator: " ")),
                ]
            )
        case .failed(let error):
            logger.warning("target unresolved: \(error)", metadata: ["target": .string(host)])
        case .pending:
            break
        }
        onChange()
    }

    // MARK: - Time and threads

    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        return UInt64(seconds) &* 1_000_000_000 &+ UInt64(max(0, attoseconds) / 1_000_000_000)
    }

    /// A detached plain thread: a blocked `getaddrinfo` holds it, and nothing else.
    private static func startThread(_ body: @escaping @Sendable () -> Void) -> Bool {
        OSThread.detach(body)
    }
}
