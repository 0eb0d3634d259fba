// SPDX-License-Identifier: Apache-2.0

import FoundationEssentials
import NetPathCore

/// The protocol of netpathd's control socket (`/run/netpath/netpathd.sock`): JSON lines over a
/// Unix stream socket. A client writes one ``ControlRequest`` line and reads one
/// ``ControlReply`` line; after a `monitor` request the reply is followed by one event object
/// per line (the event JSON of docs/events.md) until either side closes.
///
/// Requests are at most ``ControlProtocol/maximumRequestBytes`` long; anything else gets an
/// error reply.
///
/// What the agent expects of a client, so that none can hold it up:
/// - Requests may be pipelined, but the agent takes the next one only when the previous reply has
///   been handed over, and reads nothing from the client meanwhile: a client that does not read
///   its replies stalls only itself.
/// - A connection with nothing under way is closed after ``ControlProtocol/idleTimeout``; a
///   request must arrive whole, and its reply be read, within ``ControlProtocol/requestTimeout``.
///   `reload` (answered once carried out) and the `monitor` stream are not timed.
/// - A client may shut down its sending side after its last request (a final newline is then
///   optional): the replies still come, then the agent closes the connection.
/// - Other users share 64 connections; a few more are kept for root, so `status` and `reload`
///   get through whatever other clients do. A refused connection gets the reply
///   `{"ok":false,"error":"too many clients …"}`.
package enum ControlProtocol {
    /// The longest request line the agent reads; longer ones are refused without being buffered.
    package static let maximumRequestBytes = 4096
    /// How long the agent keeps a connection that has nothing under way.
    package static let idleTimeout: Duration = .seconds(5)
    /// How long a request may take to arrive, and its reply to be read.
    package static let requestTimeout: Duration = .seconds(5)
}

/// What a client asks.
package enum ControlCommand: String, Codable, Sendable, CaseIterable {
    /// Interfaces and paths (`netpathctl status`).
    case status
    /// The policy and rule verdicts (`netpathctl explain`).
    case explain
    /// Stream events (`netpathctl monitor`).
    case monitor
    /// Reload the configuration; only root may.
    case reload
    /// The hooks found and whether each is accepted (`netpathctl hooks`).
    case hooks
    /// Probe connectivity now, on ``ControlRequest/interface`` or on every probed interface
    /// (`netpathctl probe`); answered when the probes end.
    case probe
}

/// One request line.
package struct ControlRequest: Codable, Sendable, Equatable {
    package var command: ControlCommand
    /// For `probe`: the interface to probe; `nil` probes every interface probing covers.
    package var interface: String?
    /// For `status`: also list the links `[agent] ignore` keeps out (``StatusReport/ignored``).
    /// Only their count otherwise, so that asking a container host for its status costs nothing
    /// per container link.
    package var all: Bool?

    package init(_ command: ControlCommand, interface: String? = nil, all: Bool? = nil) {
        self.command = command
        self.interface = interface
        self.all = all
    }

    /// Decodes one request line (without its newline), as the agent reads it from a client.
    ///
    /// The one decoder of requests, so that the fuzz harness (Fuzz/control-request) tests what
    /// the agent runs.
    package init(line: some Collection<UInt8>) throws {
        self = try JSONDecoder().decode(Self.self, from: Data(line))
    }
}

/// One interface's probe, as `netpathctl probe` shows it: this probe's verdict and evidence,
/// and the interface's state after hysteresis.
package struct ProbeReport: Codable, Sendable, Equatable {
    /// The interface probed.
    package var interface: String
    /// What this one probe found.
    package var verdict: Connectivity
    /// The interface's connectivity after this probe and hysteresis (`up`/`down`).
    package var connectivity: Connectivity
    /// The portal's URL, for a `portal` verdict.
    package var portalURL: String?
    /// The round-trip time in milliseconds, when anything answered.
    package var roundTripMilliseconds: Double?
    /// The fraction of requests without an answer.
    package var loss: Double?
    /// Why: the probe's evidence (`HTTP 302 to http://portal/login`).
    package var evidence: String

    package init(
        interface: String,
        verdict: Connectivity,
        connectivity: Connectivity,
        portalURL: String? = nil,
        roundTripMilliseconds: Double? = nil,
        loss: Double? = nil,
        evidence: String
    ) {
        self.interface = interface
        self.verdict = verdict
        self.connectivity = connectivity
        self.portalURL = portalURL
        self.roundTripMilliseconds = roundTripMilliseconds
        self.loss = loss
        self.evidence = evidence
    }

    enum CodingKeys: String, CodingKey {
        case interface, verdict, connectivity
        case portalURL = "portal_url"
        case roundTripMilliseconds = "rtt_ms"
        case loss, evidence
    }
}

/// The `status` document, also what `netpathctl status --json` prints.
package struct StatusReport: Codable, Sendable, Equatable {
    package var interfaces: [Interface]
    package var paths: [NetworkPath]
    /// The kernel's routes to the internet per family, with their table and rule (`ip route get`).
    package var kernelRoutes: [KernelRoute]
    /// Whether the agent probes connectivity (its configuration has `[connectivity]`); `nil`
    /// from an agent older than `wait-online`, and in `status --local`.
    package var probing: Bool?
    /// How many links `[agent] ignore` keeps out of ``interfaces``.
    package var ignoredCount: Int
    /// Those links, with why, when the request asked for them (`status --all`); `nil` otherwise.
    package var ignored: [IgnoredInterface]?

    /// A report; `ignoredCount` defaults to the number of `ignored` links listed.
    package init(
        interfaces: [Interface],
        paths: [NetworkPath],
        kernelRoutes: [KernelRoute] = [],
        ignoredCount: Int? = nil,
        ignored: [IgnoredInterface]? = nil,
        probing: Bool? = nil
    ) {
        self.interfaces = interfaces
        self.paths = paths
        self.kernelRoutes = kernelRoutes
        self.probing = probing
        self.ignoredCount = ignoredCount ?? ignored?.count ?? 0
        self.ignored = ignored
    }

    enum CodingKeys: String, CodingKey {
        case interfaces, paths
        case kernelRoutes = "kernel_routes"
        case probing
        case ignoredCount = "ignored_count"
        case ignored
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        interfaces = try c.decode([Interface].self, forKey: .interfaces)
        paths = try c.decode([NetworkPath].self, forKey: .paths)
        // An agent older than policy-routing support sends none.
        kernelRoutes = try c.decodeIfPresent([KernelRoute].self, forKey: .kernelRoutes) ?? []
        probing = try c.decodeIfPresent(Bool.self, forKey: .probing)
        // An agent older than `[agent] ignore` ignores nothing; one older than `ignored_count`
        // always lists them.
        ignored = try c.decodeIfPresent([IgnoredInterface].self, forKey: .ignored)
        ignoredCount = try c.decodeIfPresent(Int.self, forKey: .ignoredCount) ?? ignored?.count ?? 0
    }
}

/// One file in the hooks directory, as `netpathctl hooks` shows it.
package struct HookReport: Codable, Sendable, Equatable {
    /// The file name; empty in the report of a directory without files.
    package var name: String
    /// `accepted`, `refused` or `ignored`; for a directory without files, `missing` or `empty`.
    package var status: String
    /// Why it was refused or ignored.
    package var reason: String?
    /// The directory the file is in; absent from agents older than `[[hook_dir]]`.
    package var directory: String?
    /// The directory's dialect (`netpath`, `networkmanager`, `networkd`); absent from older agents.
    package var dialect: String?

    package init(
        name: String,
        status: String,
        reason: String? = nil,
        directory: String? = nil,
        dialect: String? = nil
    ) {
        self.name = name
        self.status = status
        self.reason = reason
        self.directory = directory
        self.dialect = dialect
    }
}

/// The `explain` answer: the text as the agent renders it, and the JSON report.
package struct ExplainReply: Codable, Sendable {
    package var text: String
    package var report: Explanation.Report

    package init(text: String, report: Explanation.Report) {
        self.text = text
        self.report = report
    }
}

/// One reply line. Exactly one of the payloads is set when ``ok`` is true; ``error`` when false.
package struct ControlReply: Codable, Sendable {
    package var ok: Bool
    package var error: String?
    package var status: StatusReport?
    package var explain: ExplainReply?
    package var hooks: [HookReport]?
    /// For `reload`: the configuration now in force.
    package var configuration: String?
    /// For `monitor`: events follow, one per line.
    package var monitoring: Bool?
    /// For `probe`: one report per interface probed.
    package var probes: [ProbeReport]?

    package init(
        ok: Bool,
        error: String? = nil,
        status: StatusReport? = nil,
        explain: ExplainReply? = nil,
        hooks: [HookReport]? = nil,
        configuration: String? = nil,
        monitoring: Bool? = nil,
        probes: [ProbeReport]? = nil
    ) {
        self.ok = ok
        self.error = error
        self.status = status
        self.explain = explain
        self.hooks = hooks
        self.configuration = configuration
        self.monitoring = monitoring
        self.probes = probes
    }

    /// A failure reply.
    package static func failure(_ message: String) -> ControlReply { ControlReply(ok: false, error: message) }

    /// Decodes one reply line (without its newline), as ``ControlClient`` reads it from the agent.
    ///
    /// The one decoder of replies, so that the fuzz harness (Fuzz/control-reply) tests what
    /// clients run.
    package init(line: some Collection<UInt8>) throws {
        self = try JSONDecoder().decode(Self.self, from: Data(line))
    }
}
